import Glibc

/// The fast path of reading a record: one pass over its bytes straight into a
/// ``ReadOnly/Version``, with `fields` kept as interchange bytes and no tree built.
///
/// It handles the shape nearly every record has (known keys with values of the right kind, no
/// unknown keys, no nulls); for anything else it says "irregular" and the caller reads that
/// record with the tree parser and the validation in ``ReadOnly/Version/init(validating:)``,
/// which give every rule's message. It is never more lenient than that path: a record it
/// accepts gives exactly the versions the tree path gives, which tests check over the
/// conformance vectors and generated folders.
extension StrictJSONParser {
    /// Reads the record object at `position` (its `{`), appending its version and then its
    /// conflict entries to `versions`. Returns false, with `position` after the record and
    /// nothing appended, when the record is irregular and must be read by the tree path.
    ///
    /// - Throws: when the bytes are not valid I-JSON (the whole file is then invalid).
    mutating func scanRecord(into versions: inout [ReadOnly.Version], depth: Int) throws(JSONParseError) -> Bool {
        let first = versions.count
        var entries: [ReadOnly.Version] = []
        guard let version = try scanVersion(depth: depth, entries: &entries) else {
            return false
        }
        versions.append(version)
        for entry in entries {
            guard entry.id == version.id else {
                versions.removeSubrange(first...)
                return false
            }
            versions.append(entry)
        }
        return true
    }

    /// Scans one version object; nil when irregular. A record's conflict entries go to `entries`
    /// (`entries` nil: this is an entry, and any `conflicts` key of its own is irregular).
    private mutating func scanVersion(depth: Int, entries: inout [ReadOnly.Version]) throws(JSONParseError)
        -> ReadOnly.Version?
    {
        try scanVersion(depth: depth, entries: &entries, isEntry: false)
    }

