import Foundation
import SnapshotFormat
@testable import SyncStore
import Testing

@Suite("Store: opening one database from several connections")
struct StoreConcurrencyTests {
    /// Opens `SyncStore(path:)` from `openers` threads released at the same moment; the errors.
    static func openTogether(_ path: String, openers: Int) -> [String] {
        let group = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        let errors = ErrorList()
        for _ in 0..<openers {
            group.enter()
            Thread.detachNewThread {
                start.wait()
                do {
                    let store = try SyncStore(path: path)
                    _ = try store.reading { try $0.counts() }
                } catch {
                    errors.append(String(describing: error))
                }
                group.leave()
            }
        }
        for _ in 0..<openers { start.signal() }
        group.wait()
        return errors.all
    }

    @Test("Several connections (as of syncd and syncctl starting together) creating the same new store at once all succeed")
    func createTogether() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let all = try SyncStore().appliedMigrations()
        var failures: [String] = []
        for round in 0..<20 {
            let path = directory.path("store-\(round).sqlite")
            failures += Self.openTogether(path, openers: 4)
            #expect(try SyncStore(path: path).appliedMigrations() == all)
        }
        #expect(failures.count == 0, "\(failures.count) of 80 openings failed: \(Set(failures.map { String($0.prefix(100)) }).sorted())")
    }

    @Test("Several connections upgrading the same v1 store at once (after a software update) all succeed, keeping every row")
    func upgradeTogether() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var failures: [String] = []
        for round in 0..<10 {
            let path = directory.path("store-\(round).sqlite")
            try V1Rows.writeAsV1(path: path)
            failures += Self.openTogether(path, openers: 4)
            try V1Rows.check(try SyncStore(path: path))
        }
        #expect(failures.count == 0, "\(failures.count) of 40 openings failed: \(Set(failures.map { String($0.prefix(100)) }).sorted())")
    }

    @Test("Several connections opening an up-to-date store at once all succeed")
    func openTogether() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("store.sqlite")
        try V1Rows.writeAsV1(path: path)
        try V1Rows.check(try SyncStore(path: path))
        let failures = Self.openTogether(path, openers: 6)
        #expect(failures.count == 0, "\(Set(failures).sorted())")
        try V1Rows.check(try SyncStore(path: path))
    }
}

/// Errors collected from several threads.
final class ErrorList: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [String] = []
    func append(_ error: String) { lock.withLock { errors.append(error) } }
    var all: [String] { lock.withLock { errors } }
}
