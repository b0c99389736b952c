import Glibc
/// Reads a snapshot file's bytes exactly as the contract says.
public enum SnapshotReader {
    /// Reads one snapshot file found under `fileName` in the shared folder.
    ///
    /// A problem with the file as a whole throws; a problem with one record (or one conflict
    /// entry) only drops that record (or entry) and is listed in ``SnapshotReading/problems``.
    ///
    /// - Parameter observing: called with each element's index and bytes after it is read (and
    ///   not skipped), when the fast path reads the file.
    public static func read(
        bytes: [UInt8], fileName: String, observing: ((Int, UnsafeBufferPointer<UInt8>) -> Void)? = nil
    ) throws(SnapshotFileProblem) -> SnapshotReading {
        // The fast path reads every regular record without building trees. Whatever it cannot
        // vouch for (invalid JSON anywhere, a top level of an unusual shape) is read again by the
        // plain path below, which gives every message; both give the same reading.
        if let reading = try readFast(bytes: bytes, fileName: fileName, observing: observing) { return reading }
        return try readPlain(bytes: bytes, fileName: fileName)
    }

    /// Whether a file whose first bytes are `opening` cannot be JSON whatever follows: its first
    /// byte after a byte order mark and whitespace cannot start a JSON value (zeros left by a
    /// crash or by a tool that makes room first, a binary). Reading `opening` alone then gives the
    /// same problem, at the same byte, as reading the whole file.
    public static func cannotBeJSON(opening: [UInt8]) -> Bool {
        var position = opening.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while position < opening.count, [0x20, 0x09, 0x0A, 0x0D].contains(opening[position]) { position += 1 }
        // (Too near the end to tell a character that continues past it: the whole file decides.)
        guard position < opening.count - 4 else { return false }
        // {, [, ", -, 0-9, and the first letters of true, false and null.
        let starts: Set<UInt8> = Set(Array("{[\"-0123456789tfn".utf8))
        return !starts.contains(opening[position])
    }

    /// The plain path: the whole document as a tree, then the contract's rules on it.
    static func readPlain(bytes: [UInt8], fileName: String) throws(SnapshotFileProblem) -> SnapshotReading {
        let document: JSONValue
        do {
            document = try StrictJSON.parse(bytes)
        } catch {
            guard error.isTooDeep else { throw .invalidJSON(error) }
            // Valid up to a nesting the tree does not go into: the error a parse without a depth
            // limit finds, if any; else the fast path reads the file, rejecting the deep records
            // on their own (it cannot only when the file's top level is not of the usual shape).
            do {
                try StrictJSON.validate(bytes)
            } catch {
                throw .invalidJSON(error)
            }
            if let reading = try readFast(bytes: bytes, fileName: fileName) { return reading }
            throw .invalidJSON(error)
        }
        guard case .object(let top) = document else {
            throw .invalidTopLevel("the top level must be an object, not \(document.briefDescription)")
        }
        let header = try readHeader(top, fileName: fileName, trailingSignature: FileSignature.trailing(bytes))
        guard case .array(let records)? = top["records"].nonNull else {
            let found = top["records"].nonNull.map { $0.briefDescription } ?? "nothing"
            throw .invalidTopLevel("records must be an array, found \(found)")
        }
        var reading = header.reading(recordCount: records.count)
        readWrittenAt(top, into: &reading)
        reading.versions.reserveCapacity(records.count)
        for (index, element) in records.enumerated() {
            let start = reading.versions.count
            readRecord(element, at: index, into: &reading)
            checkInPart(
                &reading.versions, from: start, part: header.part, recordIndex: index, problems: &reading.problems)
        }
        return reading
    }

    /// The fast path: the file split into its elements, each read by the record scanner (or, when
    /// the scanner calls it irregular, through the tree), then put together. Nil when the plain
    /// path must read the file (it is not valid JSON, or its top level is not the usual shape).
    static func readFast(
        bytes: [UInt8], fileName: String, observing: ((Int, UnsafeBufferPointer<UInt8>) -> Void)? = nil
    ) throws(SnapshotFileProblem) -> SnapshotReading? {
        guard let split = split(bytes) else { return nil }
        var buffers = ParserBuffers()
        let elements = bytes.withUnsafeBufferPointer { input in
            split.elements.enumerated().map { index, range -> ElementReading? in
                let element = UnsafeBufferPointer(rebasing: input[range])
                let reading = readElement(of: element, at: index, reusing: &buffers)
                if reading.isValidJSON { observing?(index, element) }
                return reading
            }
        }
        return try assemble(split, fileName: fileName, elements: elements)
    }

