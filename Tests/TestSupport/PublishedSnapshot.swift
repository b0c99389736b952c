import Foundation
import SnapshotFormat

/// One device's snapshot as it is published in a folder: its whole file `<device>.json`, or its
/// parts `<device>.<prefix>.json`, each read by the strict reader and put together.
public struct PublishedSnapshot {
    /// The files read, in name order.
    public var files: [String]
    /// Each file's reading, in the same order.
    public var readings: [SnapshotReading]

    /// Every version the files hold, in file order.
    public var versions: [ReadOnly.Version] { readings.flatMap(\.versions) }
    /// How many records the files hold.
    public var recordCount: Int { readings.reduce(0) { $0 + $1.recordCount } }
    /// Every problem any file has.
    public var problems: [RecordProblem] { readings.flatMap(\.problems) }
    /// The parts published (``PartPrefix/whole`` for one file).
    public var parts: [PartPrefix] { readings.map(\.part) }

    /// Reads `device`'s own files in `folder`; nil when it has none there.
    ///
    /// - Throws: when a file is not a valid snapshot.
    public static func read(folder: String, device: String) throws -> PublishedSnapshot? {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { isOwnName($0, of: device) }.sorted()
        guard !names.isEmpty else { return nil }
        var readings: [SnapshotReading] = []
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
            readings.append(try SnapshotReader.read(bytes: bytes, fileName: name))
        }
        return PublishedSnapshot(files: names, readings: readings)
    }

    /// Whether `name` is `<device>.json` or `<device>.<1 to 4 upper-case hex digits>.json`.
    public static func isOwnName(_ name: String, of device: String) -> Bool {
        if name == device + ".json" { return true }
        guard name.hasPrefix(device + "."), name.hasSuffix(".json") else { return false }
        return PartPrefix(String(name.dropFirst(device.count + 1).dropLast(5))) != nil
    }
}
