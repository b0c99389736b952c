#if canImport(Glibc)
    import Glibc
#endif
import SnapshotFormat
import SyncStore

/// What `syncctl status` shows: the device, its folder and store, counts, sources and warnings.
public struct StatusReport: Codable, Hashable, Sendable {
    public struct Source: Codable, Hashable, Sendable {
        public var name: String
        public var device: String?
        public var role: String?
        public var generation: Int64?
        public var highestGeneration: Int64?
        public var lastMerged: String?
        public var lastProblem: String?
        public var lastWarning: String?
        public var present: Bool
        /// Whether its last read was rejected for trust.
        public var isUntrusted: Bool
        /// Why the whole file was not merged at its last read, in one word (as `merge --json`
        /// says it: `untrusted`, `invalid_json`, `too_large`, `held_back`…); nil when it merged.
        public var problemKind: String? = nil
    }

    public var device: String
    public var sharedFolder: String
    public var stateDirectory: String
    public var store: String
    public var counts: RecordCounts
    /// The newest generation among this device's published files.
    public var publishedGeneration: Int64?
    public var lastPublished: String?
    /// How many files (parts) this device's snapshot is published in.
    public var parts: Int
    public var sources: [Source]
    /// The devices trusted (this one included), empty when signatures are not checked.
    public var trusted: [TrustedDevice]
    /// The files in the folder whose last read was rejected for trust.
    public var rejectedForTrust: [String]
    public var warnings: [String]
}

extension SyncDevice {
    /// The device's state as the store knows it (no file is read).
    public func status() throws -> StatusReport {
        let trusted = try trustedDevices()
        return try store.reading { session in
            let sources = try session.sources()
            let parts = try session.ownParts()
            let published = parts.filter(\.isPublished).max { $0.generation < $1.generation }
            let partName = { (part: OwnPart) in (PartPrefix(part.prefix) ?? .whole).fileName(for: self.device) }
            let latest = try published.flatMap {
                try session.writtenFile(part: PartPrefix($0.prefix) ?? .whole, generation: $0.generation)
            }
            var warnings: [String] = folderProblem.map { [$0] } ?? []
            for source in sources where source.present {
                if let warning = source.lastWarning { warnings.append("\(source.name): \(warning)") }
                if let problem = source.lastProblem, problem.contains("held back") {
                    warnings.append("\(source.name): \(problem)")
                }
            }
            if let other = sources.first(where: {
                $0.present && $0.role == "own" && $0.device == device.rawValue && ownPart(named: $0.name) == nil
            }) {
                warnings.append("\(other.name) claims to be this device's own file")
            }
            let rejectedForTrust = sources.filter { $0.present && $0.isUntrusted }.map(\.name)
            if !rejectedForTrust.isEmpty {
                warnings.append(
                    "\(rejectedForTrust.count) file(s) rejected for trust (not signed by a trusted key): see their problems above, and syncctl trust --review"
                )
            }
            // Saved but not yet published: a publication that failed or was cut short (a full disk,
            // a read-only folder, a crash between the commit and the renames), an edit made through
            // SQL, a new key; for a moment, a pass of syncd's.
            if try parts.contains(where: { !$0.isPublished }) || !session.changedPrefixes().isEmpty {
                warnings.append(
                    "the store holds changes that this device's files do not hold yet (a publication that failed or was cut short, an edit by another program, a new key): syncctl merge publishes them, or says why it cannot (a running syncd does at its next pass)"
                )
            }
            // Missing as the last merge saw the folder, or gone since (a person or a tool deleted
            // them): checked in the folder when it can be, as cheaply as one lstat a file.
            let present = Set(sources.filter(\.present).map(\.name))
            let missing = parts.map(partName).filter { !present.contains($0) || (folderProblem == nil && isGone($0)) }
            if parts.isEmpty || !missing.isEmpty {
                let names = parts.isEmpty ? ownFileName : missing.joined(separator: ", ")
                warnings.append(
                    "this device's file(s) \(names) are not in the shared folder; run syncctl merge to publish them")
            }
            return StatusReport(
                device: device.rawValue, sharedFolder: folder.path, stateDirectory: settings.stateDirectory,
                store: storePath, counts: try session.counts(), publishedGeneration: published?.generation,
                lastPublished: latest.map { Timestamp(milliseconds: $0.writtenAt).written }, parts: parts.count,
                sources: sources.map {
                    StatusReport.Source(
                        name: $0.name, device: $0.device, role: $0.role, generation: $0.generation,
                        highestGeneration: $0.highestGeneration,
                        lastMerged: $0.lastMergedAt.map { Timestamp(milliseconds: $0).written },
                        lastProblem: $0.lastProblem, lastWarning: $0.lastWarning, present: $0.present,
                        isUntrusted: $0.isUntrusted, problemKind: $0.problemKind)
                },
                trusted: trusted, rejectedForTrust: rejectedForTrust, warnings: warnings)
        }
    }

    /// Whether the file `name` is not in the shared folder (and not for want of permission to look).
    private func isGone(_ name: String) -> Bool {
        do {
            _ = try SystemCalls.statusOfLink(folder.path(of: name))
            return false
        } catch {
            return error.errno == ENOENT
        }
    }

    /// Every record held, in id order, optionally of one type; tombstones only when asked.
    public func records(type: String? = nil, includeDeleted: Bool = false) throws -> [ReadOnly.Record] {
        var records: [ReadOnly.Record] = []
        try forEachRecord(type: type, includeDeleted: includeDeleted) { records.append($0) }
        return records
    }

    /// Calls `body` with every record held, in id order, one at a time (a command printing a
    /// million records holds one, not all), as ``records(type:includeDeleted:)`` lists them.
    /// The records are read in one read transaction: a consistent state of the store.
    ///
    /// - Parameter onlyUnresolved: only records with conflicts that need a person
    ///   (``conflictedRecords()``).
    public func forEachRecord(
        type: String? = nil, includeDeleted: Bool = false, onlyUnresolved: Bool = false,
        _ body: (ReadOnly.Record) throws -> Void
    ) throws {
        try store.reading { session in
            try session.forEachRecord(type: type, onlyUnresolved: onlyUnresolved) { record in
                if includeDeleted || !record.version.deleted { try body(record) }
            }
        }
    }

    /// The length of the longest record type the store holds (for a column of types).
    public func longestRecordType() throws -> Int {
        try store.reading { try $0.longestType() }
    }

    /// One record as held, nil when unknown.
    public func record(_ id: RecordID) throws -> ReadOnly.Record? {
        try store.reading { try $0.record(id) }
    }

    /// Every record with conflicts that need a person.
    public func conflictedRecords() throws -> [ReadOnly.Record] {
        try store.reading { try $0.records(onlyUnresolved: true) }
    }
}