    /// Reads the element at `position`: a regular record by the scanner, anything else through
    /// the tree and the plain path's rules.
    private static func readElement(
        _ parser: inout StrictJSONParser, input: UnsafeBufferPointer<UInt8>, at index: Int,
        into reading: inout SnapshotReading
    ) throws(JSONParseError) {
        let start = parser.position
        let isRegular =
            input[start] == UInt8(ascii: "{") ? try parser.scanRecord(into: &reading.versions, depth: 2) : false
        if !isRegular {
            // Read this element again as the plain path would (two containers around it): a tree,
            // then the contract's rules on it. Once: `input` is this element alone.
            parser.position = start
            parser.baseDepth = 2
            readRecord(try parser.parseValue(), at: index, into: &reading)
        }
    }

    /// Reads back one record line this code wrote (``ReadOnly/Record/interchangeLine``), as the
    /// store keeps it: the record's version, then its conflicts.
    ///
    /// Each version's `fields` object is taken as the interchange bytes the line holds (found
    /// by its brackets, not parsed again): the line is what this device publishes, byte for
    /// byte, so those bytes are already what a parse would give.
    ///
    /// - Throws: when the line is not a valid record.
    public static func record(fromLine line: [UInt8]) throws -> ReadOnly.Record {
        let versions = try line.withUnsafeBufferPointer { input throws -> [ReadOnly.Version] in
            var parser = StrictJSONParser(input)
            parser.acceptsLargeIntegers = true
            parser.fieldsAreInterchange = true
            var versions: [ReadOnly.Version] = []
            if !input.isEmpty, input[0] == UInt8(ascii: "{"), try parser.scanRecord(into: &versions, depth: 0),
                parser.position == input.count
            {
                return versions
            }
            parser = StrictJSONParser(input)
            parser.acceptsLargeIntegers = true
            var reading = SnapshotReading(
                device: placeholderDevice, role: .own, generation: 1, writtenAt: nil, versions: [], problems: [],
                warnings: [], recordCount: 1)
            readRecord(try parser.parseDocument(), at: 0, into: &reading)
            if let problem = reading.problems.first { throw VersionRuleViolation(problem.description) }
            return reading.versions
        }
        guard let first = versions.first else { throw VersionRuleViolation("the line holds no version") }
        return ReadOnly.Record(version: first, conflicts: Array(versions.dropFirst()))
    }

    private static func readWrittenAt(_ top: JSONObject, into reading: inout SnapshotReading) {
        switch top["writtenAt"].nonNull {
        case nil: break
        case .string(let text)? where Timestamp(parsing: text) != nil:
            reading.writtenAt = Timestamp(parsing: text)
        case let other?:
            reading.warnings.append(
                "writtenAt \(other.briefDescription) is not a valid timestamp (informational only; the file still merges)"
            )
        }
    }

    private struct Header {
        var device: DeviceID
        var role: SourceRole
        var generation: Int64
        var format: Int64
        var part: PartPrefix
        var key: PublicKey?
        var signature: FileSignature?

        /// A reading with this header and no record read yet.
        func reading(recordCount: Int) -> SnapshotReading {
            var reading = SnapshotReading(
                device: device, role: role, generation: generation, writtenAt: nil, versions: [], problems: [],
                warnings: [], recordCount: recordCount)
            reading.format = format
            reading.part = part
            reading.key = key
            reading.signature = signature
            return reading
        }
    }

