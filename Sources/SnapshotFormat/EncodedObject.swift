import Glibc

/// A JSON object held as its interchange bytes, never as a tree.
///
/// The bytes are RFC 8785 (JCS) except that an integral number beyond ±(2^53−1) is written with
/// an exponent (`1e+20`), exactly what ``JSONValue/interchangeBytes`` writes and what a published
/// file carries. That serialization is one-to-one with the value, so two objects are equal as JSON
/// exactly when their bytes are equal: comparing, hashing and publishing `fields` are byte
/// operations, and a tree is built only when someone asks for ``object``.
public struct EncodedObject: Hashable, Sendable {
    /// The interchange bytes of the object, `{` to `}`.
    public let bytes: [UInt8]

    /// The empty object `{}`.
    public static let empty = EncodedObject(trustedBytes: [UInt8(ascii: "{"), UInt8(ascii: "}")])

    /// The interchange bytes of `object`.
    public init(_ object: JSONObject) {
        bytes = JSONValue.object(object).interchangeBytes
    }

    /// Bytes the caller guarantees are the interchange serialization of an object.
    init(trustedBytes: [UInt8]) {
        bytes = trustedBytes
    }

    /// Whether the object has no members.
    public var isEmpty: Bool { bytes.count == 2 }

    /// How deep arrays and objects nest in it, the object itself being level 1.
    public var nestingDepth: Int {
        var depth = 0
        var deepest = 0
        var strings = JSONStrings()
        for byte in bytes {
            if strings.take(byte) { continue }
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    /// The object as a tree, parsed from its bytes (they are valid I-JSON by construction).
    public var object: JSONObject {
        do {
            guard case .object(let object) = try StrictJSON.parse(bytes) else {
                preconditionFailure("EncodedObject holds a non-object")
            }
            return object
        } catch {
            preconditionFailure("EncodedObject holds invalid JSON: \(error)")
        }
    }

    public static func == (lhs: EncodedObject, rhs: EncodedObject) -> Bool {
        // With memcmp: Array's == compares byte by byte, which was 1.3 % of a first merge where
        // the devices' copies of a record are written differently (so each is parsed and their
        // fields compared).
        lhs.bytes.count == rhs.bytes.count
            && lhs.bytes.withUnsafeBytes { left in
                rhs.bytes.withUnsafeBytes { right in
                    left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
                }
            }
    }

    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// Follows JSON text byte by byte and tells the bytes of its strings (their quotes included)
/// from the rest, for scans that look at the structure only.
public struct JSONStrings: Sendable {
    private var inString = false
    private var escaped = false

    public init() {}

    /// Takes the next byte: true when it belongs to a string.
    public mutating func take(_ byte: UInt8) -> Bool {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            return true
        }
        if byte == UInt8(ascii: "\"") {
            inString = true
            return true
        }
        return false
    }
}