    private mutating func scanVersion(depth: Int, entries: inout [ReadOnly.Version], isEntry: Bool)
        throws(JSONParseError) -> ReadOnly.Version?
    {
        let depth = depth + 1
        if depth + baseDepth > StrictJSON.maximumDepth {
            throw JSONParseError.tooDeep(at: position)
        }
        position += 1  // {
        var regular = true
        var seen: UInt16 = 0
        var id: RecordID?
        var type: String?
        var schemaVersion: Int64 = 1
        var lastModified: Timestamp?
        var modifiedBy: DeviceID?
        var vector = VersionVector()
        var deleted = false
        var fields = EncodedObject.empty
        var unknown: [JSONObject.Element] = []
        var unknownNames: Set<[UInt8]> = []
        skipWhitespace()
        guard position < input.count else { throw truncated() }
        if input[position] == UInt8(ascii: "}") {
            position += 1
            return nil
        }
        while true {
            skipWhitespace()
            guard position < input.count else { throw truncated() }
            guard input[position] == UInt8(ascii: "\"") else {
                throw unexpectedCharacter(context: " (expected a key in double quotes)")
            }
            let keyOffset = position
            let (key, name) = try scanKey()
            if let key {
                // A repeated key makes the file invalid JSON.
                if seen & (1 << key.rawValue) != 0 { throw JSONParseError(offset: keyOffset, reason: "duplicate key") }
                seen |= 1 << key.rawValue
            } else if !unknownNames.insert(name).inserted {
                throw JSONParseError(offset: keyOffset, reason: "duplicate key")
            }
            skipWhitespace()
            guard position < input.count else { throw truncated() }
            guard input[position] == UInt8(ascii: ":") else { throw unexpectedCharacter(context: " (expected ':')") }
            position += 1
            skipWhitespace()
            guard position < input.count else { throw truncated() }
            let byte = input[position]
            if byte == UInt8(ascii: "n") {
                // null means the same as the key being absent, on every key, known or not.
                _ = try parseLiteral("null", .null)
            } else if regular {
                switch key {
                case .id?:
                    if byte == UInt8(ascii: "\"") {
                        id = try readText { RecordID(utf8: $0) }
                        if id == nil { regular = false }
                    } else {
                        regular = false
                    }
                case .type?:
                    if byte == UInt8(ascii: "\""),
                        let text = try readText({ bytes -> String? in
                            // Its Unicode scalars: the bytes that do not continue one (valid UTF-8).
                            let length = bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
                            return (1...128).contains(length) ? String(decoding: bytes, as: UTF8.self) : nil
                        })
                    {
                        type = text
                    } else {
                        regular = false
                    }
                case .schemaVersion?:
                    if byte == UInt8(ascii: "-") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")),
                        let number = try parseNumber().exactInteger, number >= 1
                    {
                        schemaVersion = number
                    } else {
                        regular = false
                    }
                case .lastModified?:
                    if byte == UInt8(ascii: "\""), let stamp = try readText({ Timestamp(parsingUTF8: $0) }) {
                        lastModified = stamp
                    } else {
                        regular = false
                    }
                case .modifiedBy?:
                    if byte == UInt8(ascii: "\""),
                        let device = try readText(DeviceID.init(utf8:))
                    {
                        modifiedBy = device
                    } else {
                        regular = false
                    }
                case .versionVector?:
                    if byte == UInt8(ascii: "{"), let counts = try scanVector(depth: depth) {
                        vector = counts
                    } else {
                        regular = false
                    }
                case .deleted?:
                    if byte == UInt8(ascii: "t") {
                        _ = try parseLiteral("true", .bool(true))
                        deleted = true
                    } else if byte == UInt8(ascii: "f") {
                        _ = try parseLiteral("false", .bool(false))
                    } else {
                        regular = false
                    }
                case .fields?:
                    if byte == UInt8(ascii: "{"), fieldsAreInterchange, let end = endOfElement(from: position) {
                        fields = EncodedObject(trustedBytes: Array(input[position..<end]))
                        position = end
                    } else if byte == UInt8(ascii: "{") {
                        // Written into a reused buffer, then copied once into an array of the right size.
                        var buffer = fieldsBuffer
                        fieldsBuffer = []
                        buffer.removeAll(keepingCapacity: true)
                        try appendInterchange(into: &buffer, depth: depth)
                        fields = EncodedObject(trustedBytes: buffer.withUnsafeBufferPointer { Array($0) })
                        fieldsBuffer = buffer
                    } else {
                        regular = false
                    }
                case .conflicts?:
                    if byte == UInt8(ascii: "[") {
                        // An entry's own `conflicts` may only be empty.
                        regular = isEntry ? try scanEmptyArray(depth: depth) : try scanEntries(into: &entries, depth: depth)
                    } else {
                        regular = false
                    }
                case nil:
                    // Kept verbatim (a device that does not know a newer key must not drop it).
                    let outer = baseDepth
                    baseDepth = outer + depth
                    defer { baseDepth = outer }
                    let value = try parseValue()
                    if value != .null { unknown.append((String(decoding: name, as: UTF8.self), value)) }
                }
            }
            if !regular, position < input.count, !isAtValueEnd {
                // The value is not read yet (or only partly): validate the rest without keeping it.
                try skipValue(depth: depth)
            }
            guard try continues(closedBy: UInt8(ascii: "}")) else { break }
        }
        guard regular, let id, let type else { return nil }
        return ReadOnly.Version(
            id: id, type: type, schemaVersion: schemaVersion, lastModified: lastModified, modifiedBy: modifiedBy,
            versionVector: vector, deleted: deleted, encodedFields: fields,
            unknownKeys: unknown.isEmpty ? JSONObject() : JSONObject(unknown))
    }

    /// Reads an empty array (`[]`, whitespace allowed) at `position`; false, with `position` after
    /// the array, when it holds anything.
    private mutating func scanEmptyArray(depth: Int) throws(JSONParseError) -> Bool {
        let start = position
        position += 1
        skipWhitespace()
        if position < input.count, input[position] == UInt8(ascii: "]") {
            position += 1
            return true
        }
        position = start
        try skipValue(depth: depth)
        return false
    }