    /// Reads the top level's rules: format, device and name (with the part, format 2), generation,
    /// and in format 2 the key and the signature's place (`trailingSignature`: the signature
    /// member the file's bytes end with, if they end with one written exactly as the contract says).
    private static func readHeader(_ top: JSONObject, fileName: String, trailingSignature: FileSignature?)
        throws(SnapshotFileProblem) -> Header
    {
        guard let formatValue = top["format"].nonNull else { throw .invalidTopLevel("format is missing") }
        guard let format = formatValue.exactInteger else {
            throw .invalidTopLevel("format must be an integer, not \(formatValue.briefDescription)")
        }
        if format > ReadOnly.Snapshot.currentFormat { throw .newerFormat(format) }
        guard format >= ReadOnly.Snapshot.oldestFormat else {
            throw .invalidTopLevel("format \(format) is not a snapshot format (this version reads 1 and 2)")
        }
        // Format 1 knows no part, key or signature: there they are unknown keys, ignored.
        let isFormat2 = format >= 2
        var part = PartPrefix.whole
        if isFormat2, let partValue = top["part"].nonNull {
            guard case .string(let text) = partValue, let prefix = PartPrefix(text) else {
                throw .invalidTopLevel(
                    "part must be 1 to 4 upper-case hex digits (0-9 A-F), not \(partValue.briefDescription)")
            }
            part = prefix
        }
        guard case .string(let deviceText)? = top["device"].nonNull else {
            throw .invalidTopLevel("device is missing or not a string")
        }
        let role = SourceFileName.classify(name: fileName, deviceInside: deviceText, part: part)
        switch role {
        case .own, .copy: break
        case .rejected(let reason): throw .misnamed(reason)
        case .skipped: throw .misnamed("\(fileName) is not a name a snapshot may have")
        }
        guard let device = DeviceID(deviceText) else {
            throw .misnamed("\(quoted(deviceText)) is not a valid device ID")
        }
        guard let generationValue = top["generation"].nonNull else {
            throw .invalidTopLevel("generation is missing")
        }
        guard let generation = generationValue.exactInteger, generation >= 1 else {
            throw .invalidTopLevel("generation must be an integer >= 1, not \(generationValue.briefDescription)")
        }
        var header = Header(device: device, role: role, generation: generation, format: format, part: part)
        guard isFormat2 else { return header }
        if let keyValue = top["key"].nonNull {
            guard case .string(let text) = keyValue, let key = PublicKey(text: text) else {
                throw .invalidTopLevel(
                    "key must be \"ed25519:\" and the base64 of 32 bytes, not \(keyValue.briefDescription)")
            }
            header.key = key
        }
        // `"signature": null` is no signature, as null is no value anywhere else (`key`, `part`).
        if top["signature"].nonNull != nil {
            guard let signature = trailingSignature else {
                throw .invalidTopLevel(
                    "signature must be the file's last member, written exactly as ,\"signature\":\"ed25519:<base64 of 64 bytes>\"} (then at most one line feed)"
                )
            }
            guard header.key != nil else { throw .invalidTopLevel("the file is signed but names no key") }
            header.signature = signature
        }
        return header
    }

    /// Rejects, on their own, the versions of a part's record whose id is not in the part.
    private static func checkInPart(
        _ versions: inout [ReadOnly.Version], from start: Int, part: PartPrefix, recordIndex: Int,
        problems: inout [RecordProblem]
    ) {
        guard !part.isWhole, start < versions.count, !part.contains(versions[start].id) else { return }
        let id = versions[start].id
        versions.removeSubrange(start...)
        problems.append(
            RecordProblem(
                recordIndex: recordIndex, recordID: id.rawValue,
                rule: "record \(id) is not in part \(part.rawValue): a part holds only ids starting with \(part.rawValue)"))
    }

    private static func readRecord(_ element: JSONValue, at index: Int, into reading: inout SnapshotReading) {
        guard case .object(let object) = element else {
            reading.problems.append(
                RecordProblem(
                    recordIndex: index, recordID: nil,
                    rule: "a record must be an object, not \(element.briefDescription)"))
            return
        }
        let idText: String? = if case .string(let text)? = object["id"] { text } else { nil }
        func problem(_ rule: String, entry: Int? = nil) {
            reading.problems.append(
                RecordProblem(recordIndex: index, conflictIndex: entry, recordID: idText, rule: rule))
        }
        var entries: [JSONValue] = []
        switch object["conflicts"].nonNull {
        case nil: break
        case .array(let values)?: entries = values
        case let other?:
            problem("conflicts must be an array, not \(other.briefDescription)")
            return
        }
        do {
            reading.versions.append(try ReadOnly.Version(validating: object))
        } catch {
            problem(error.rule)
        }
        guard !entries.isEmpty else { return }
        guard let recordID = idText.flatMap(RecordID.init) else {
            problem("its \(entries.count) conflict entries cannot be merged: the record has no valid id")
            return
        }
        for (entryIndex, entry) in entries.enumerated() {
            do {
                reading.versions.append(try readConflictEntry(entry, recordID: recordID))
            } catch {
                problem(error.rule, entry: entryIndex)
            }
        }
    }

