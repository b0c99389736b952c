/// RFC 8785 (JSON Canonicalization Scheme) serialization.
extension JSONValue {
    /// RFC 8785 canonical bytes: UTF-8, no BOM, no whitespace, no trailing newline.
    ///
    /// A number that is NaN or infinite cannot be canonicalized (RFC 8785 makes it an error);
    /// such a value is a programming error and stops the program. Values from ``StrictJSON`` never hold one.
    public var canonicalBytes: [UInt8] {
        var buffer: [UInt8] = []
        writeCanonical(into: &buffer)
        return buffer
    }

    /// The RFC 8785 canonical form as a string.
    public var canonicalString: String {
        String(decoding: canonicalBytes, as: UTF8.self)
    }

    /// Append canonical bytes to a buffer (for speed when serializing many values).
    public func writeCanonical(into buffer: inout [UInt8]) {
        write(into: &buffer, interchangeable: false)
    }

    /// The bytes this device writes where other readers read them (snapshot files, `syncctl`
    /// output): RFC 8785 in every respect but one. An integral number beyond ±(2^53−1), which
    /// RFC 8785 writes as plain digits (`1e20` as `100000000000000000000`), gets an exponent
    /// (`1e+20`), because I-JSON readers refuse such digits as an integer out of range.
    public var interchangeBytes: [UInt8] {
        var buffer: [UInt8] = []
        write(into: &buffer, interchangeable: true)
        return buffer
    }

    /// ``interchangeBytes`` as a string.
    public var interchangeString: String {
        String(decoding: interchangeBytes, as: UTF8.self)
    }

    private func write(into buffer: inout [UInt8], interchangeable: Bool) {
        switch self {
        case .null:
            buffer.append(contentsOf: "null".utf8)
        case .bool(let flag):
            buffer.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .number(let number):
            CanonicalJSON.writeNumber(number, into: &buffer, largeIntegersWithExponent: interchangeable)
        case .string(let text):
            CanonicalJSON.writeString(text, into: &buffer)
        case .array(let elements):
            buffer.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { buffer.append(UInt8(ascii: ",")) }
                element.write(into: &buffer, interchangeable: interchangeable)
            }
            buffer.append(UInt8(ascii: "]"))
        case .object(let object):
            buffer.append(UInt8(ascii: "{"))
            let sorted = object.members.sorted { CanonicalJSON.keyPrecedes($0.key, $1.key) }
            for (i, member) in sorted.enumerated() {
                if i > 0 { buffer.append(UInt8(ascii: ",")) }
                CanonicalJSON.writeString(member.key, into: &buffer)
                buffer.append(UInt8(ascii: ":"))
                member.value.write(into: &buffer, interchangeable: interchangeable)
            }
            buffer.append(UInt8(ascii: "}"))
        }
    }
}

/// The pieces of RFC 8785 serialization: key order, string escaping and number formatting.
public enum CanonicalJSON {
    /// Whether `lhs` sorts before `rhs` by their UTF-16 code units, as RFC 8785 orders object members.
    public static func keyPrecedes(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.unicodeScalars.makeIterator()
        var right = rhs.unicodeScalars.makeIterator()
        while true {
            guard let a = left.next() else { return right.next() != nil }
            guard let b = right.next() else { return false }
            if a != b { return utf16Rank(a) < utf16Rank(b) }
        }
    }

    /// A number that orders scalars as their UTF-16 forms do: U+E000…U+FFFF come after every
    /// supplementary scalar, whose first code unit is a surrogate (D800…DBFF).
    private static func utf16Rank(_ scalar: Unicode.Scalar) -> UInt32 {
        (0xE000...0xFFFF).contains(scalar.value) ? scalar.value + 0x20_0000 : scalar.value
    }

    /// Appends `text` as an RFC 8785 string: quotes, short escapes, `\u00xx` for other controls, the rest literal.
    public static func writeString(_ text: String, into buffer: inout [UInt8]) {
        var text = text  // withUTF8 needs a mutable copy; it does not copy the bytes of a native string.
        text.withUTF8 { writeString(utf8: $0, into: &buffer) }
    }

    /// Appends the string whose (valid) UTF-8 is `bytes` as an RFC 8785 string.
    static func writeString(utf8 bytes: UnsafeBufferPointer<UInt8>, into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        var runStart = 0
        var i = 0
        while true {
            i = firstToEscape(in: bytes, from: i)
            guard i < bytes.count else { break }
            let byte = bytes[i]
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
            runStart = i + 1
            buffer.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): buffer.append(byte)
            case 0x08: buffer.append(UInt8(ascii: "b"))
            case 0x09: buffer.append(UInt8(ascii: "t"))
            case 0x0A: buffer.append(UInt8(ascii: "n"))
            case 0x0C: buffer.append(UInt8(ascii: "f"))
            case 0x0D: buffer.append(UInt8(ascii: "r"))
            default:
                buffer.append(contentsOf: "u00".utf8)
                buffer.append(hexDigits[Int(byte >> 4)])
                buffer.append(hexDigits[Int(byte & 0xF)])
            }
            i += 1
        }
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        buffer.append(UInt8(ascii: "\""))
    }

    /// The index of the first byte from `start` on that a string must escape (a quote, a
    /// backslash or a control byte), or `bytes.count`: eight bytes at a time, then the first
    /// flagged byte of the word (the lowest is exact), as the parser skips plain text. Long
    /// strings with escapes are written from the decoded text, so this runs over all of it.
    @inline(__always)
    static func firstToEscape(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return bytes.count }
        var at = start
        while at + 8 <= bytes.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + at).loadUnaligned(as: UInt64.self))
            let flagged = StrictJSONParser.quotesBackslashesAndControls(in: word)
            if flagged != 0 { return at + flagged.trailingZeroBitCount >> 3 }
            at += 8
        }
        while at < bytes.count {
            let byte = bytes[at]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return at }
            at += 1
        }
        return at
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
