import Foundation
import GRDB
import SnapshotFormat

extension SyncStore {
    /// Every migration, registered by name from the first release on. A shipped migration is
    /// never edited: a change of the storage contract is a new migration with its own test.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: versions, records, sources, publications") { db in
            try db.create(table: "version") { table in
                table.column("recordID", .text).notNull()
                table.column("position", .integer).notNull()
                table.column("type", .text).notNull()
                table.column("schemaVersion", .integer).notNull()
                table.column("lastModified", .integer)
                table.column("modifiedBy", .text)
                table.column("versionVector", .text).notNull()
                table.column("deleted", .boolean).notNull()
                table.column("fields", .text).notNull()
                table.column("unknownKeys", .text).notNull()
                table.primaryKey(["recordID", "position"])
            }
            try db.create(table: "record") { table in
                table.primaryKey("id", .text)
                table.column("type", .text).notNull().indexed()
                table.column("deleted", .boolean).notNull()
                table.column("unresolvedConflicts", .integer).notNull()
                table.column("conflicts", .integer).notNull()
                table.column("changedAt", .integer).notNull()
            }
            try db.create(table: "source") { table in
                table.primaryKey("name", .text)
                table.column("device", .text)
                table.column("role", .text)
                table.column("generation", .integer)
                table.column("highestGeneration", .integer)
                table.column("fileSystemDevice", .integer).notNull()
                table.column("inode", .integer).notNull()
                table.column("size", .integer).notNull()
                table.column("modifiedNanos", .integer).notNull()
                table.column("changedNanos", .integer).notNull()
                table.column("lastMergedAt", .integer)
                table.column("lastSeenAt", .integer).notNull()
                table.column("lastProblem", .text)
                table.column("present", .boolean).notNull()
            }
            try db.create(table: "publication") { table in
                table.primaryKey("generation", .integer)
                table.column("contentDigest", .text).notNull()
                table.column("fileDigest", .text).notNull()
                table.column("writtenAt", .integer).notNull()
                table.column("isPublished", .boolean).notNull()
            }
            // One row: the device this state directory belongs to.
            try db.create(table: "identity") { table in
                table.primaryKey("singleton", .integer).check { $0 == 1 }
                table.column("device", .text).notNull()
                table.column("createdAt", .integer).notNull()
            }
        }
        migrator.registerMigration("v2: source warnings apart from problems") { db in
            try db.alter(table: "source") { table in
                table.add(column: "lastWarning", .text)
            }
        }
        migrator.registerMigration("v3: each record's published line") { db in
            // The record as this device publishes it (RFC 8785 bytes of its normal form with its
            // conflicts), so publishing streams stored bytes instead of rebuilding every record.
            // NULL for rows written before v3: computed from the versions when read.
            try db.alter(table: "record") { table in
                table.add(column: "line", .blob)
            }
        }
        migrator.registerMigration("v4: publications adopted from another writer") { db in
            // A file under this device's name that another writer (a device misconfigured with the
            // same ID) published with exactly this device's content: kept, not rewritten, and
            // still reported.
            try db.alter(table: "publication") { table in
                table.add(column: "isAdopted", .boolean).notNull().defaults(to: false)
            }
        }
        migrator.registerMigration("v5: one row per record, digests of each source's records") { db in
            // Each record was stored twice: one row per version, and again as its published line.
            // The line holds everything the version rows did (it is the record's normal form with
            // its conflicts), so it becomes the only copy: a merge writes one row per record and
            // reads one back. Rows written before v3 have no line yet: it is made from their
            // versions here, before the version rows go.
            let missing = try String.fetchAll(db, sql: "SELECT id FROM record WHERE line IS NULL")
            for id in missing {
                let rows = try StoredVersion.fetchAll(
                    db, sql: "SELECT * FROM version WHERE recordID = ? ORDER BY position", arguments: [id])
                guard let first = rows.first, first.position == 0 else {
                    throw StoreCorruption("record \(id) has no current version")
                }
                let record = ReadOnly.Record(
                    version: try first.readOnly(), conflicts: try rows.dropFirst().map { try $0.readOnly() })
                try db.execute(
                    sql: "UPDATE record SET line = ? WHERE id = ?", arguments: [Data(record.interchangeLine), id])
            }
            try db.drop(table: "version")
            // Keyed by id alone (no rowid, no separate index for the key): publishing reads the
            // records in id order, which is then one sequential pass over one B-tree.
            try db.execute(
                sql: """
                    CREATE TABLE recordByID (
                        id TEXT NOT NULL PRIMARY KEY, type TEXT NOT NULL, deleted BOOLEAN NOT NULL,
                        unresolvedConflicts INTEGER NOT NULL, conflicts INTEGER NOT NULL, changedAt INTEGER NOT NULL,
                        line BLOB NOT NULL
                    ) WITHOUT ROWID;
                    INSERT INTO recordByID
                        SELECT id, type, deleted, unresolvedConflicts, conflicts, changedAt, line FROM record;
                    DROP TABLE record;
                    ALTER TABLE recordByID RENAME TO record;
                    CREATE INDEX index_record_on_type ON record(type);
                    """)
            // Small partial indexes for the counts every pass and `status` report, which would
            // otherwise read every row (every line) of the table.
            try db.execute(
                sql: """
                    CREATE INDEX record_deleted ON record(deleted) WHERE deleted;
                    CREATE INDEX record_with_conflicts ON record(unresolvedConflicts, conflicts) WHERE conflicts > 0;
                    """)
            // What each source held when it was last merged: 16 bytes (the start of a SHA-256)
            // per element of its `records`, for the elements that merged cleanly. An element whose
            // bytes are among them is already in the store, so a pass after a one-record change
            // reads one record, not the whole file.
            try db.create(table: "sourceRecords") { table in
                table.primaryKey("name", .text)
                table.column("digests", .blob).notNull()
            }
        }
        migrator.registerMigration("v6: each record's line digest") { db in
            // 16 bytes of the SHA-256 of the line: the content digest of this device's file is
            // computed from them, so deciding whether to publish reads 16 bytes per record, not
            // every line. NULL means "compute it from the line": a trigger clears it whenever
            // the line changes without it (another program editing the store).
            try db.alter(table: "record") { table in
                table.add(column: "lineDigest", .blob)
            }
            var digests: [(id: String, digest: Data)] = []
            let rows = try Row.fetchCursor(db, sql: "SELECT id, line FROM record")
            while let row = try rows.next() {
                let line: Data = row["line"]
                digests.append((row["id"], Data(line.withUnsafeBytes { LineDigest.of($0) })))
            }
            for (id, digest) in digests {
                try db.execute(sql: "UPDATE record SET lineDigest = ? WHERE id = ?", arguments: [digest, id])
            }
            try db.execute(
                sql: """
                    CREATE TRIGGER record_line_changed AFTER UPDATE OF line ON record
                    WHEN NEW.lineDigest IS OLD.lineDigest
                    BEGIN UPDATE record SET lineDigest = NULL WHERE id = NEW.id; END
                    """)
        }
        migrator.registerMigration("v7: no index on record type") { db in
            // The index on type cost every insert a second B-tree (a tenth of a merge's writes)
            // for `list --type` alone, which reads the records anyway: it scans instead.
            try db.drop(index: "index_record_on_type")
        }
        migrator.registerMigration("v8: format 2 parts") { db in
            // This device's snapshot as it publishes it now: one row per part (prefix '' is the
            // whole snapshot in one file, <device>.json), the leaves of a tree of hex digits.
            try db.execute(
                sql: """
                    CREATE TABLE ownPart (
                        prefix TEXT NOT NULL PRIMARY KEY, generation INTEGER NOT NULL, contentDigest TEXT NOT NULL,
                        bytes INTEGER NOT NULL, records INTEGER NOT NULL, isPublished BOOLEAN NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE writtenFile (
                        part TEXT NOT NULL, generation INTEGER NOT NULL, fileDigest TEXT NOT NULL,
                        writtenAt INTEGER NOT NULL, isAdopted BOOLEAN NOT NULL, isLegacyDigest BOOLEAN NOT NULL,
                        PRIMARY KEY (part, generation)
                    ) WITHOUT ROWID;
                    CREATE TABLE changedPrefix (prefix TEXT NOT NULL PRIMARY KEY) WITHOUT ROWID;
                    """)
            // Every file written before: <device>.json, recognized by the digest format 1 kept.
            try db.execute(
                sql: """
                    INSERT INTO writtenFile (part, generation, fileDigest, writtenAt, isAdopted, isLegacyDigest)
                    SELECT '', generation, fileDigest, writtenAt, isAdopted, 1 FROM publication
                    """)
            // The layout a format 1 store had: its one file, as last written. Its size is not
            // known (-1): the next time it is written, it is split into parts if it is large.
            try db.execute(
                sql: """
                    INSERT INTO ownPart (prefix, generation, contentDigest, bytes, records, isPublished)
                    SELECT '', generation, contentDigest, -1, (SELECT COUNT(*) FROM record), isPublished
                    FROM publication ORDER BY generation DESC LIMIT 1
                    """)
            try db.drop(table: "publication")
            // Parts are small: a changed part is read whole, and a record the store holds line for
            // line is skipped by comparing digests with the stored lines'; no digests of files are kept.
            try db.drop(table: "sourceRecords")
            // This code marks the prefixes it changes itself. Another program changing the store
            // (an app, sqlite3) leaves a line without its digest (v6's trigger sees to that when it
            // changes one), found through this small index; a record it deletes (this code never
            // deletes one) marks its prefix here.
            try db.execute(
                sql: """
                    CREATE INDEX record_without_digest ON record(id) WHERE lineDigest IS NULL;
                    CREATE TRIGGER record_deleted AFTER DELETE ON record
                    BEGIN INSERT OR IGNORE INTO changedPrefix (prefix) VALUES (substr(OLD.id, 1, 4)); END;
                    """)
        }
        migrator.registerMigration("v9: trusted keys") { db in
            // The devices whose files this device merges, each with the one public key it must be
            // signed with (format 2's "Signatures"): empty means every file merges, signed or not.
            try db.execute(
                sql: """
                    CREATE TABLE trustedKey (
                        device TEXT NOT NULL PRIMARY KEY, key TEXT NOT NULL, acceptedAt INTEGER NOT NULL
                    ) WITHOUT ROWID
                    """)
            // Every part is written again, signed: a device that trusts this one rejects its
            // unsigned files.
            try db.execute(sql: "UPDATE ownPart SET isPublished = 0")
            // Why a file's last read did not merge it, in one word ("untrusted": its signature is
            // not a trusted key's; "invalid_json"…), for status and metrics.
            try db.alter(table: "source") { table in
                table.add(column: "problemKind", .text)
            }
        }
        migrator.registerMigration("v10: merged elements of whole snapshots") { db in
            // For each whole-snapshot file (a format 1 `<device>.json`, any file not in parts), the
            // digests of its record elements whose versions all merged at its last read, 16 bytes
            // each. When the file changes, those elements are known merged and not read again: a
            // writer whose elements are not this device's lines (another tool's key order or
            // spacing) then costs what it changed, not what it holds. Parts need none: a peer's
            // part holds the store's own lines, found by their digests in `record`.
            try db.execute(sql: "CREATE TABLE mergedElement (source TEXT NOT NULL PRIMARY KEY, digests BLOB NOT NULL)")
        }
        migrator.registerMigration("v11: the count of records in conflict, kept") { db in
            // What the last pass that changed records counted (`StoreSession.recordsInConflictKept`):
            // a pass that changes nothing reports it instead of counting the records in conflict
            // one by one in their index again (50,000 of them took 2.5 ms of a 24 ms pass).
            try db.execute(sql: "CREATE TABLE conflictCount (count INTEGER NOT NULL)")
        }
        migrator.registerMigration("v12: the key this device's files are signed with") { db in
            // The public key of the signing key that this device's published parts were signed
            // with (`StoreSession.signingKeyOfParts`): a pass that signs with another (the key file
            // lost, replaced, or restored from a backup) writes every part again, or peers that
            // trust the new key would reject the parts left signed with the old one. None yet:
            // the next publication records the key it signs with.
            try db.execute(
                sql: "CREATE TABLE partsKey (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), key TEXT NOT NULL)")
        }
        migrator.registerMigration("v13: the size of each file this device wrote") { db in
            // The bytes of each file this device published (`WrittenFile.bytes`; none for the files
            // written before, nor for adopted ones): a file at one of its names is read up to the
            // largest it wrote there, even when that is over `--max-file-size` (a part that could
            // not split further, replaced and left in the folder by a pass that died before
            // removing it), and never beyond. Indexed so that each pass finds the few over the
            // limit without reading every row.
            try db.execute(sql: "ALTER TABLE writtenFile ADD COLUMN bytes INTEGER")
            try db.execute(sql: "CREATE INDEX writtenFileBytes ON writtenFile (bytes)")
        }
        return migrator
    }
}