    private static func readConflictEntry(_ entry: JSONValue, recordID: RecordID) throws(VersionRuleViolation)
        -> ReadOnly.Version
    {
        guard case .object(let object) = entry else {
            throw VersionRuleViolation("a conflict entry must be an object, not \(entry.briefDescription)")
        }
        switch object["conflicts"].nonNull {
        case nil: break
        case .array(let nested)? where nested.isEmpty: break
        case _?: throw VersionRuleViolation("a conflict entry must not have conflicts of its own")
        }
        let version = try ReadOnly.Version(validating: object)
        guard version.id == recordID else {
            throw VersionRuleViolation("a conflict entry must have its record's id \(recordID), not \(version.id)")
        }
        return version
    }
}

/// A snapshot file whose top level is read and whose `records` elements are found, none of them read yet.
///
/// Reading a file in these steps lets a caller read the elements of several files together: on
/// every core, and only once for an element that several files hold byte for byte (the common
/// case: most records are the same version on every device). ``SnapshotReader/split(_:)``,
/// ``SnapshotReader/readElement(of:at:)`` and ``SnapshotReader/assemble(_:fileName:elements:)``
/// give exactly what ``SnapshotReader/read(bytes:fileName:observing:)`` gives.
public struct SplitSnapshot: Sendable {
    /// The top-level members other than `records`.
    let top: JSONObject
    /// The signature member the file ends with, when it ends with one written as the contract says.
    let trailingSignature: FileSignature?
    /// Where each element of `records` is in the file's bytes.
    public let elements: [Range<Int>]
    /// Each element's id, found without reading the rest of it (nil when it is not a plain
    /// string holding a UUID: the element must be read to know).
    public let ids: [RecordID?]

    /// The same file with its elements found at `elements` instead (its element bytes moved
    /// elsewhere, as a reader that keeps them apart does).
    public func relocated(to elements: [Range<Int>]) -> SplitSnapshot {
        precondition(elements.count == self.elements.count)
        return SplitSnapshot(top: top, trailingSignature: trailingSignature, elements: elements, ids: ids)
    }
}

/// What reading one element of `records` gave.
public struct ElementReading: Sendable {
    /// Its versions: the record's own, then its valid conflict entries.
    public var versions: [ReadOnly.Version]
    /// What was rejected in it (its record index is the element's index in the file read first).
    public var problems: [RecordProblem]
    /// False when the element's bytes are not a JSON value: the whole file is then invalid.
    public var isValidJSON: Bool

    /// Whether the element was read without any problem.
    public var isClean: Bool { isValidJSON && problems.isEmpty }
}

extension SnapshotReader {
    /// Reads the top level of `bytes` and finds the elements of its `records` by structure alone;
    /// nil when the file is not of the usual shape or not valid JSON at the top level (then
    /// ``read(bytes:fileName:observing:)`` must read it).
    ///
    /// - Parameter findingIDs: find each element's id (``SplitSnapshot/ids``); without, a file of
    ///   the layout SnapshotSync writes (a record per line) is split at its line feeds.
    /// - Parameter found: the elements of `records` already found (by ``RecordsHalves``), with
    ///   where its array opens.
    public static func split(
        _ bytes: [UInt8], findingIDs: Bool = true, found: (arrayOpen: Int, elements: RecordsHalves.ElementsFound)? = nil
    ) -> SplitSnapshot? {
        bytes.withUnsafeBufferPointer { input -> SplitSnapshot? in
            var parser = StrictJSONParser(input)
            do throws(JSONParseError) {
                return try splitDocument(&parser, input: input, findingIDs: findingIDs, found: found)
            } catch {
                return nil
            }
        }
    }

