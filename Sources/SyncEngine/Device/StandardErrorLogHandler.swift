import Foundation

#if canImport(Glibc)
    import Glibc
#endif
import Logging
import Synchronization

/// The level every ``StandardErrorLogHandler`` logs at; changed on SIGHUP without a restart.
public final class LogLevelControl: Sendable {
    private let level: Mutex<Logger.Level>

    /// A control starting at `level`.
    public init(_ level: Logger.Level) { self.level = Mutex(level) }

    /// The current level.
    public var current: Logger.Level {
        get { level.withLock { $0 } }
        set { level.withLock { $0 = newValue } }
    }
}

/// Structured lines on standard error: `level label: message key=value…`.
///
/// Under journald (`$JOURNAL_STREAM` set) lines carry no timestamp of their own (the journal adds
/// one) and start with a `<N>` syslog priority, which journald turns into the entry's level.
public struct StandardErrorLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let control: LogLevelControl
    private let underJournald: Bool

    /// A handler for `label`, its level set by `control`.
    public init(label: String, control: LogLevelControl, environment: [String: String]) {
        self.label = label
        self.control = control
        underJournald = environment["JOURNAL_STREAM"] != nil
    }

    public var logLevel: Logger.Level {
        get { control.current }
        set { control.current = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = underJournald ? "<\(Self.syslogPriority(event.level))>" : Self.timestamp() + " "
        // Escaped: a file name with a newline must not split the journal's line, nor forge one.
        line += "\(event.level) \(label): \(TextLine.escapingControls("\(event.message)"))"
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(Self.quotedIfNeeded(TextLine.escapingControls("\(value)")))"
        }
        StandardError.write(line + "\n")
    }

    private static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    private static func quotedIfNeeded(_ text: String) -> String {
        text.contains(" ") || text.isEmpty ? "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\"" : text
    }

    private static func timestamp() -> String {
        SnapshotTimestampText.now()
    }
}

/// Standard error, written without failing: a full disk under a log file, a closed descriptor or
/// a reader gone (EPIPE, SIGPIPE ignored as under systemd) must not stop a command whose work is
/// done, nor change its exit code (`FileHandle.write(_:)` traps on any error).
public enum StandardError {
    /// Writes `text` whole, retrying after a signal; gives up silently on any other error.
    public static func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
            if written > 0 {
                bytes = bytes.dropFirst(written)
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
