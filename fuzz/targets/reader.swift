// Fuzz target `reader`: the snapshot reader of formats 1 and 2 and the writer.
//
// The input is a snapshot file's bytes. Its name is made from the `device` and `part` inside (the
// own name, or a sync-tool copy's, by the input's length), so that most inputs get past the name
// rules; `filename` fuzzes those rules. For any input:
// - the fast path (record scanner) and the plain path (tree) agree: the same reading, or the same
//   refusal; so does the engine's way (split at line feeds or by structure, elements read alone,
//   then assembled), and the ids the split finds are the ids of the versions read;
// - an accepted file, written again by SnapshotWriter, reads back as the same versions with no
//   problem, and writing that again gives the same bytes; every record line is the RFC 8785
//   interchange serialization of the record's normal form, reads back as the record, and is a
//   fixed point of the interchange writer.

@_cdecl("SnapshotFormatFuzz_reader")
func fuzzReader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    ReaderFuzzTarget.check(fuzzBytes(data, size))
    return 0
}

enum ReaderFuzzTarget {
    static func check(_ input: [UInt8]) {
        let name = fileName(for: input)
        let plain = Result { () throws(SnapshotFileProblem) in try SnapshotReader.readPlain(bytes: input, fileName: name) }
        checkPathsAgree(input, fileName: name, plain: plain, findingIDs: [false, true])
        guard case .success(let reading) = plain else { return }
        checkKeyAndSignature(reading)
        let written = write(reading)
        let reread = readOwnFile(written, as: reading, original: input)
        // A written file has the layout the engine splits at line feeds.
        checkPathsAgree(
            written, fileName: reading.part.fileName(for: reading.device), plain: .success(reread), findingIDs: [false])
        fuzzCheck(
            write(reread) == written,
            "writing a written file's reading again gives other bytes: \(fuzzShown(written)) then \(fuzzShown(write(reread)))"
        )
    }

    /// The name the file is read under: its own name, or a copy's (by the input's length), made
    /// from the first `"device"` and `"part"` strings in the bytes (escapes not read: an escaped
    /// device gets a name it does not fit, which is worth reading too); a fixed name without one.
    static func fileName(for input: [UInt8]) -> String {
        guard let device = stringValue(of: "device", in: input) else { return "laptop.json" }
        var stem = device
        if let part = stringValue(of: "part", in: input) { stem += "." + part }
        switch input.count % 4 {
        case 0: return stem + ".sync-conflict-20261122-101010-ABCDEFG.json"
        case 1: return stem + " (1).json"
        default: return stem + ".json"
        }
    }

    /// The text between the quotes after the first `"key"` and its colon, found by bytes alone.
    private static func stringValue(of key: String, in input: [UInt8]) -> String? {
        let quoted = Array("\"\(key)\"".utf8)
        guard input.count > quoted.count else { return nil }
        var at = 0
        while at + quoted.count <= input.count, !input[at..<(at + quoted.count)].elementsEqual(quoted) { at += 1 }
        at += quoted.count
        func skipWhitespace() { while at < input.count, [0x20, 0x0A, 0x0D, 0x09].contains(input[at]) { at += 1 } }
        skipWhitespace()
        guard at < input.count, input[at] == UInt8(ascii: ":") else { return nil }
        at += 1
        skipWhitespace()
        guard at < input.count, input[at] == UInt8(ascii: "\"") else { return nil }
        let start = at + 1
        guard let end = input[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: input[start..<end], as: UTF8.self)
    }

    // MARK: - The reader's paths agree

    private static func checkPathsAgree(
        _ input: [UInt8], fileName: String, plain: Result<SnapshotReading, SnapshotFileProblem>, findingIDs: [Bool]
    ) {
        let fast = Result { () throws(SnapshotFileProblem) in try SnapshotReader.readFast(bytes: input, fileName: fileName) }
        expect(fast, agreesWith: plain, path: "the fast path", input: input)
        for findingIDs in findingIDs {
            let engine = Result { () throws(SnapshotFileProblem) in
                try readElementByElement(input, fileName: fileName, findingIDs: findingIDs)
            }
            expect(engine, agreesWith: plain, path: "elements read alone (findingIDs: \(findingIDs))", input: input)
        }
    }