    private static func splitDocument(
        _ parser: inout StrictJSONParser, input: UnsafeBufferPointer<UInt8>, findingIDs: Bool,
        found known: (arrayOpen: Int, elements: RecordsHalves.ElementsFound)?
    ) throws(JSONParseError) -> SplitSnapshot? {
        if input.count >= 3, input[0] == 0xEF, input[1] == 0xBB, input[2] == 0xBF { parser.position = 3 }
        parser.skipWhitespace()
        guard parser.position < input.count, input[parser.position] == UInt8(ascii: "{") else { return nil }
        parser.position += 1
        var top = JSONObject()
        var elements: [Range<Int>]?
        var ids: [RecordID?] = []
        parser.skipWhitespace()
        if parser.position < input.count, input[parser.position] == UInt8(ascii: "}") { return nil }
        while true {
            parser.skipWhitespace()
            guard parser.position < input.count, input[parser.position] == UInt8(ascii: "\"") else { return nil }
            let key = try parser.parseString(isKey: true)
            let isRecords = key.utf8.elementsEqual("records".utf8)
            if isRecords ? elements != nil : top[key] != nil { return nil }
            parser.skipWhitespace()
            guard parser.position < input.count, input[parser.position] == UInt8(ascii: ":") else { return nil }
            parser.position += 1
            parser.skipWhitespace()
            if isRecords {
                guard parser.position < input.count, input[parser.position] == UInt8(ascii: "[") else { return nil }
                var found: (elements: [Range<Int>], ids: [RecordID?])?
                if let known, known.arrayOpen == parser.position {
                    found = (known.elements.elements, known.elements.ids)
                    parser.position = known.elements.arrayEnd
                } else {
                    found = findingIDs ? nil : splitLines(&parser, input: input)
                    if found == nil { found = try splitRecords(&parser, input: input) }
                }
                guard let found else { return nil }
                elements = found.elements
                ids = found.ids
            } else {
                parser.baseDepth = 1
                top[key] = try parser.parseValueOrItsKind()
            }
            guard let more = try? parser.continues(closedBy: UInt8(ascii: "}")) else { return nil }
            if !more { break }
        }
        parser.skipWhitespace()
        guard parser.position == input.count, let elements else { return nil }
        return SplitSnapshot(top: top, trailingSignature: FileSignature.trailing(input), elements: elements, ids: ids)
    }

    /// The element ranges of the `records` array at `position` when it is laid out as SnapshotSync
    /// writes it, `[`, then each record on a line of its own (after a comma but for the last),
    /// then `]` on a line of its own; nil (`position` unchanged) for any other layout.
    ///
    /// Only for a reader that then parses every element in full, or compares its bytes with a
    /// line known to be valid: a line that is one complete JSON object each makes exactly the
    /// array the structure would find.
    private static func splitLines(_ parser: inout StrictJSONParser, input: UnsafeBufferPointer<UInt8>)
        -> (elements: [Range<Int>], ids: [RecordID?])?
    {
        let newline = UInt8(ascii: "\n")
        var at = parser.position + 1
        guard at < input.count, input[at] == newline, let base = input.baseAddress else { return nil }
        at += 1
        var elements: [Range<Int>] = []
        var afterComma = false
        while at < input.count {
            if input[at] == UInt8(ascii: "]") {
                // A comma before the `]` (`{…},` on the last record's line) is not JSON.
                guard !afterComma else { return nil }
                parser.position = at + 1
                return (elements, Array(repeating: nil, count: elements.count))
            }
            guard let found = memchr(base + at, Int32(newline), input.count - at) else { return nil }
            let end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            let hasComma = end > at && input[end - 1] == UInt8(ascii: ",")
            let elementEnd = hasComma ? end - 1 : end
            guard elementEnd - at >= 2, input[at] == UInt8(ascii: "{"), input[elementEnd - 1] == UInt8(ascii: "}"),
                hasComma || (end + 1 < input.count && input[end + 1] == UInt8(ascii: "]"))
            else { return nil }
            elements.append(at..<elementEnd)
            afterComma = hasComma
            at = end + 1
        }
        return nil
    }

