import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What systemd does for `Type=notify`: a Unix datagram socket bound to a path, read (with a
/// timeout on each `recv`) by a thread of its own for as long as the listener is open.
final class NotifyListener: @unchecked Sendable {
    let path: String
    private let descriptor: Int32
    private let lock = NSLock()
    private var received: [(text: String, at: Date)] = []
    private var closed = false
    private var reader: Thread?

    /// Binds the socket; with `reading` false nothing ever reads it (its queue fills up).
    init(path: String, reading: Bool = true) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw Failure("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            Glibc.close(descriptor)
            throw Failure("bind \(path): errno \(errno)")
        }
        // Each recv waits at most 100 ms, so the reader notices close() quickly.
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard reading else { return }
        let thread = Thread { [self] in readUntilClosed() }
        reader = thread
        thread.start()
    }

    /// Stops the reader and closes the socket.
    func close() {
        let wasOpen = lock.withLock {
            defer { closed = true }
            return !closed
        }
        guard wasOpen else { return }
        while let reader, !reader.isFinished { usleep(10_000) }
        Glibc.close(descriptor)
        unlink(path)
    }

    deinit { close() }

    private func readUntilClosed() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !lock.withLock({ closed }) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { continue }  // the timeout (EAGAIN) or EINTR: look at the flag again
            let text = String(decoding: buffer[0..<count], as: UTF8.self)
            // One datagram may carry several newline-separated assignments.
            let lines = text.split(separator: "\n").map { (String($0), Date()) }
            lock.withLock { received += lines }
        }
    }

    /// The environment a daemon needs to talk to this socket.
    func environment(watchdogMicroseconds: Int? = nil, watchdogPID: Int32? = nil) -> [String: String] {
        var environment = ["NOTIFY_SOCKET": path]
        if let watchdogMicroseconds { environment["WATCHDOG_USEC"] = String(watchdogMicroseconds) }
        if let watchdogPID { environment["WATCHDOG_PID"] = String(watchdogPID) }
        return environment
    }

    /// Every message received so far, in order, with when it arrived.
    var messages: [(text: String, at: Date)] { lock.withLock { received } }

    /// The texts received so far.
    var texts: [String] { messages.map(\.text) }

    /// Waits up to `timeout` seconds until a message satisfies `condition`; true if one did.
    func wait(for timeout: Double, until condition: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if texts.contains(where: condition) { return true }
            usleep(20_000)
        }
        return texts.contains(where: condition)
    }
}
