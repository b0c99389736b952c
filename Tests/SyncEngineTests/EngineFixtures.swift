import Foundation
import TestSupport
import Logging
import SnapshotFormat
import SyncEngine
import SyncStore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A clock the test moves by hand.
typealias TestClock = ManualClock

/// A fresh temporary directory with `shared/`, `outside/` and room for state directories.
struct Sandbox {
    let root: URL
    let clock = TestClock()

    init() throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("SyncEngineTests-\(UUID().uuidString)", isDirectory: true)
        for folder in ["shared", "outside"] {
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
    }

    var shared: String { root.appendingPathComponent("shared").path }
    var outside: String { root.appendingPathComponent("outside").path }
    func state(_ name: String = "state") -> String { root.appendingPathComponent(name).path }
    func sharedPath(_ name: String) -> String { shared + "/" + name }

    func remove() { try? FileManager.default.removeItem(at: root) }

    /// Opens a device on `shared` with the state directory `state`.
    func device(
        _ id: String? = "desk", state: String? = nil, maxFileSize: Int64 = SyncSettings.defaultMaxFileSize,
        partPolicy: PartPolicy = .standard, schemaFiles: [String] = []
    ) throws -> SyncDevice {
        var settings = SyncSettings(
            sharedFolder: shared, stateDirectory: state ?? self.state(), device: id.map { DeviceID($0)! },
            maxFileSize: maxFileSize)
        settings.partPolicy = partPolicy
        settings.schemaFiles = schemaFiles
        let clock = self.clock
        return try SyncDevice(settings: settings, logger: quietLogger, clock: { clock.now })
    }

    /// Writes `bytes` as `name` in the shared folder.
    func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: sharedPath(name)))
    }

    func write(_ name: String, _ text: String) throws { try write(name, Array(text.utf8)) }

    /// The bytes of a file in the shared folder.
    func read(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: sharedPath(name))))
    }
}

let quietLogger = Logger(label: "SyncEngineTests") { _ in SwiftLogNoOpLogHandler() }

/// Builders of record versions and snapshot files.
enum Wire {
    static let base: Int64 = 1_795_000_000_000

    static func id(_ n: Int) -> RecordID { RecordID(String(format: "0000AAAA-0000-4000-8000-%012d", n))! }

    static func object(_ json: String) -> JSONObject {
        guard case .object(let object) = try! StrictJSON.parse(json) else { fatalError("not an object: \(json)") }
        return object
    }

    static func version(
        _ n: Int, by device: String, vector: [String: Int64]? = nil, at offset: Int64 = 0, type: String = "Note",
        fields: String = "{}", deleted: Bool = false
    ) -> ReadOnly.Version {
        let counts = (vector ?? [device: 1]).reduce(into: [DeviceID: Int64]()) { $0[DeviceID($1.key)!] = $1.value }
        return ReadOnly.Version(
            id: id(n), type: type, lastModified: Timestamp(milliseconds: base + offset), modifiedBy: DeviceID(device),
            versionVector: VersionVector(counts), deleted: deleted, fields: object(fields))
    }

    /// A valid snapshot file's bytes (built here, independently of the engine's writer).
    static func snapshot(_ device: String, generation: Int64, _ records: [ReadOnly.Record]) -> [UInt8] {
        var top = JSONObject()
        top["format"] = .number(1)
        top["device"] = .string(device)
        top["generation"] = .number(Double(generation))
        top["writtenAt"] = .string(Timestamp(milliseconds: base).written)
        top["records"] = .array(records.sorted { $0.id < $1.id }.map { .object($0.normalForm) })
        return JSONValue.object(top).canonicalBytes
    }

    /// One record's JSON text.
    static func text(_ record: ReadOnly.Record) -> String { JSONValue.object(record.normalForm).canonicalString }

    static func text(_ version: ReadOnly.Version) -> String { text(ReadOnly.Record(version: version)) }

    static func snapshot(_ device: String, generation: Int64, versions: [ReadOnly.Version]) -> [UInt8] {
        snapshot(device, generation: generation, versions.map { ReadOnly.Record(version: $0) })
    }

    /// A snapshot file's text with hand-written record objects.
    static func snapshotText(_ device: String, generation: Int64, format: Int = 1, records: [String]) -> String {
        #"{"format": \#(format), "device": "\#(device)", "generation": \#(generation), "records": [\#(records.joined(separator: ","))]}"#
    }
}

/// What one entry of a folder is, without opening anything but regular files.
enum ListedEntry: Hashable, CustomStringConvertible {
    case file(Data)
    case link(String)
    case directory
    case fifo
    case other

    var description: String {
        switch self {
        case .file(let data): "file of \(data.count) bytes"
        case .link(let target): "link to \(target)"
        case .directory: "directory"
        case .fifo: "FIFO"
        case .other: "other"
        }
    }
}

/// Every entry of `path` by name (dot-files included).
func folderListing(_ path: String) throws -> [String: ListedEntry] {
    var listing: [String: ListedEntry] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
        let full = path + "/" + name
        var status = stat()
        guard lstat(full, &status) == 0 else { continue }
        switch status.st_mode & S_IFMT {
        case S_IFREG: listing[name] = .file(try Data(contentsOf: URL(fileURLWithPath: full)))
        case S_IFLNK: listing[name] = .link(try FileManager.default.destinationOfSymbolicLink(atPath: full))
        case S_IFDIR: listing[name] = .directory
        case S_IFIFO: listing[name] = .fifo
        default: listing[name] = .other
        }
    }
    return listing
}

/// The inode and modification time of a file, to tell whether it was rewritten.
func fileIdentity(_ path: String) -> (inode: UInt64, modified: Int64, changed: Int64)? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    return (
        UInt64(status.st_ino), Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec),
        Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
    )
}

/// This device's published file, read as the contract says.
func readPublished(_ sandbox: Sandbox, _ device: String = "desk") throws -> (reading: SnapshotReading, records: [JSONValue]) {
    let bytes = try sandbox.read("\(device).json")
    let reading = try SnapshotReader.read(bytes: bytes, fileName: "\(device).json")
    guard case .object(let top) = try StrictJSON.parse(bytes), case .array(let records)? = top["records"] else {
        throw PublishedFileUnreadable()
    }
    return (reading, records)
}

struct PublishedFileUnreadable: Error {}

/// Every record the device holds (tombstones included), as the JSON a snapshot carries.
func heldRecords(_ device: SyncDevice) throws -> [JSONValue] {
    try device.records(includeDeleted: true).map { .object($0.normalForm) }
}

extension MergeReport {
    func source(_ name: String) -> SourceOutcome? { sources.first { $0.name == name } }
}