    /// Reads the key at `position`: the known key it names (escaped or not) and no bytes, or nil
    /// and its bytes.
    private mutating func scanKey() throws(JSONParseError) -> (RecordKey?, [UInt8]) {
        if let bytes = try scanPlainString() {
            if let key = RecordKey(named: bytes) { return (key, []) }
            return (nil, Array(bytes))
        }
        let text = Array(try parseString(isKey: true).utf8)
        if let key = text.withUnsafeBufferPointer(RecordKey.init(named:)) { return (key, []) }
        return (nil, text)
    }

    /// Reads the string at `position` and returns what `body` makes of its text's bytes (unescaped).
    private mutating func readText<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T?) throws(JSONParseError) -> T? {
        if let plain = try scanPlainString() { return body(plain) }
        // Escaped: parseString leaves the text in `scratch`.
        _ = try parseString(isKey: false)
        return scratch.withUnsafeBufferPointer(body)
    }

    /// Whether `position` is just after a complete value: at a separator, a closing bracket or
    /// whitespace. Every typed read above either consumes its whole value or none of it.
    private var isAtValueEnd: Bool {
        var at = position
        while at < input.count, input[at] == 0x20 || input[at] == 0x0A || input[at] == 0x0D || input[at] == 0x09 {
            at += 1
        }
        guard at < input.count else { return false }
        return input[at] == UInt8(ascii: ",") || input[at] == UInt8(ascii: "}")
    }

    /// Validates and discards the value at `position`.
    private mutating func skipValue(depth: Int) throws(JSONParseError) {
        scratch.removeAll(keepingCapacity: true)
        var discarded = scratch
        scratch = []
        defer { scratch = discarded }
        try appendInterchange(into: &discarded, depth: depth)
    }

    /// The record keys the format defines.
    enum RecordKey: Int {
        case id, type, schemaVersion, lastModified, modifiedBy, versionVector, deleted, fields, conflicts

        /// The key these bytes name, if any. Every record has six or more keys, so this is on the
        /// hot path: by length, then the bytes (a table of names would retain one per key read).
        init?(named bytes: UnsafeBufferPointer<UInt8>) {
            func named(_ name: StaticString) -> Bool {
                memcmp(bytes.baseAddress!, name.utf8Start, bytes.count) == 0  // (lengths checked first)
            }
            switch bytes.count {
            case 2 where named("id"): self = .id
            case 4 where named("type"): self = .type
            case 6 where named("fields"): self = .fields
            case 7 where named("deleted"): self = .deleted
            case 9 where named("conflicts"): self = .conflicts
            case 10 where named("modifiedBy"): self = .modifiedBy
            case 12 where named("lastModified"): self = .lastModified
            case 13 where named("schemaVersion"): self = .schemaVersion
            case 13 where named("versionVector"): self = .versionVector
            default: return nil
            }
        }
    }

    /// Reads the string at `position` when it has no escapes (its bytes are then its text);
    /// nil, with `position` unchanged, when it has escapes.
    private mutating func scanPlainString() throws(JSONParseError) -> UnsafeBufferPointer<UInt8>? {
        let start = position + 1
        let i = try skippingPlainText(from: start)
        guard i < input.count else { throw truncated() }
        guard input[i] == UInt8(ascii: "\"") else { return nil }  // a backslash or a control byte
        position = i + 1
        return UnsafeBufferPointer(rebasing: input[start..<i])
    }

    /// Reads a version vector object; nil (with `position` after the object) when irregular.
    private mutating func scanVector(depth: Int) throws(JSONParseError) -> VersionVector? {
        let start = position
        position += 1
        skipWhitespace()
        if position < input.count, input[position] == UInt8(ascii: "}") {
            position += 1
            return VersionVector()
        }
        var entries: [VersionVector.Entry] = []
        while true {
            skipWhitespace()
            guard position < input.count, input[position] == UInt8(ascii: "\""), let device = try scanDeviceKey() else {
                break
            }
            skipWhitespace()
            guard position < input.count, input[position] == UInt8(ascii: ":") else { break }
            position += 1
            skipWhitespace()
            guard position < input.count,
                input[position] == UInt8(ascii: "-")
                    || (input[position] >= UInt8(ascii: "0") && input[position] <= UInt8(ascii: "9")),
                let count = try parseNumber().exactInteger, (1...VersionVector.maximumCount).contains(count)
            else { break }
            entries.append(VersionVector.Entry(device: device, count: count))
            // Anything but a comma or the end of the object is irregular.
            guard let more = try? continues(closedBy: UInt8(ascii: "}")) else { break }
            if !more {
                // A device named twice (a duplicate key: invalid JSON, reported below) sits next to
                // itself once the entries are sorted, as the vector sorts them anyway. Looking each
                // device up among those before it was quadratic: 100,000 devices took 35 s.
                let vector = VersionVector(unsortedEntries: consume entries)
                if zip(vector.entries, vector.entries.dropFirst()).contains(where: { $0.device == $1.device }) { break }
                return vector
            }
        }
        // Irregular: validate the whole object from its start.
        position = start
        try skipValue(depth: depth)
        return nil
    }

    /// Reads the key at `position` as a device ID, escaped or not (`"l\u0061ptop"` is `laptop`, as
    /// the tree reads it); nil, with `position` after the key, when it is not a valid device ID.
    private mutating func scanDeviceKey() throws(JSONParseError) -> DeviceID? {
        // Its bytes when it has no escapes; else decoded into `scratch` (as a key, for the tree's messages).
        if let plain = try decodeString(isKey: true) { return DeviceID(utf8: plain) }
        return scratch.withUnsafeBufferPointer { DeviceID(utf8: $0) }
    }

    /// Reads a record's `conflicts` array of entries; false (with `position` after the array) when
    /// any entry is irregular.
    private mutating func scanEntries(into entries: inout [ReadOnly.Version], depth: Int) throws(JSONParseError)
        -> Bool
    {
        let start = position
        position += 1
        skipWhitespace()
        if position < input.count, input[position] == UInt8(ascii: "]") {
            position += 1
            return true
        }
        var none: [ReadOnly.Version] = []
        while true {
            skipWhitespace()
            guard position < input.count, input[position] == UInt8(ascii: "{"),
                let entry = try scanVersion(depth: depth + 1, entries: &none, isEntry: true)
            else { break }
            entries.append(entry)
            skipWhitespace()
            guard position < input.count else { throw truncated() }
            if input[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if input[position] == UInt8(ascii: "]") {
                position += 1
                return true
            }
            break
        }
        entries.removeAll()
        position = start
        try skipValue(depth: depth)
        return false
    }
}

