/// A JSON value as I-JSON (RFC 7493) allows it.
///
/// Objects keep their members in document order. Equality and hashing are by meaning: the order
/// of object members does not matter, strings compare by their UTF-8 bytes (never by Swift's
/// canonical equivalence, so NFC and NFD spellings differ), and numbers compare as `Double`
/// (so `0` equals `-0`).
public enum JSONValue: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number; always finite when parsed, and it must be finite to be serialized.
    case number(Double)
    /// A string of Unicode scalars (never a lone surrogate).
    case string(String)
    /// An array, in order.
    case array([JSONValue])
    /// An object, members in document order.
    case object(JSONObject)

    /// Whether two values mean the same JSON: member order ignored, strings byte for byte.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        default: return false
        }
    }

    /// Hashes the value consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .bool(let flag):
            hasher.combine(1 as UInt8)
            hasher.combine(flag)
        case .number(let number):
            hasher.combine(2 as UInt8)
            hasher.combine(number)  // Double's hash already treats 0 and -0 alike.
        case .string(let text):
            hasher.combine(3 as UInt8)
            UTF8ByteKey.hashBytes(of: text, into: &hasher)
        case .array(let elements):
            hasher.combine(4 as UInt8)
            hasher.combine(elements)
        case .object(let object):
            hasher.combine(5 as UInt8)
            hasher.combine(object)
        }
    }
}

/// The members of a JSON object in document order, keys unique by their UTF-8 bytes.
public struct JSONObject: Hashable, Sendable, Sequence {
    /// One member: a key and its value.
    public typealias Element = (key: String, value: JSONValue)

    // Objects up to this size are searched linearly; larger ones keep a key index.
    static let indexThreshold = 8

    private var storage: [Element]
    private var index: [UTF8ByteKey: Int]?

    /// The members in order; setting them requires keys unique by UTF-8 bytes.
    public var members: [Element] {
        get { storage }
        set {
            storage = newValue
            index = Self.makeIndex(storage)
        }
    }

    /// An empty object.
    public init() {
        storage = []
        index = nil
    }

    /// An object with these members in this order; the keys must be unique by UTF-8 bytes.
    public init(_ members: [Element]) {
        storage = members
        index = Self.makeIndex(members)
    }

    /// An object whose keys the caller has already checked, with a ready index when it is large.
    init(uncheckedMembers members: [Element], index: [UTF8ByteKey: Int]?) {
        storage = members
        self.index = members.count > Self.indexThreshold ? (index ?? Self.makeIndex(members)) : nil
    }

    /// The value of the member whose key has the same UTF-8 bytes; setting `nil` removes it,
    /// setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { storage[$0].value } }
        set {
            if let at = position(of: key) {
                if let newValue {
                    storage[at].value = newValue
                } else {
                    storage.remove(at: at)
                    index = Self.makeIndex(storage)
                }
            } else if let newValue {
                storage.append((key: key, value: newValue))
                if index != nil {
                    index![UTF8ByteKey(key)] = storage.count - 1
                } else if storage.count > Self.indexThreshold {
                    index = Self.makeIndex(storage)
                }
            }
        }
    }

    /// The number of members.
    public var count: Int { storage.count }

    /// The keys in member order.
    public var keys: [String] { storage.map(\.key) }

    /// Iterates the members in order.
    public func makeIterator() -> IndexingIterator<[Element]> { storage.makeIterator() }

    /// Whether both objects have the same keys (by UTF-8 bytes) with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.storage.count == rhs.storage.count else { return false }
        for member in lhs.storage {
            guard let other = rhs[member.key], other == member.value else { return false }
        }
        return true
    }

    /// Hashes the members independently of their order.
    public func hash(into hasher: inout Hasher) {
        var combined: UInt = 0
        for member in storage {
            var memberHasher = Hasher()
            UTF8ByteKey.hashBytes(of: member.key, into: &memberHasher)
            memberHasher.combine(member.value)
            combined &+= UInt(bitPattern: memberHasher.finalize())
        }
        hasher.combine(storage.count)
        hasher.combine(combined)
    }

    private func position(of key: String) -> Int? {
        if let index { return index[UTF8ByteKey(key)] }
        return storage.firstIndex { $0.key.utf8.elementsEqual(key.utf8) }
    }

    private static func makeIndex(_ members: [Element]) -> [UTF8ByteKey: Int]? {
        if members.count <= indexThreshold {
            for i in members.indices {
                for j in members.indices where j > i {
                    precondition(
                        !members[i].key.utf8.elementsEqual(members[j].key.utf8),
                        "JSONObject: duplicate key \"\(members[i].key)\"")
                }
            }
            return nil
        }
        var index = [UTF8ByteKey: Int](minimumCapacity: members.count)
        for (i, member) in members.enumerated() {
            let previous = index.updateValue(i, forKey: UTF8ByteKey(member.key))
            precondition(previous == nil, "JSONObject: duplicate key \"\(member.key)\"")
        }
        return index
    }
}

/// A string that is equal and hashed by its UTF-8 bytes rather than by canonical equivalence.
struct UTF8ByteKey: Hashable, Sendable {
    var string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: UTF8ByteKey, rhs: UTF8ByteKey) -> Bool {
        lhs.string.utf8.elementsEqual(rhs.string.utf8)
    }

    func hash(into hasher: inout Hasher) {
        Self.hashBytes(of: string, into: &hasher)
    }

    /// Feeds the UTF-8 bytes of `text` (and their count) to `hasher`.
    static func hashBytes(of text: String, into hasher: inout Hasher) {
        var text = text  // withUTF8 makes the bytes contiguous (a no-op for native strings).
        text.withUTF8 { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
    }
}
