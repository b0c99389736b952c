import SnapshotFormat
import SnapshotMerge
import SyncStore

/// What `syncctl tidy` removed and kept.
public struct TidyReport: Codable, Hashable, Sendable {
    public struct Kept: Codable, Hashable, Sendable {
        public var name: String
        public var reason: String
    }
    /// Sync-tool copies removed (with ``dryRun``: that would be removed).
    public var removed: [String] = []
    /// Whether nothing was removed: ``removed`` names what would have been.
    public var dryRun = false
    /// Copies kept, each with why.
    public var kept: [Kept] = []
    /// The merge pass that ran first.
    public var merge: MergeReport
}

extension SyncDevice {
    /// Removes sync-tool copies that hold nothing this device's published file does not.
    ///
    /// A copy is removed only when it reads cleanly and merging it into this device's published
    /// state changes nothing: each of its versions is in the published file or superseded there
    /// by the contract's merge rules (docs/format.md explains this reading). Own files of any
    /// device are never removed.
    ///
    /// - Parameter dryRun: remove nothing; the report names what would be removed (the merge
    ///   runs and publishes all the same, as `syncctl merge` does).
    public func tidy(dryRun: Bool = false) throws -> TidyReport {
        try locked {
            let merge = try pass(edit: Optional<(StoreSession, Timestamp) throws -> Void>.none).report
            var report = TidyReport(merge: merge)
            report.dryRun = dryRun
            guard
                !merge.sources.contains(where: {
                    ownPart(named: $0.name) != nil && ($0.status == .skipped || $0.status == .rejected)
                })
            else {
                return report
            }
            // A copy the merge did not take (now or at the read its stat still matches) is kept
            // below, whatever it was before: its role may be from an earlier read that merged it.
            for source in merge.sources where source.role == "copy" && source.problemKind == nil {
                switch try copyVerdict(source.name) {
                case nil where dryRun:
                    report.removed.append(source.name)
                case nil:
                    try? SystemCalls.remove(folder.path(of: source.name))
                    report.removed.append(source.name)
                    logger.notice(
                        "removed a sync-tool copy whose versions are all in this device's file",
                        metadata: ["file": "\(source.name)"])
                case let reason?:
                    report.kept.append(TidyReport.Kept(name: source.name, reason: reason))
                }
            }
            // Copies the merge could not read or did not take (a newer format, a key not
            // trusted…) are kept too: said, with why.
            for source in merge.sources
            where source.problemKind != nil && (source.role == "copy" || SourceFileName.looksLikeCopy(source.name)) {
                report.kept.append(
                    TidyReport.Kept(name: source.name, reason: "not merged: \(source.reason ?? "\(source.status)")"))
            }
            return report
        }
    }

    /// Why a copy must be kept, nil when it may go.
    private func copyVerdict(_ name: String) throws -> String? {
        let read: (bytes: [UInt8], status: FileStatus)
        do {
            read = try folder.readSnapshotBytes(name, limit: settings.maxFileSize)
        } catch {
            return error.description
        }
        let reading: SnapshotReading
        do {
            reading = try SnapshotReader.read(bytes: read.bytes, fileName: name)
        } catch {
            return error.description
        }
        guard reading.role == .copy else { return "not a copy" }
        guard reading.problems.isEmpty else {
            return "it has records this device rejected; kept for a person to look at"
        }
        return try store.reading { session -> String? in
            let parts = try session.ownParts()
            guard !parts.isEmpty, parts.allSatisfy(\.isPublished) else {
                return "this device has not published its snapshot yet"
            }
            for version in reading.versions {
                let held = try session.record(version.id)
                if RecordMerge.merge(held: held, incoming: [version]) != held {
                    return "record \(version.id) has a version this device's file does not hold"
                }
            }
            return nil
        }
    }
}