extension StrictJSONParser {
    /// Where the record element starting at `position` ends, and its id: the value of its
    /// top-level `"id"` member when that is a string without escapes holding a UUID (nil
    /// otherwise). Found by structure alone, as ``endOfElement()`` finds the end; nil when the
    /// input ends first or the element is not an object of the usual shape.
    func endOfRecord() -> (end: Int, id: RecordID?)? {
        // Positions in locals, not a copy of the parser: copying it retains and releases each of
        // its working arrays, once per record of every file split.
        var at = position
        let count = input.count
        func skipWhitespace() {
            while at < count, input[at] == 0x20 || input[at] == 0x0A || input[at] == 0x0D || input[at] == 0x09 {
                at += 1
            }
        }
        guard at < count, input[at] == UInt8(ascii: "{") else {
            return endOfElement(from: at).map { ($0, nil) }
        }
        at += 1
        var id: RecordID?
        skipWhitespace()
        if at < count, input[at] == UInt8(ascii: "}") { return (at + 1, nil) }
        while true {
            skipWhitespace()
            guard at < count, input[at] == UInt8(ascii: "\""), let keyEnd = endOfElement(from: at) else { return nil }
            let isID = keyEnd - at == 4 && input[at + 1] == UInt8(ascii: "i") && input[at + 2] == UInt8(ascii: "d")
            at = keyEnd
            skipWhitespace()
            guard at < count, input[at] == UInt8(ascii: ":") else { return nil }
            at += 1
            skipWhitespace()
            guard at < count, let valueEnd = endOfElement(from: at) else { return nil }
            if isID, input[at] == UInt8(ascii: "\""), valueEnd - at == 38 {
                id = RecordID(utf8: UnsafeBufferPointer(rebasing: input[(at + 1)..<(valueEnd - 1)]))
            }
            at = valueEnd
            skipWhitespace()
            guard at < count else { return nil }
            switch input[at] {
            case UInt8(ascii: ","): at += 1
            case UInt8(ascii: "}"): return (at + 1, id)
            default: return nil
            }
        }
    }

