import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A program the tests run, started with `posix_spawn(3)` and reaped by `waitpid(2)` on its PID
/// alone: use this, never Foundation's `Process`, in tests.
///
/// On Linux, `Process` attaches its child to the calling thread's run loop and has its own thread
/// reap children and wake that run loop through unsynchronized state. Called from Swift
/// Testing's worker threads (libdispatch threads that exit when idle), `waitUntilExit()` corrupted
/// the heap in about half of the full `swift test` runs (glibc's "unaligned tcache chunk
/// detected"); with it replaced by polling, one local run still died of "unaligned fastbin chunk
/// detected" while the vectors started `cp`, and a sanitizer run found no fault in this package's
/// own code. Here no other thread and no run loop is involved: the child is reaped by whoever
/// asks whether it still runs, under a lock, and never signalled once reaped, so its PID cannot
/// have been reused.
public final class SpawnedProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// This process's own descriptor.
        case inherited
        /// A file, created if missing and written from its start (standard input: read).
        case file(String)
        /// Standard error only: the same as standard output.
        case standardOutput
    }

    public let pid: pid_t
    public let executable: String
    public let arguments: [String]

    private let lock = NSLock()
    /// The raw status `waitpid` gave, once reaped.
    private var waitStatus: Int32?

    /// Starts `executable` with `arguments` now: in exactly `environment` (this process's when
    /// nil), in `directory` (this process's when nil), standard input from `stdin` (`/dev/null`
    /// when nil). The child inherits no descriptor but its three streams, every signal at its
    /// default action and none blocked.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdin: String? = nil, stdout: Stream = .inherited, stderr: Stream = .inherited
    ) throws {
        self.executable = executable
        self.arguments = arguments

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
        for (descriptor, stream) in [(Int32(1), stdout), (2, stderr)] {
            switch stream {
            case .inherited: break
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY | O_CREAT, 0o644)
            case .standardOutput: posix_spawn_file_actions_adddup2(&actions, 1, descriptor)
            }
        }
        try Self.check("addclosefrom_np", Self.closeFrom(&actions, 3))
        if let directory { try Self.check("addchdir_np", Self.changeDirectory(&actions, directory)) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var every = sigset_t(), none = sigset_t()
        sigfillset(&every)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &every)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var argv = ([executable] + arguments).map { strdup($0) } + [nil]
        var variables =
            (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            variables.forEach { free($0) }
        }
        var child = pid_t()
        let result = posix_spawn(&child, executable, &actions, &attributes, &argv, &variables)
        guard result == 0 else { throw SpawnError("posix_spawn \(executable): \(String(cString: strerror(result)))") }
        pid = child
    }

    /// Runs `executable` to its end and returns its termination status.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdin: String? = nil, stdout: Stream = .inherited, stderr: Stream = .inherited
    ) throws -> Int32 {
        let child = try SpawnedProcess(
            executable, arguments, environment: environment, directory: directory, stdin: stdin, stdout: stdout,
            stderr: stderr)
        child.waitUntilExit()
        return child.terminationStatus
    }

    /// Whether the child still runs; reaps it if it has ended.
    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        if waitStatus != nil { return false }
        var status: Int32 = 0
        var reaped = waitpid(pid, &status, WNOHANG)
        while reaped == -1 && errno == EINTR { reaped = waitpid(pid, &status, WNOHANG) }
        if reaped == pid {
            waitStatus = status
            return false
        }
        // -1 (ECHILD) would mean another waiter took it, which nothing here does; 0: it runs.
        precondition(reaped == 0, "waitpid(\(pid)): \(String(cString: strerror(errno)))")
        return true
    }

    /// The exit code, or the number of the signal that ended it (as Foundation's `Process` gives
    /// it); only once the child has ended.
    public var terminationStatus: Int32 {
        lock.lock()
        defer { lock.unlock() }
        guard let status = waitStatus else { preconditionFailure("\(executable) (PID \(pid)) still runs") }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    /// Whether a signal ended it (``terminationStatus`` is then the signal's number).
    public var endedBySignal: Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let status = waitStatus else { return false }
        return status & 0x7f != 0
    }

    /// Sends `signal` to the child by PID, if it has not been reaped.
    public func signal(_ signal: Int32) {
        if isRunning { _ = kill(pid, signal) }
    }

    /// Waits until the child has ended and is reaped, holding this thread.
    public func waitUntilExit() {
        while isRunning { usleep(2_000) }
    }

    /// Waits as ``waitUntilExit()`` does, without holding a thread meanwhile: for a child that
    /// runs for minutes (a fuzzer). A synchronous wait holds one of the two threads of Swift's
    /// cooperative pool on a 2-core machine for all that time, and with another one elsewhere
    /// every other suite's task waits: on CI, 40 s and more.
    public func exited() async {
        while isRunning {
            do { try await Task.sleep(for: .milliseconds(20)) } catch { return waitUntilExit() }
        }
    }

    /// Waits up to `timeout` seconds, holding this thread; true once the child has ended.
    public func exited(within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            if Date() >= deadline { return false }
            usleep(5_000)
        }
        return true
    }

    // Two glibc file actions that Swift's Glibc module does not declare (they need
    // `_GNU_SOURCE`), found by name.
    private typealias FileActions = UnsafeMutablePointer<posix_spawn_file_actions_t>
    private static let closeFrom = unsafeBitCast(
        glibc("posix_spawn_file_actions_addclosefrom_np"), to: (@convention(c) (FileActions, Int32) -> Int32).self)
    private static let changeDirectory = unsafeBitCast(
        glibc("posix_spawn_file_actions_addchdir_np"),
        to: (@convention(c) (FileActions, UnsafePointer<CChar>) -> Int32).self)

    private static func glibc(_ name: String) -> UnsafeMutableRawPointer {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            preconditionFailure("\(name) is missing from this C library (glibc 2.34 or later has it)")
        }
        return symbol
    }

    private static func check(_ action: String, _ result: Int32) throws {
        guard result == 0 else {
            throw SpawnError("posix_spawn_file_actions_\(action): \(String(cString: strerror(result)))")
        }
    }
}

/// A child that could not be started.
public struct SpawnError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
