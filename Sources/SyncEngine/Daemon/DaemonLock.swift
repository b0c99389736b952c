/// The lock that makes a second `syncd` on the same state directory refuse to start.
///
/// `flock(2)` on `<state>/syncd.pid`, held for the daemon's whole life and released by the kernel
/// when the process exits, even by SIGKILL; the file holds the PID for the message.
public final class DaemonLock {
    private let descriptor: Int32

    /// Takes the lock, or throws ``EngineError/daemonRunning(pid:stateDirectory:)``, or
    /// ``EngineError/stateDirectoryUnusable(path:reason:)`` when the file cannot be made or written
    /// (a read-only state directory).
    public init(stateDirectory: String) throws {
        let path = stateDirectory + "/syncd.pid"
        do {
            try SystemCalls.createDirectories(stateDirectory)
            descriptor = try SystemCalls.openOrCreate(path)
        } catch {
            throw EngineError.stateDirectoryUnusable(path: path, reason: error.description)
        }
        let locked: Bool
        do {
            locked = try SystemCalls.tryLockExclusively(descriptor, path: path)
        } catch {
            throw EngineError.stateDirectoryUnusable(path: path, reason: error.description)
        }
        guard locked else {
            let holder =
                (try? SystemCalls.readAll(descriptor, expectedSize: 16, path: path))
                .map { String(decoding: $0, as: UTF8.self).trimmingSpaces } ?? ""
            // No close here: an initializer that throws once every property is set still runs
            // deinit, which closes the descriptor (closing it twice could close another file's).
            throw EngineError.daemonRunning(pid: holder, stateDirectory: stateDirectory)
        }
        do {
            try SystemCalls.overwrite(descriptor, with: "\(SystemCalls.processID)\n", path: path)
        } catch {
            throw EngineError.stateDirectoryUnusable(path: path, reason: error.description)
        }
    }

    deinit {
        SystemCalls.close(descriptor)
    }
}