    /// What the engine does: split, read each element alone, assemble; nil when it cannot.
    private static func readElementByElement(_ input: [UInt8], fileName: String, findingIDs: Bool)
        throws(SnapshotFileProblem) -> SnapshotReading?
    {
        guard let split = SnapshotReader.split(input, findingIDs: findingIDs) else { return nil }
        fuzzCheck(split.ids.count == split.elements.count, "split found \(split.ids.count) ids for \(split.elements.count) elements")
        if findingIDs { expectHalvesAgree(input, with: split) }
        var previousEnd = 0
        var buffers = ParserBuffers()
        let elements = input.withUnsafeBufferPointer { buffer in
            split.elements.enumerated().map { index, range -> ElementReading? in
                fuzzCheck(
                    range.lowerBound >= previousEnd && range.upperBound <= buffer.count,
                    "split's element \(index) at \(range) overlaps or leaves \(fuzzShown(input))")
                previousEnd = range.upperBound
                let reading = SnapshotReader.readElement(
                    of: UnsafeBufferPointer(rebasing: buffer[range]), at: index, reusing: &buffers)
                if reading.isValidJSON, let id = split.ids[index] {
                    fuzzCheck(
                        reading.versions.allSatisfy { $0.id == id },
                        "split found id \(id) for element \(index), which reads as other ids, in \(fuzzShown(input))")
                }
                return reading
            }
        }
        return try SnapshotReader.assemble(split, fileName: fileName, elements: elements)
    }

    /// Two readers finding the elements in halves (``RecordsHalves``, cut whatever the size) find
    /// what one reader found.
    private static func expectHalvesAgree(_ input: [UInt8], with split: SplitSnapshot) {
        guard let halves = input.withUnsafeBufferPointer({ RecordsHalves.find(in: $0, minimumBytes: 0) }) else { return }
        let found = input.withUnsafeBufferPointer { bytes in
            halves.joined(halves.firstHalf(of: bytes), halves.secondHalf(of: bytes))
        }
        guard let found else { return }
        let inHalves = SnapshotReader.split(input, found: (halves.arrayOpen, found))
        fuzzCheck(
            inHalves?.elements == split.elements && inHalves?.ids == split.ids,
            "the halves cut at \(halves.cut) found other elements than one reader in \(fuzzShown(input))")
    }

    /// A path's result agrees with the plain path's: nil (it leaves the file to the plain path),
    /// the same reading, or the same refusal.
    private static func expect(
        _ result: Result<SnapshotReading?, SnapshotFileProblem>, agreesWith plain: Result<SnapshotReading, SnapshotFileProblem>,
        path: String, input: [UInt8]
    ) {
        switch (result, plain) {
        case (.success(nil), _):
            break
        case (.success(let reading?), .success(let expected)):
            if let difference = difference(reading, expected) {
                fatalError("\(path) and the plain path read \(fuzzShown(input)) differently: \(difference)")
            }
        case (.failure(let problem), .failure(let expected)):
            fuzzCheck(
                problem == expected,
                "\(path) and the plain path refuse \(fuzzShown(input)) for different reasons: \(problem) / \(expected)")
        case (.success, .failure(let expected)):
            fatalError("\(path) accepts \(fuzzShown(input)), which the plain path refuses: \(expected)")
        case (.failure(let problem), .success):
            fatalError("\(path) refuses \(fuzzShown(input)), which the plain path accepts: \(problem)")
        }
    }

    /// The first way two readings differ, or nil.
    static func difference(_ a: SnapshotReading, _ b: SnapshotReading) -> String? {
        if a.device != b.device { return "device \(a.device) / \(b.device)" }
        if a.role != b.role { return "role \(a.role) / \(b.role)" }
        if a.format != b.format { return "format \(a.format) / \(b.format)" }
        if a.part != b.part { return "part \(a.part) / \(b.part)" }
        if a.key != b.key { return "key \(String(describing: a.key)) / \(String(describing: b.key))" }
        if a.signature != b.signature { return "signature" }
        if a.generation != b.generation { return "generation \(a.generation) / \(b.generation)" }
        if a.writtenAt != b.writtenAt { return "writtenAt \(String(describing: a.writtenAt)) / \(String(describing: b.writtenAt))" }
        if a.recordCount != b.recordCount { return "recordCount \(a.recordCount) / \(b.recordCount)" }
        if a.warnings != b.warnings { return "warnings \(a.warnings) / \(b.warnings)" }
        if a.versions.count != b.versions.count { return "\(a.versions.count) / \(b.versions.count) versions" }
        for (index, (left, right)) in zip(a.versions, b.versions).enumerated() where left != right {
            return "version \(index): \(fuzzShown(ReadOnly.Record(version: left).interchangeLine)) / \(fuzzShown(ReadOnly.Record(version: right).interchangeLine))"
        }
        if a.problems != b.problems { return "problems \(a.problems) / \(b.problems)" }
        return nil
    }

