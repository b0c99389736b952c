/// An exclusive lock on a state directory, so `syncctl` and `syncd` never merge or publish the
/// same device's file at the same moment.
///
/// The lock is `flock(2)` on `<state>/lock`, released when the process exits, even by SIGKILL;
/// the file holds the holder's PID for messages.
public final class StateLock {
    private let descriptor: Int32
    private let path: String

    /// Takes the lock, waiting up to `timeoutSeconds` for another holder to finish.
    ///
    /// - Throws: ``EngineError/stateLocked(path:holder:)`` when it stays held.
    public init(stateDirectory: String, timeoutSeconds: Double) throws {
        path = stateDirectory + "/lock"
        descriptor = try SystemCalls.openOrCreate(path)
        let deadline = SystemCalls.wallClockMilliseconds() + Int64(timeoutSeconds * 1000)
        while try !SystemCalls.tryLockExclusively(descriptor, path: path) {
            if SystemCalls.wallClockMilliseconds() >= deadline {
                let holder = (try? SystemCalls.readAll(descriptor, expectedSize: 16, path: path))
                    .map { String(decoding: $0, as: UTF8.self).trimmingSpaces }
                SystemCalls.close(descriptor)
                throw EngineError.stateLocked(path: path, holder: holder ?? "")
            }
            sleepBriefly()
        }
        try SystemCalls.overwrite(descriptor, with: "\(SystemCalls.processID)\n", path: path)
    }

    deinit {
        SystemCalls.close(descriptor)
    }
}

extension String {
    var trimmingSpaces: String {
        split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
    }
}
