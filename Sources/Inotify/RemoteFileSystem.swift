import CInotifyTools
import Foundation

/// Whether inotify can see changes made to a folder by other machines.
public enum RemoteFileSystem {
    /// The `f_type` magic numbers (statfs(2)) of file systems where inotify sees only this
    /// machine's own changes: NFS, SMB/CIFS (three magics), FUSE (sshfs and friends), AFS, Coda, 9p.
    static let magics: [UInt32: String] = [
        0x6969: "NFS", 0x517B: "SMB", 0xFF53_4D42: "CIFS", 0xFE53_4D42: "SMB2", 0x6573_5546: "FUSE",
        0x5346_414F: "AFS", 0x7375_7245: "Coda", 0x0102_1997: "9p",
    ]

    /// The name of the remote or FUSE file system `path` is on, nil for a local one.
    ///
    /// - Returns: nil too when `statfs` fails (the folder is missing: the caller reports that).
    public static func name(of path: String) -> String? {
        var info = statfs()
        guard statfs(path, &info) == 0 else { return nil }
        return magics[UInt32(truncatingIfNeeded: info.f_type)]
    }
}
