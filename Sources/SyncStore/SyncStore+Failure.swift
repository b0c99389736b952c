import GRDB

extension SyncStore {
    /// What an error from the store says about the disk under it, or the file itself, where it
    /// says something a person can act on.
    public enum Failure: Sendable, Equatable {
        /// SQLite's "database or disk is full" (`SQLITE_FULL`): a write found no space.
        case diskFull
        /// An I/O error (`SQLITE_IOERR`): among its causes a full disk, when SQLite could not
        /// extend the WAL's shared-memory file.
        case inputOutput
        /// The file is not a database, or a damaged one (`SQLITE_NOTADB`, `SQLITE_CORRUPT`).
        case damaged
    }

    /// The failure `error` is, if it is an error of SQLite's of those kinds.
    public static func failure(_ error: any Error) -> Failure? {
        guard let error = error as? DatabaseError else { return nil }
        switch error.resultCode {
        case .SQLITE_FULL: return .diskFull
        case .SQLITE_IOERR: return .inputOutput
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: return .damaged
        default: return nil
        }
    }
}
