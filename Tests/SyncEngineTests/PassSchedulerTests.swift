@testable import SyncEngine
import Testing

/// The daemon's settle rule, on explicit instants: files that arrive complete are merged at once,
/// files written in place wait until their writer closes them or has been quiet for the delay.
@Suite("when syncd merges after a shared file changes")
struct PassSchedulerTests {
    let settle = Duration.milliseconds(200)
    let start = ContinuousClock.now

    @Test("a file renamed into the folder (or closed, or removed) is merged at once, whatever the settle delay")
    func completeFileNeedsNoWait() {
        let scheduler = PassScheduler()
        scheduler.fileChanged("peer.json", complete: true, at: start)
        #expect(scheduler.remainingSettleTime(.seconds(60), at: start) == .zero)
        #expect(scheduler.take()?.folderChanged == true)
        #expect(scheduler.take() == nil)
    }

    @Test("a file written in place waits until it has been quiet for the settle delay")
    func writtenFileSettles() {
        let scheduler = PassScheduler()
        scheduler.fileChanged("peer.json", complete: false, at: start)
        #expect(scheduler.remainingSettleTime(settle, at: start + .milliseconds(50)) == .milliseconds(150))
        // Another write restarts the wait
        scheduler.fileChanged("peer.json", complete: false, at: start + .milliseconds(120))
        #expect(scheduler.remainingSettleTime(settle, at: start + .milliseconds(170)) == .milliseconds(150))
        // A writer quiet for the delay counts as done even if it never closes the file
        #expect(scheduler.remainingSettleTime(settle, at: start + .milliseconds(320)) == .zero)
        #expect(scheduler.remainingSettleTime(settle, at: start + .milliseconds(100)) == .zero, "it was forgotten")
        #expect(scheduler.take()?.folderChanged == true)
    }

    @Test("closing the file ends its wait; another file still being written keeps it")
    func closeEndsTheWait() {
        let scheduler = PassScheduler()
        scheduler.fileChanged("a.json", complete: false, at: start)
        scheduler.fileChanged("b.json", complete: false, at: start + .milliseconds(10))
        scheduler.fileChanged("a.json", complete: true, at: start + .milliseconds(20))
        #expect(scheduler.remainingSettleTime(settle, at: start + .milliseconds(30)) == .milliseconds(180))
        scheduler.fileChanged("b.json", complete: true, at: start + .milliseconds(40))
        #expect(scheduler.remainingSettleTime(settle, at: start + .milliseconds(50)) == .zero)
    }

    @Test("a file completed while another is written does not cut the other's wait short")
    func renameDoesNotSkipInPlaceWriter() {
        let scheduler = PassScheduler()
        scheduler.fileChanged("slow.json", complete: false, at: start)
        scheduler.fileChanged("fast.json", complete: true, at: start + .milliseconds(5))
        #expect(scheduler.remainingSettleTime(settle, at: start + .milliseconds(10)) == .milliseconds(190))
    }

    @Test("a pass taken while a file is still being written leaves that file's wait in place")
    func takeKeepsWriters() {
        let scheduler = PassScheduler()
        scheduler.fileChanged("slow.json", complete: false, at: start)
        #expect(scheduler.take() != nil)
        scheduler.request { $0.storeMayHaveChanged = true }
        #expect(scheduler.remainingSettleTime(settle, at: start + .milliseconds(100)) == .milliseconds(100))
    }

    @Test("the settle wait ends as soon as the last file being written is closed, even a close just before the sleep")
    func closingWakesTheWait() async {
        let scheduler = PassScheduler()
        scheduler.fileChanged("a.json", complete: false)
        scheduler.fileChanged("b.json", complete: false)
        let ticket = scheduler.settled.ticket
        scheduler.fileChanged("a.json", complete: true)
        #expect(scheduler.settled.ticket == ticket, "b.json is still being written")
        // Closed after the ticket was read and before the sleep began: the sleep returns at once
        scheduler.fileChanged("b.json", complete: true)
        #expect(await scheduler.settled.sleep(for: .seconds(600), unlessWokenSince: ticket) == true)
    }
}
