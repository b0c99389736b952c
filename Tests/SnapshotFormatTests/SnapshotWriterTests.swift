import SnapshotFormat
import Testing

@Suite("Writing snapshot files")
struct SnapshotWriterTests {
    static let device = DeviceID("laptop")!

    static func version(_ index: Int, deleted: Bool = false) -> ReadOnly.Version {
        var fields = JSONObject()
        fields["text"] = .string("line \(index)\nwith \"quotes\", ünïcödé and a tab\t")
        return ReadOnly.Version(
            id: RecordID(String(format: "00000000-0000-4000-8000-%012d", index))!, type: "Note",
            lastModified: Timestamp(milliseconds: 1_790_000_000_000 + Int64(index)), modifiedBy: device,
            versionVector: VersionVector([device: Int64(index + 1)]), deleted: deleted, fields: deleted ? JSONObject() : fields)
    }

    @Test("a written file reads back with the same header and every record, conflicts included", arguments: [0, 1, 3])
    func roundTrip(records count: Int) throws {
        // Given records, one with a conflict
        var records = (0..<count).map { ReadOnly.Record(version: Self.version($0)) }
        if count > 1 {
            var conflict = Self.version(1, deleted: true)
            conflict.modifiedBy = DeviceID("phone")
            conflict.versionVector = VersionVector([DeviceID("phone")!: 1])
            records[1].conflicts = [conflict]
        }
        let snapshot = ReadOnly.Snapshot(
            device: Self.device, generation: 42, writtenAt: Timestamp(milliseconds: 1_790_000_000_123), records: records)

        // When it is written and read back by the strict reader
        let bytes = SnapshotWriter.bytes(of: snapshot)
        let reading = try SnapshotReader.read(bytes: bytes, fileName: "laptop.json")

        // Then nothing is lost or rejected
        #expect(reading.device == Self.device)
        #expect(reading.role == .own)
        #expect(reading.generation == 42)
        #expect(reading.writtenAt == snapshot.writtenAt)
        #expect(reading.problems.isEmpty)
        #expect(reading.recordCount == count)
        let expected = records.flatMap { [$0.version] + $0.conflicts }
        #expect(reading.versions == expected)
    }

    @Test("the header puts records last, so records can stream after it")
    func headerEndsWithRecords() {
        let header = SnapshotWriter.header(device: Self.device, generation: 7, writtenAt: Timestamp(milliseconds: 0))
        #expect(
            String(decoding: header, as: UTF8.self)
                == #"{"format":2,"device":"laptop","generation":7,"writtenAt":"1970-01-01T00:00:00.000Z","records":["#)
    }
}