    // MARK: - Written again, read again

    /// The versions as records, a record's conflicts being the versions of its id that follow it
    /// (reading flattens a record into its version then its conflicts, so this reads back the same).
    static func records(of versions: [ReadOnly.Version]) -> [ReadOnly.Record] {
        var records: [ReadOnly.Record] = []
        for version in versions {
            if let last = records.indices.last, records[last].id == version.id {
                records[last].conflicts.append(version)
            } else {
                records.append(ReadOnly.Record(version: version))
            }
        }
        return records
    }

    /// The reading written as SnapshotWriter writes a file (format 2, its part and key kept).
    static func write(_ reading: SnapshotReading) -> [UInt8] {
        var bytes = SnapshotWriter.header(
            device: reading.device, part: reading.part, generation: reading.generation,
            writtenAt: reading.writtenAt ?? Timestamp(milliseconds: 0), key: reading.key)
        for (index, record) in records(of: reading.versions).enumerated() {
            checkLine(of: record)
            SnapshotWriter.appendRecord(record, isFirst: index == 0, into: &bytes)
        }
        bytes += SnapshotWriter.footer
        return bytes
    }

    /// A record's line is its normal form's interchange bytes, a fixed point, and reads back as the record.
    private static func checkLine(of record: ReadOnly.Record) {
        let line = record.interchangeLine
        let tree = JSONValue.object(record.normalForm).interchangeBytes
        fuzzCheck(line == tree, "a record line differs from its normal form's bytes: \(fuzzShown(line)) / \(fuzzShown(tree))")
        let rewritten = try? StrictJSON.interchangeBytes(of: line)
        fuzzCheck(rewritten == line, "a record line is not a fixed point of the interchange writer: \(fuzzShown(line))")
        do {
            let back = try SnapshotReader.record(fromLine: line)
            fuzzCheck(back == record, "a record line reads back as another record: \(fuzzShown(line))")
        } catch {
            fatalError("a record line is refused: \(error): \(fuzzShown(line))")
        }
    }

    /// Reads the written file under its own name: it must give the same versions and no problem.
    private static func readOwnFile(_ written: [UInt8], as reading: SnapshotReading, original: [UInt8]) -> SnapshotReading {
        let name = reading.part.fileName(for: reading.device)
        let reread: SnapshotReading
        do {
            reread = try SnapshotReader.readPlain(bytes: written, fileName: name)
        } catch {
            fatalError("the written file \(fuzzShown(written)) is refused: \(error); it was read from \(fuzzShown(original))")
        }
        var expected = reading
        expected.role = .own
        expected.format = ReadOnly.Snapshot.currentFormat
        expected.signature = nil
        expected.writtenAt = reading.writtenAt ?? Timestamp(milliseconds: 0)
        expected.recordCount = records(of: reading.versions).count
        expected.problems = []
        expected.warnings = []
        if let difference = difference(reread, expected) {
            fatalError("\(fuzzShown(original)) written as \(fuzzShown(written)) reads back differently: \(difference)")
        }
        return reread
    }

    /// A key's text and a signature's member read back as themselves.
    private static func checkKeyAndSignature(_ reading: SnapshotReading) {
        if let key = reading.key {
            fuzzCheck(PublicKey(text: key.text) == key, "key \(key.text) does not read back as itself")
        }
        if let signature = reading.signature {
            let member = Array("{\"a\":1".utf8) + FileSignature.member(signature.bytes) + [0x0A]
            let back = FileSignature.trailing(member)
            fuzzCheck(
                back?.bytes == signature.bytes && back?.signedCount == 6,
                "signature member \(fuzzShown(member)) does not read back as itself")
        }
    }
}