    /// Where the element starting at `position` ends, found by structure alone (brackets, and
    /// strings with their escapes), validating nothing; nil when the input ends first.
    ///
    /// Only for finding an element's bytes to compare with bytes read before: for valid input
    /// this is the element's true end, and bytes that are not equal to a known element's are
    /// read in full anyway.
    func endOfElement() -> Int? { endOfElement(from: position) }

    /// ``endOfElement()`` for the element starting at `start`.
    func endOfElement(from start: Int) -> Int? {
        var at = start
        var depth = 0
        let count = input.count
        guard let base = input.baseAddress else { return nil }
        let raw = UnsafeRawPointer(base)
        while at < count {
            let byte = input[at]
            switch byte {
            case UInt8(ascii: "\""):
                at += 1
                while true {
                    // Eight bytes at a time while none of them is a quote or a backslash, then
                    // straight to the first that is (the lowest flagged byte of the word is exact);
                    // past an escape, on again eight at a time (a string of \u escapes, as an
                    // ASCII-only writer spells all text but ASCII, walked a byte at a time after
                    // its first escape took a fifth of a first merge).
                    while at + 8 <= count {
                        let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self))
                        let found =
                            Self.zeroBytes(in: word ^ Self.repeated(0x22)) | Self.zeroBytes(in: word ^ Self.repeated(0x5C))
                        if found != 0 {
                            at += found.trailingZeroBitCount >> 3
                            break
                        }
                        at += 8
                    }
                    while at < count, input[at] != UInt8(ascii: "\""), input[at] != UInt8(ascii: "\\") { at += 1 }
                    guard at < count else { return nil }
                    guard input[at] == UInt8(ascii: "\\") else { break }
                    at += 2
                }
                at += 1
                if depth == 0 { return at }
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return at }
                depth -= 1
                if depth == 0 { return at + 1 }
            case _ where depth > 0:
                // Inside an array or object only quotes and brackets matter (not commas, colons,
                // whitespace, numbers or literals): on to the next one, eight bytes at a time.
                // Arrays of numbers and indented files are long runs of such bytes.
                at += 1
                while at + 8 <= count {
                    let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self))
                    let found = Self.quotesAndBrackets(in: word)
                    if found != 0 {
                        at += found.trailingZeroBitCount >> 3
                        break
                    }
                    at += 8
                }
                continue
            case UInt8(ascii: ","), 0x20, 0x0A, 0x0D, 0x09:
                return at  // at the top level: the element ends here
            default:
                break
            }
            at += 1
        }
        return depth == 0 && at > start ? at : nil
    }

    /// The top bit of each byte of `word` (in memory order, from the low end) that is a quote, a
    /// bracket or a brace, and possibly of bytes after the first such one; zero when there is
    /// none (``zeroBytes(in:)`` on the word XORed with each: `[` and `]` fold onto `{` and `}`
    /// with the 0x20 bit set, and no other byte does).
    @inline(__always)
    static func quotesAndBrackets(in word: UInt64) -> UInt64 {
        let folded = word | repeated(0x20)
        return zeroBytes(in: folded ^ repeated(UInt8(ascii: "{"))) | zeroBytes(in: folded ^ repeated(UInt8(ascii: "}")))
            | zeroBytes(in: word ^ repeated(UInt8(ascii: "\"")))
    }
}
