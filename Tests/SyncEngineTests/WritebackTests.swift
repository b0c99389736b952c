import Foundation
import SnapshotFormat
@testable import SyncEngine
import SyncStore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A first merge starts the disk on the store's pages through SQLite's own descriptor of the file:
/// closing a descriptor of our own would release every POSIX lock the process holds on it, SQLite's
/// included (it did once, in c7c65fa: the daemon tests then failed by the dozen).
@Suite("Engine: the first merge's write-behind keeps SQLite's locks")
struct WritebackTests {
    /// This process's POSIX locks on the file at `path`, as `/proc/locks` lists them.
    static func posixLocks(on path: String) throws -> [String] {
        var raw = stat()
        guard stat(path, &raw) == 0 else { throw CocoaError(.fileNoSuchFile) }
        let suffix = ":\(raw.st_ino)"
        let pid = String(getpid())
        return try String(contentsOfFile: "/proc/locks", encoding: .utf8).split(separator: "\n").map(String.init)
            .filter { line in
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                return fields.count >= 7 && fields[1] == "POSIX" && fields[4] == pid && fields[5].hasSuffix(suffix)
            }
    }

    @Test("heldDescriptor finds a descriptor the process holds on the file, and leaves its locks alone")
    func heldDescriptorKeepsLocks() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let path = sandbox.outside + "/locked"
        try Data("some bytes".utf8).write(to: URL(fileURLWithPath: path))
        #expect(SystemCalls.heldDescriptor(of: path) == nil)
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_RDLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 100
        lock.l_len = 10
        try #require(fcntl(descriptor, F_SETLK, &lock) == 0)
        try #require(try Self.posixLocks(on: path).count == 1)

        let found = try #require(SystemCalls.heldDescriptor(of: path))
        var foundStatus = stat()
        var ownStatus = stat()
        #expect(fstat(found, &foundStatus) == 0 && fstat(descriptor, &ownStatus) == 0)
        #expect(foundStatus.st_ino == ownStatus.st_ino && foundStatus.st_dev == ownStatus.st_dev)
        SystemCalls.startWriteback(found)
        #expect(try Self.posixLocks(on: path).count == 1)
        #expect(SystemCalls.heldDescriptor(of: sandbox.outside + "/missing") == nil)
    }

    @Test(
        "A first merge written behind leaves SQLite's lock on the store's file in place",
        arguments: [false, true])
    func firstMergeKeepsStoreLock(storeOpenElsewhere: Bool) throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write(
            "phone.json",
            Wire.snapshot("phone", generation: 1, versions: (1...50).map { Wire.version($0, by: "phone", at: Int64($0)) }))
        let device = try sandbox.device()
        let store = sandbox.state() + "/store.sqlite"
        // Another connection to the store (an app, or syncd while syncctl merges): the first merge
        // then runs in WAL mode, where every open connection holds a shared lock on the file.
        let other = storeOpenElsewhere ? try SyncStore(path: store) : nil
        _ = try other?.appliedMigrations()
        #expect(!(try Self.posixLocks(on: store)).isEmpty)
        let report = try device.merge()
        #expect(report.added == 50)
        // A descriptor of the store opened and closed by the merge would have released it.
        #expect(!(try Self.posixLocks(on: store)).isEmpty)
        #expect(try device.merge().added == 0)
        #expect(!(try Self.posixLocks(on: store)).isEmpty)
        withExtendedLifetime(other) {}
    }
}
