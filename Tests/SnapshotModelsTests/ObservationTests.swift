import SnapshotFormat
import SnapshotModels
import SyncEngine
import Synchronization
import Testing

@Suite("Models: observing changes of a type")
struct ObservationTests {
    @Test("A save in this process is yielded at once, with the record's id")
    func inProcessSave() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        // A long interval: only the in-process signal can deliver the change in time
        let observer = Observer(store.changes(of: PantryRelease2.self, every: .seconds(60)))
        defer { observer.stop() }
        let made = try store.insert(PantryV2(name: "Eggs", amount: "6"), as: PantryRelease2.self)
        #expect(try await observer.changes(count: 1) == [[made.id]])
    }

    @Test("Another process's merge is yielded within the polling interval")
    func otherProcessMerge() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let observer = Observer(store.changes(of: PantryRelease2.self, every: .milliseconds(50)))
        defer { observer.stop() }
        // Another device publishes an item; syncd (here: a second connection to desk's store) merges it
        let phone = try sandbox.store("phone")
        let made = try phone.insert(PantryV2(name: "Milk", amount: "1"), as: PantryRelease2.self)
        _ = try sandbox.device("desk").merge()
        #expect(try await observer.changes(count: 1) == [[made.id]])
    }

    @Test("Changes to other types, and merges that change nothing, yield nothing; deletions do")
    func unrelatedChanges() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let observer = Observer(store.changes(of: PantryRelease2.self, every: .milliseconds(20)))
        defer { observer.stop() }
        _ = try store.insert(NoteV1(text: "other type"), as: Note.self)
        try store.sync()
        _ = try sandbox.device("desk").merge()
        try await Task.sleep(for: .milliseconds(300))
        #expect(observer.seen.isEmpty)
        let made = try store.insert(PantryV2(name: "Eggs", amount: "6"), as: PantryRelease2.self)
        #expect(try await observer.changes(count: 1) == [[made.id]])
        try store.delete(made)
        #expect(try await observer.changes(count: 2) == [[made.id], [made.id]])
    }

    @Test("Cancelling the observing task ends the stream")
    func cancellationEnds() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let store = try sandbox.store("desk")
        let observer = Observer(store.changes(of: PantryRelease2.self, every: .seconds(60)))
        try await Task.sleep(for: .milliseconds(100))
        observer.stop()
        try await eventually { observer.finished }
        #expect(observer.seen.isEmpty)
    }
}

/// Iterates a change stream in a task of its own, keeping what it yields.
final class Observer: Sendable {
    private final class Seen: Sendable {
        let state = Mutex<(changes: [Set<RecordID>], finished: Bool)>(([], false))
    }

    private let box = Seen()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<ModelChange>) {
        let box = box
        task = Task {
            for await change in stream { box.state.withLock { $0.changes.append(change.ids) } }
            box.state.withLock { $0.finished = true }
        }
    }

    var seen: [Set<RecordID>] { box.state.withLock { $0.changes } }
    var finished: Bool { box.state.withLock { $0.finished } }

    func stop() { task.cancel() }

    /// The changes seen, once there are at least `count` (or a timeout).
    func changes(count: Int) async throws -> [Set<RecordID>] {
        try await eventually { self.seen.count >= count }
        return seen
    }
}

struct TimedOut: Error {}

/// Waits until `condition` holds, checking every 10 ms, for at most `limit`.
///
/// The limit is generous on purpose, and time this task spent waiting for a thread beyond its
/// sleep does not count against it: under `swift test` on 2 cores, other suites run real
/// processes and block both of the cooperative pool's threads for seconds at a time (over 100 s
/// on CI), and neither the observing task nor this one can run until one is free; when they
/// can, this one may well look before the observer has. A change that never arrives still fails.
func eventually(within limit: Duration = .seconds(120), _ condition: () -> Bool) async throws {
    let clock = ContinuousClock()
    let pause = Duration.milliseconds(10)
    var deadline = clock.now + limit
    while !condition() {
        guard clock.now < deadline else { throw TimedOut() }
        let asleep = clock.now
        try await Task.sleep(for: pause)
        let starved = clock.now - asleep - pause
        if starved > .milliseconds(500) { deadline += starved }
    }
}