    /// The element ranges of the `records` array at `position`; nil when they cannot be found.
    private static func splitRecords(_ parser: inout StrictJSONParser, input: UnsafeBufferPointer<UInt8>)
        throws(JSONParseError) -> (elements: [Range<Int>], ids: [RecordID?])?
    {
        parser.position += 1
        parser.skipWhitespace()
        var elements: [Range<Int>] = []
        var ids: [RecordID?] = []
        if parser.position < input.count, input[parser.position] == UInt8(ascii: "]") {
            parser.position += 1
            return (elements, ids)
        }
        while true {
            parser.skipWhitespace()
            let start = parser.position
            guard start < input.count, let (end, id) = parser.endOfRecord(), end > start else { return nil }
            elements.append(start..<end)
            ids.append(id)
            parser.position = end
            guard let more = try? parser.continues(closedBy: UInt8(ascii: "]")) else { return nil }
            if !more { return (elements, ids) }
        }
    }

    /// The device of the reading that collects one element's or one stored line's versions (only
    /// its versions and problems are used). Made once: checking an ID's text on every element
    /// was 0.6 % of a first merge of 3 × 100,000 small records.
    private static let placeholderDevice = DeviceID("element")!

    /// Reads one element of a file's `records` (its bytes alone), as reading the whole file would.
    public static func readElement(of bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> ElementReading {
        var buffers = ParserBuffers()
        return readElement(of: bytes, at: index, reusing: &buffers)
    }

    /// Reads one element as ``readElement(of:at:)`` does, working in `buffers` (pass the same
    /// buffers for every element a thread reads).
    public static func readElement(of bytes: UnsafeBufferPointer<UInt8>, at index: Int, reusing buffers: inout ParserBuffers)
        -> ElementReading
    {
        var reading = SnapshotReading(
            device: placeholderDevice, role: .own, generation: 1, writtenAt: nil, versions: [], problems: [],
            warnings: [], recordCount: 0)
        var parser = StrictJSONParser(bytes, reusing: &buffers)
        defer { parser.giveBack(&buffers) }
        do throws(JSONParseError) {
            try readElement(&parser, input: bytes, at: index, into: &reading)
            guard parser.position == bytes.count else {
                return ElementReading(versions: [], problems: [], isValidJSON: false)
            }
        } catch {
            return error.isTooDeep ? tooDeepElement(bytes, at: index) : ElementReading(versions: [], problems: [], isValidJSON: false)
        }
        return ElementReading(versions: reading.versions, problems: reading.problems, isValidJSON: true)
    }

    /// An element the parsers refused as nested deeper than ``StrictJSON/maximumDepth``. The
    /// contract sets no depth, so when the element is valid JSON otherwise, its record (its
    /// conflict entries included) is rejected on its own and the rest of its file merges
    /// (docs/format.md); when it is not, the file is invalid, as for any element.
    private static func tooDeepElement(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> ElementReading {
        var checker = StrictJSONParser(bytes)
        do throws(JSONParseError) {
            try checker.validateValue()
        } catch {
            return ElementReading(versions: [], problems: [], isValidJSON: false)
        }
        guard checker.position == bytes.count else { return ElementReading(versions: [], problems: [], isValidJSON: false) }
        checker.position = 0
        let id = checker.endOfRecord()?.id?.description
        // A conflict entry sits two levels deeper than the version it was: a version read at the
        // top of its record can be too deep once a device keeps it as a conflict. Such an entry
        // is rejected on its own, as the contract rejects entries, and the record merges.
        if let trimmed = withoutTooDeepEntries(bytes) {
            var reading = trimmed.bytes.withUnsafeBufferPointer { readElement(of: $0, at: index) }
            if reading.isValidJSON, !reading.versions.isEmpty {
                reading.problems += trimmed.dropped.map { entry in
                    RecordProblem(
                        recordIndex: index, conflictIndex: entry, recordID: id,
                        rule: JSONParseError.tooDeepReason + ", deeper than this device reads: not merged (it stays in its file)")
                }
                return reading
            }
        }
        let problem = RecordProblem(
            recordIndex: index, recordID: id,
            rule: JSONParseError.tooDeepReason + ", deeper than this device reads: not merged (it stays in its file)")
        return ElementReading(versions: [], problems: [problem], isValidJSON: true)
    }

    /// The record element `bytes` (valid JSON) with the entries of its `conflicts` that are
    /// nested deeper than ``StrictJSON/maximumDepth`` left out, and their positions; nil when
    /// none is (or the element is not an object with such an array).
    private static func withoutTooDeepEntries(_ bytes: UnsafeBufferPointer<UInt8>) -> (bytes: [UInt8], dropped: [Int])? {
        // Walked by structure alone: the element is valid, but too deep to parse whole.
        var walker = StrictJSONParser(bytes)
        func byte(_ ascii: Unicode.Scalar) -> Bool {
            walker.skipWhitespace()
            return walker.position < bytes.count && bytes[walker.position] == UInt8(ascii: ascii)
        }
        func skipElement() -> Bool {
            guard let end = walker.endOfElement() else { return false }
            walker.position = end
            return true
        }
        guard byte("{") else { return nil }
        walker.position += 1
        var isConflicts = false
        repeat {
            guard byte("\"") else { return nil }
            let key = walker.position
            guard skipElement(), byte(":") else { return nil }
            isConflicts = bytes[key..<walker.position].elementsEqual(#""conflicts""#.utf8)
            walker.position += 1
            if isConflicts, byte("[") { break }
            guard skipElement() else { return nil }
        } while (try? walker.continues(closedBy: UInt8(ascii: "}"))) == true
        guard isConflicts, byte("[") else { return nil }
        let start = walker.position
        walker.position += 1
        if byte("]") { return nil }
        var kept: [Range<Int>] = []
        var dropped: [Int] = []
        repeat {
            walker.skipWhitespace()
            let entryStart = walker.position
            guard skipElement() else { return nil }
            // As deep as it sits in a file: the file object, `records`, the record, `conflicts`.
            var entry = StrictJSONParser(UnsafeBufferPointer(rebasing: bytes[entryStart..<walker.position]))
            entry.baseDepth = 4
            do throws(JSONParseError) {
                _ = try entry.parseValue()
                kept.append(entryStart..<walker.position)
            } catch {
                guard error.isTooDeep else { return nil }
                dropped.append(kept.count + dropped.count)
            }
        } while (try? walker.continues(closedBy: UInt8(ascii: "]"))) == true
        guard !dropped.isEmpty, bytes[walker.position - 1] == UInt8(ascii: "]") else { return nil }
        var result = Array(bytes[...start])
        for (number, range) in kept.enumerated() {
            if number > 0 { result.append(UInt8(ascii: ",")) }
            result += bytes[range]
        }
        result += bytes[(walker.position - 1)...]
        return (result, dropped)
    }

    /// The reading of a split file from its elements' readings, in order (nil for an element
    /// skipped as already merged). Nil when an element is not valid JSON (then
    /// ``read(bytes:fileName:observing:)`` must read the file, and says why).
    public static func assemble(_ split: SplitSnapshot, fileName: String, elements: [ElementReading?])
        throws(SnapshotFileProblem) -> SnapshotReading?
    {
        precondition(elements.count == split.elements.count, "one reading per element")
        // Invalid JSON anywhere comes first, as when the whole document is parsed before its rules.
        if elements.contains(where: { $0?.isValidJSON == false }) { return nil }
        var reading = try topLevel(of: split, fileName: fileName)
        reading.versions.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard let element else { continue }
            let start = reading.versions.count
            reading.versions += element.versions
            for var problem in element.problems {
                problem.recordIndex = index
                reading.problems.append(problem)
            }
            checkInPart(
                &reading.versions, from: start, part: reading.part, recordIndex: index, problems: &reading.problems)
        }
        return reading
    }

    /// The reading of a split file's top level alone: its header, its `writtenAt` warning and its
    /// record count, with no version (its elements are read apart).
    public static func topLevel(of split: SplitSnapshot, fileName: String) throws(SnapshotFileProblem)
        -> SnapshotReading
    {
        let header = try readHeader(split.top, fileName: fileName, trailingSignature: split.trailingSignature)
        var reading = header.reading(recordCount: split.elements.count)
        readWrittenAt(split.top, into: &reading)
        return reading
    }
}
