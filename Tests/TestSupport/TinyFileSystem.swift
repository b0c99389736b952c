import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A tmpfs of a given size mounted on a fresh temporary directory (root only).
public struct TinyFileSystem {
    public let path: String

    public static var canMount: Bool { geteuid() == 0 }

    public init(kilobytes: Int) throws {
        path = NSTemporaryDirectory() + "tinyfs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path])
    }

    /// Fills it up with a file `name` written until the disk is full.
    public func fill(_ name: String) throws {
        guard FileManager.default.createFile(atPath: path + "/" + name, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot create \(name)"])
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path + "/" + name))
        while (try? handle.write(contentsOf: Data(count: 4096))) != nil {}
        try? handle.close()
    }

    /// Mounts it again read-only or read-write (what it holds stays).
    public func remount(readOnly: Bool) throws {
        try Self.run("/bin/mount", ["-o", readOnly ? "remount,ro" : "remount,rw", path])
    }

    public func remove() {
        try? Self.run("/bin/umount", [path])
        try? FileManager.default.removeItem(atPath: path)
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        guard try SpawnedProcess.run(tool, arguments) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(tool) \(arguments) failed"])
        }
    }
}
