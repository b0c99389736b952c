/// The systemd notify protocol (sd_notify), without libsystemd: `READY=1`, `STATUS=…`,
/// `WATCHDOG=1`, `STOPPING=1` sent as datagrams to `$NOTIFY_SOCKET`.
public struct NotifySocket: Sendable {
    /// The socket's path (`@name` for an abstract one).
    public let path: String
    /// How often systemd expects `WATCHDOG=1` (half of `$WATCHDOG_USEC`), nil when no watchdog is set.
    public let watchdogInterval: Duration?

    /// The socket named by the environment, nil when not started by systemd with `Type=notify`.
    public init?(environment: [String: String]) {
        let processID = SystemCalls.processID
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
        self.path = path
        if let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0,
            environment["WATCHDOG_PID"].map({ Int32($0) == processID }) ?? true
        {
            watchdogInterval = .microseconds(microseconds / 2)
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends one message (`READY=1`, `STATUS=…`); failures are reported, never fatal.
    public func send(_ message: String) throws {
        try SystemCalls.sendDatagram(message, toUnixSocket: path)
    }
}
