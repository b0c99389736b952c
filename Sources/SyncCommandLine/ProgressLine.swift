import Foundation
import SyncEngine
import Synchronization

/// Shows a pass's progress on standard error, on one line rewritten in place, when standard
/// error is a terminal and the pass has run longer than a second; nothing otherwise (scripts,
/// pipes, journald).
///
/// A thread looks at ``SyncDevice/progress`` ten times a second; when the pass ends, its last
/// line is written on the pass's own thread, ended, before the command prints its result.
final class ProgressLine: Sendable {
    private let device: SyncDevice
    private let after: Duration
    /// Whether a line is on the screen now.
    private let showing = Mutex(false)

    /// Starts showing `device`'s passes, if standard error is a terminal. `SYNCCTL_PROGRESS_AFTER_MS`
    /// changes the second of silence (tests set it to 0).
    static func start(for device: SyncDevice, environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard isatty(STDERR_FILENO) == 1 else { return }
        let milliseconds = environment["SYNCCTL_PROGRESS_AFTER_MS"].flatMap(Int.init) ?? 1000
        let line = ProgressLine(device: device, after: .milliseconds(max(0, milliseconds)))
        device.progress.whenDone { state in line.finish(state) }
        let thread = Thread { line.watch() }
        thread.name = "syncctl progress"
        thread.start()
    }

    private init(device: SyncDevice, after: Duration) {
        self.device = device
        self.after = after
    }

    private func watch() {
        while true {
            Thread.sleep(forTimeInterval: 0.1)
            let state = device.progress.current
            guard state.phase != .done, ContinuousClock.now - state.started >= after else { continue }
            showing.withLock { showing in
                Self.write("\r\u{1B}[K" + Self.describe(state))
                showing = true
            }
        }
    }

    private func finish(_ state: PassProgress.State) {
        showing.withLock { showing in
            guard showing || ContinuousClock.now - state.started >= after else { return }
            Self.write("\r\u{1B}[K" + Self.summary(state) + "\n")
            showing = false
        }
    }

    private static func write(_ text: String) {
        StandardError.write(text)
    }

    static func describe(_ state: PassProgress.State) -> String {
        let seconds = seconds(since: state.started)
        switch state.phase {
        case .listing:
            return "syncctl: listing the shared folder…"
        case .reading:
            return "syncctl: reading \(state.filesToRead) file(s), \(megabytes(state.bytesToRead))…"
        case .merging:
            var text = "syncctl: merging: \(state.filesRead) of \(state.filesToRead) file(s) read"
            if state.groups > 1 { text += ", ids \(state.groupsDone * 100 / state.groups)% done" }
            text += ", \(grouped(state.versions)) versions"
            if seconds > 0 { text += " (\(grouped(Int(Double(state.versions) / seconds)))/s)" }
            return text
        case .publishing:
            return "syncctl: saving, and publishing this device's files…"
        case .done:
            return summary(state)
        }
    }

    static func summary(_ state: PassProgress.State) -> String {
        let seconds = seconds(since: state.started)
        return "syncctl: read \(state.filesRead) file(s) (\(megabytes(state.bytesToRead))), merged \(grouped(state.versions)) versions in "
            + String(format: "%.1f s", seconds)
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private static func megabytes(_ bytes: Int64) -> String {
        bytes >= 10_000_000 ? "\(bytes / 1_000_000) MB" : String(format: "%.1f MB", Double(bytes) / 1e6)
    }

    private static func grouped(_ number: Int) -> String {
        let digits = String(number)
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text += "," }
            text.append(digit)
        }
        return text
    }
}
