import ArgumentParser
import SyncEngine

extension AsyncParsableCommand {
    /// What `main` does for `syncctl` and `syncd`: tune the allocator (``MemoryAllocator/tune()``)
    /// first, then parse and run as ArgumentParser's own `main` does.
    public static func mainWithTunedAllocator() async {
        MemoryAllocator.tune()
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
