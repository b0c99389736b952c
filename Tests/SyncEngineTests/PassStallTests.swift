@testable import SyncEngine
import Testing

/// The daemon's rule for a pass that stopped moving, on explicit instants and progress states.
@Suite("when syncd says a merge pass has stopped moving")
struct PassStallTests {
    let threshold = Duration.seconds(300)
    let start = SuspendingClock.now
    let passStarted = ContinuousClock.now

    func state(_ phase: PassProgress.Phase, filesRead: Int = 0, groupsDone: Int = 0) -> PassProgress.State {
        var state = PassProgress.State(phase: phase)
        state.started = passStarted
        state.filesToRead = 10
        state.filesRead = filesRead
        state.groupsDone = groupsDone
        return state
    }

    @Test("a pass whose progress stays the same for the threshold is reported once, and again when it moves")
    func stalledThenMoving() {
        var stall = PassStall(threshold: threshold)
        let stuck = state(.merging, filesRead: 3)
        #expect(stall.observe(stuck, at: start) == nil)
        #expect(stall.observe(stuck, at: start + .seconds(299)) == nil, "not yet")
        #expect(stall.observe(stuck, at: start + .seconds(300)) == .stalled(stuck, for: .seconds(300)))
        #expect(stall.observe(stuck, at: start + .seconds(330)) == nil, "said once per stall")
        #expect(stall.observe(state(.merging, filesRead: 4), at: start + .seconds(360)) == .moving(after: .seconds(360)))
        #expect(stall.observe(state(.merging, filesRead: 4), at: start + .seconds(400)) == nil, "the clock starts again")
    }

    @Test("a pass that moves, however slowly, is never reported")
    func slowButMoving() {
        var stall = PassStall(threshold: threshold)
        for step in 0..<20 {
            #expect(stall.observe(state(.merging, groupsDone: step), at: start + .seconds(250 * step)) == nil)
        }
    }

    @Test("no pass running is no stall, however long the daemon is idle; a stalled pass that ends is reported as moving")
    func idleIsNotAStall() {
        var stall = PassStall(threshold: threshold)
        let done = state(.done)
        #expect(stall.observe(done, at: start) == nil)
        #expect(stall.observe(done, at: start + .seconds(3600)) == nil)
        let listing = state(.listing)
        #expect(stall.observe(listing, at: start + .seconds(3600)) == nil)
        #expect(stall.observe(listing, at: start + .seconds(3900)) == .stalled(listing, for: .seconds(300)))
        #expect(stall.observe(done, at: start + .seconds(3960)) == .moving(after: .seconds(360)))
        #expect(stall.observe(done, at: start + .seconds(9000)) == nil)
    }

    @Test("where the pass is, and for how long, in words")
    func whereItIs() {
        #expect(Duration.seconds(300).wholeSeconds == "300 s" && Duration.milliseconds(300_400).wholeSeconds == "300 s")
        #expect(state(.merging, filesRead: 3).whereItIs == "merging, 3 of 10 file(s) read")
        #expect(state(.listing).whereItIs == "listing the shared folder")
    }
}
