// Fuzz target `recordid`: record ids (eight hex digits at a time in one word) and part prefixes.
//
// For any input: the string and byte readers agree with each other and with a plain reference
// (36 bytes, dashes at 8, 13, 18 and 23, hex digits of either case elsewhere). An accepted id's
// raw value is the input in upper case, reads back as the same id, in lower case too, and its
// written bytes agree; ids order as their raw values. A part prefix read from the input round-trips,
// and the prefixes of an id's first digits contain it.

@_cdecl("SnapshotFormatFuzz_recordid")
func fuzzRecordID(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    RecordIDFuzzTarget.check(fuzzBytes(data, size))
    return 0
}

enum RecordIDFuzzTarget {
    static func check(_ input: [UInt8]) {
        let parsed = input.withUnsafeBufferPointer { RecordID(utf8: $0) }
        if let text = String(validating: input, as: UTF8.self) {
            fuzzCheck(RecordID(text) == parsed, "the string and byte readers disagree on \(fuzzShown(input))")
        }
        fuzzCheck((parsed != nil) == isReferenceID(input), "\(fuzzShown(input)): read \(parsed != nil), reference \(isReferenceID(input))")
        if let parsed { checkAccepted(parsed, input: input) }
        // Any 36 bytes can be made an id: digits taken from the input, folded into hex.
        let made = madeID(from: input)
        checkAccepted(made.id, input: made.text)
        checkPrefixes(of: made.id, input: input)
        checkOrder(made.id, input: input)
    }

    private static func isReferenceID(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            let isDash = byte == UInt8(ascii: "-")
            guard [8, 13, 18, 23].contains(index) ? isDash : isHexDigit(byte) else { return false }
        }
        return true
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }

    private static func upperCased(_ bytes: [UInt8]) -> [UInt8] {
        bytes.map { (97...122).contains($0) ? $0 - 32 : $0 }
    }

    private static func checkAccepted(_ id: RecordID, input: [UInt8]) {
        let raw = id.rawValue
        fuzzCheck(Array(raw.utf8) == upperCased(input), "\(fuzzShown(input)) reads as \(raw)")
        fuzzCheck(RecordID(raw) == id, "\(raw) does not read back as itself")
        fuzzCheck(RecordID(raw.lowercased()) == id, "\(raw) in lower case is another id")
        fuzzCheck(id.withWrittenBytes { Array($0) } == Array(raw.utf8), "written bytes of \(raw) differ")
        var appended: [UInt8] = [1]
        id.append(to: &appended)
        fuzzCheck(appended == [1] + Array(raw.utf8), "appended bytes of \(raw) differ")
        fuzzCheck(id.description == raw, "description of \(raw) differs")
    }

    /// A valid id made of the input's bytes: each folded onto a hex digit of either case.
    private static func madeID(from input: [UInt8]) -> (id: RecordID, text: [UInt8]) {
        let digits = Array("0123456789abcdefABCDEF".utf8)
        var text: [UInt8] = []
        for index in 0..<36 {
            if [8, 13, 18, 23].contains(index) {
                text.append(UInt8(ascii: "-"))
            } else {
                let byte = index < input.count ? input[index] : UInt8(truncatingIfNeeded: index &* 37 &+ input.count)
                text.append(digits[Int(byte) % digits.count])
            }
        }
        guard let id = text.withUnsafeBufferPointer({ RecordID(utf8: $0) }) else {
            fatalError("the valid id \(fuzzShown(text)) is refused")
        }
        return (id, text)
    }

    private static func checkPrefixes(of id: RecordID, input: [UInt8]) {
        let raw = id.rawValue
        for digits in 0...PartPrefix.maximumDigits {
            let prefix = PartPrefix(of: id, digits: digits)
            fuzzCheck(prefix.rawValue == String(raw.prefix(digits)), "prefix \(prefix.rawValue) of \(raw)")
            fuzzCheck(prefix.contains(id), "prefix \(prefix.rawValue) does not contain \(raw)")
            if digits > 0 {
                fuzzCheck(PartPrefix(prefix.rawValue) == prefix, "prefix \(prefix.rawValue) does not read back")
                fuzzCheck(prefix.parent.map { prefix.isWithin($0) && $0 < prefix } == true, "parent of \(prefix.rawValue)")
            }
            fuzzCheck(prefix.children.filter { $0.contains(id) }.count == (digits < 4 ? 1 : 0), "children of \(prefix)")
        }
        // A part value read from the input's first bytes.
        for length in 0...min(5, input.count) {
            let text = String(decoding: input.prefix(length), as: UTF8.self)
            let isReference =
                (1...4).contains(length) && input.prefix(length).allSatisfy { (48...57).contains($0) || (65...70).contains($0) }
            let prefix = PartPrefix(text)
            fuzzCheck((prefix != nil) == isReference, "part \(fuzzShown(input.prefix(length))): read \(prefix != nil)")
            if let prefix {
                fuzzCheck(prefix.rawValue == text, "part \(text) reads back as \(prefix.rawValue)")
                fuzzCheck(prefix.contains(id) == raw.hasPrefix(text), "part \(text) and id \(raw)")
            }
        }
    }

    /// Ids order as their raw values' bytes.
    private static func checkOrder(_ id: RecordID, input: [UInt8]) {
        let other = madeID(from: Array(input.dropFirst(36))).id
        let byBytes = id.rawValue.utf8.lexicographicallyPrecedes(other.rawValue.utf8)
        fuzzCheck((id < other) == byBytes, "\(id) < \(other) is \(id < other)")
        fuzzCheck((id == other) == (id.rawValue == other.rawValue), "\(id) == \(other) is \(id == other)")
        fuzzCheck(id != other || id.hashValue == other.hashValue, "equal ids \(id) hash differently")
    }
}
