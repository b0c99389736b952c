import Crypto
import SnapshotFormat
import SyncStore

/// What a pass found in the shared folder, file by file: the rows to save, the report so far, and
/// this device's own files as read.
struct FolderFindings {
    /// One row per entry seen, in the order seen.
    var rows: [StoredSource] = []
    /// The rows as the store held them before this pass, to write only what changed.
    var previousRows: [String: StoredSource] = [:]
    var report = MergeReport()
    /// Entries present in the folder.
    var presentNames: Set<String> = []
    /// Entries with a snapshot's name that are not regular files (a directory, a link, a FIFO):
    /// never read, and never replaced by a publication.
    var notRegular: [String: FileStatus] = [:]
    /// Files under this device's name that this pass found another device's (a generation it
    /// never wrote, or content it did not publish): never the file last written for their part,
    /// whatever generation they claim.
    var othersUnderOwnName: Set<String> = []
    /// How large a file the pass reads, by name.
    var readLimits: ReadLimits
    /// This device's own files (by part) that this pass read cleanly.
    var ownReads: [PartPrefix: OwnFileRead] = [:]
    /// The whole snapshots merged by the pass, with the digests of their elements that merged
    /// (the store keeps them: ``StoreSession/saveMergedElements(_:of:)``).
    var mergedElements: [(name: String, elements: [MergedElement])] = []
    /// Live records in the store before this pass (for the mass-deletion valve), read when first needed.
    var liveRecords: Int?
}

/// How large a file a pass reads (and copies before replacing it): `--max-file-size`, or more
/// for this device's own large parts.
struct ReadLimits: Sendable {
    var maxFileSize: Int64
    /// The names under which this device published a file larger than `maxFileSize`, with the
    /// largest it published there (``SyncDevice/ownFilesReadBeyondLimit(_:)``). A part that
    /// cannot split further can be that large (docs/format.md, reading 20); refusing it would
    /// make this device take its own file for another writer's and publish its records
    /// elsewhere, or leave a replaced one in the folder for good.
    var ownLargeFiles: [String: Int64] = [:]

    /// The largest size of the file `name` that is read.
    func of(_ name: String) -> Int64 { max(maxFileSize, ownLargeFiles[name] ?? 0) }
}

extension FolderFindings {
    /// The rows of the pass by name, and a row for each entry that is not a regular file (with
    /// the problem kind `not_regular`; not one the store keeps): what a publication must leave alone.
    var rowsByName: [String: StoredSource] {
        var rows = Dictionary(self.rows.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        for (name, status) in notRegular {
            var row = StoredSource(
                name: name, fileSystemDevice: status.fileSystemDevice, inode: status.inode, size: status.size,
                modifiedNanos: status.modifiedNanos, changedNanos: status.changedNanos, lastSeenAt: 0)
            row.lastProblem = SnapshotFileReadError.notRegular(status.kind).description
            row.problemKind = "not_regular"
            rows[name] = row
        }
        return rows
    }
}

/// One of this device's own files as a pass read it: to tell whether it already holds what this
/// device would publish for its part, whatever generation it carries (another device using the
/// same ID may have written the same content).
struct OwnFileRead {
    var generation: Int64
    /// SHA-256 (hex) of its records' line digests, when the file has the layout SnapshotSync writes.
    var recordsDigest: String?
    /// Its digest as this device keeps it of a file it writes (``PublishedLayout/fileDigest(of:)``).
    var fileDigest: String
}

extension SyncDevice {
    /// Takes one file read into the findings: its row, its outcome, its warnings.
    ///
    /// - Parameters:
    ///   - tally: what its records gave, over every group.
    ///   - heldBack: why the mass-deletion valve holds it back, if it does (nothing of it merges).
    func review(
        _ source: OpenedSource, tally: SourceTally, previous: StoredSource?, hasWritten: Bool, heldBack: String?,
        session: StoreSession, now: Timestamp, into findings: inout FolderFindings
    ) {
        let name = source.name
        let status = source.status
        var row = StoredSource(
            name: name, fileSystemDevice: status.fileSystemDevice, inode: status.inode, size: status.size,
            modifiedNanos: status.modifiedNanos, changedNanos: status.changedNanos, lastSeenAt: now.milliseconds)
        if let previous {
            row.device = previous.device
            row.role = previous.role
            row.generation = previous.generation
            row.highestGeneration = previous.highestGeneration
            row.lastMergedAt = previous.lastMergedAt
        }
        var outcome = SourceOutcome(name: name, status: .merged, rejectedRecords: [])
        defer {
            row.problemKind = outcome.problemKind
            findings.rows.append(row)
            findings.report.sources.append(outcome)
        }
        let reading: SnapshotReading
        switch source.content {
        case .unreadable(.vanished):
            // Gone between the listing and the reading (a sync tool removing or renaming it): no
            // problem of the file's; the event of its removal asks for the next pass.
            outcome.status = .ignored
            outcome.reason = SnapshotFileReadError.vanished.description
            outcome.problemKind = "vanished"
            logger.debug("source gone before it was read", metadata: ["source.name": "\(name)"])
            return
        case .unreadable(let error):
            (outcome.status, outcome.problemKind) =
                switch error {
                case .tooLarge, .grewPastLimit: (.rejected, "too_large")
                case .notRegular: (.ignored, "not_regular")
                case .unreadable, .vanished: (.skipped, "unreadable")
                }
            outcome.reason = error.description
            row.lastProblem = error.description
            logger.warning("source not read", metadata: ["source.name": "\(name)", "reason": "\(error)"])
            return
        case .invalid(let error, _):
            outcome.status = error.verdict == "rejected" ? .rejected : .skipped
            outcome.reason = error.description
            outcome.problemKind = error.kind
            row.lastProblem = error.description
            if case .untrusted(let device, _) = error {
                row.device = device.rawValue
                outcome.device = device.rawValue
            }
            logger.warning("source not merged", metadata: ["source.name": "\(name)", "reason": "\(error)"])
            return
        case .split(_, _, let header, _):
            reading = header
        case .whole(let whole, _, _):
            reading = whole
        }
        let problems = tally.problems.sorted { $0.recordIndex < $1.recordIndex }
        outcome.device = reading.device.rawValue
        outcome.role = reading.role == .own ? "own" : "copy"
        outcome.generation = reading.generation
        outcome.records = reading.recordCount
        outcome.rejectedRecords = problems.map(\.description) + tally.schemaProblems
        row.device = outcome.device
        row.role = outcome.role
        row.generation = reading.generation
        row.highestGeneration = max(previous?.highestGeneration ?? 0, reading.generation)
        row.lastMergedAt = now.milliseconds
        var notes = reading.warnings
        if let highest = previous?.highestGeneration, reading.generation < highest, previous?.device == outcome.device {
            notes.append(
                "its generation went backwards from \(highest) to \(reading.generation) (restored from a backup, or an earlier file at this name was another writer's?); merged anyway"
            )
            // Said once per step: the name's highest is this generation from now on, or every later
            // file of the device would be reported as well, for good after a made-up generation
            // (2^53−1). This device's own names keep their highest: its next generation goes above.
            if reading.device != device { row.highestGeneration = reading.generation }
        }
        if reading.device == device, let own = source.own {
            let fileDigest = own.fileDigest
            // Its content may be adopted (not rewritten; see PartWriter.place), when it is signed
            // with this device's key: one signed otherwise (an earlier key, a twin's, none) is
            // rewritten, or peers that trust this device's key would reject it, whether or not
            // this device trusts keys itself.
            if reading.role == .own, problems.isEmpty, own.isSignedWithOwnKey {
                findings.ownReads[reading.part] = OwnFileRead(
                    generation: reading.generation, recordsDigest: own.recordsDigest, fileDigest: fileDigest)
            }
            if hasWritten, let impostor = try? impostorWarning(reading, fileDigest: fileDigest, session: session) {
                findings.othersUnderOwnName.insert(name)
                if own.isSignedWithOwnKey {
                    notes.append(impostor)
                } else {
                    // Not this device's, nor its earlier self restored from a backup (which signs
                    // with the same key): its generation does not push this device's, so that a
                    // made-up one (2^53−1) cannot pin it for good (docs/format.md, reading 19).
                    row.highestGeneration = previous?.highestGeneration
                    notes.append(
                        impostor
                            + "; it is not signed with this device's key, so its generation does not count toward this device's")
                }
            } else if !hasWritten, reading.role == .own, problems.isEmpty {
                // A brand-new store takes a file under its name as its own earlier self (a state
                // directory lost or restored): this device's from now on, removed once its parts
                // no longer use it.
                try? session.recordWritten(
                    WrittenFile(
                        part: reading.part.rawValue, generation: reading.generation, fileDigest: fileDigest,
                        writtenAt: now.milliseconds))
                // Said once, by this first merge: it is also what a second machine given this ID
                // by mistake sees, which must stop before the two overwrite each other's files.
                // (Once a pass, however many parts: the first file read names them.)
                let marker = "under this device's ID \"\(device)\" but not signed with this device's key"
                if !own.isSignedWithOwnKey, !findings.report.warnings.contains(where: { $0.contains(marker) }) {
                    let note =
                        "\(name)\(reading.part.isWhole ? "" : " (and this device's other parts)") is \(marker): it is taken as this device's earlier self (a state directory lost or set up again) and merged. If another machine still runs as \"\(device)\", stop this one and give it its own --device ID (and a new --state), or the two overwrite each other's files"
                    findings.report.warnings.append(note)
                    logger.warning("\(note)")
                }
            }
        }
        notes += tally.futureDates.warnings()
        if var heldBack {
            // A file of this device's layout is replaced by its publication (a copy kept): letting
            // it through later would find nothing. Another under its name (desk.json beside its
            // parts) stays, held back, until let through.
            if reading.device == device, reading.role == .own, (try? session.isOwnPart(reading.part)) == true,
                let advice = heldBack.firstRange(of: Self.acceptDeletionsAdvice)
            {
                heldBack.replaceSubrange(advice.lowerBound..., with: Self.ownNameHeldBackAdvice)
            }
            outcome.status = .heldBack
            outcome.reason = heldBack
            outcome.problemKind = "held_back"
            row.lastProblem = heldBack
            // A held-back file is read again on every pass until it is let through.
            row.size = -1
            findings.report.warnings.append("\(name): \(heldBack)")
            logger.warning("source held back", metadata: ["source.name": "\(name)", "reason": "\(heldBack)"])
            // What the file says of itself holds whether or not it merges: another device under
            // this device's name (a wipe under its name is that case), a clock far ahead.
            findings.report.warnings += notes.map { "\(name): \($0)" }
            row.lastWarning = notes.isEmpty ? nil : notes.joined(separator: "; ")
            outcome.warning = row.lastWarning
            return
        }
        if reading.part == .whole || tally.readByDigest {
            findings.mergedElements.append((name, tally.mergedElements))
        }
        row.lastProblem = problems.isEmpty ? nil : "\(problems.count) record(s) rejected, first: \(problems[0])"
        if !tally.schemaProblems.isEmpty {
            let note =
                "\(tally.schemaProblems.count) version(s) do not fit their schema, first: \(tally.schemaProblems[0])"
            row.lastProblem = row.lastProblem.map { $0 + "; " + note } ?? note
            // Read again on every pass: once the schema files change, the versions merge.
            row.size = -1
        }
        if tally.newerSchemas > 0 {
            notes.append(
                "\(tally.newerSchemas) version(s) carry a schemaVersion newer than the schema files declare: merged unchecked, kept verbatim"
            )
        }
        findings.report.warnings += notes.map { "\(name): \($0)" }
        row.lastWarning = notes.isEmpty ? nil : notes.joined(separator: "; ")
        outcome.warning = row.lastWarning
        // A few lines a file: a file of 200,000 rejected records would otherwise log 200,000
        // lines at every pass that reads it (the report and `status` keep the count and the first).
        for problem in problems.prefix(Self.rejectionsLogged) {
            logger.warning("record rejected", metadata: ["source.name": "\(name)", "record.problem": "\(problem)"])
        }
        if problems.count > Self.rejectionsLogged {
            logger.warning(
                "\(problems.count - Self.rejectionsLogged) more record(s) rejected; syncctl merge --json lists them all",
                metadata: ["source.name": "\(name)"])
        }
        // One line a file, at warning when its problems are new: the file is read again at every
        // pass (every poll on a network folder) until the schema files change.
        let schemaNote = tally.schemaProblems.first.map { "\(tally.schemaProblems.count) \($0)" }
        let isNew = loggedSchemaProblems.withLock { logged in
            defer { logged[name] = schemaNote }
            return logged[name] != schemaNote
        }
        if let first = tally.schemaProblems.first {
            logger.log(
                level: isNew ? .warning : .debug, "versions do not fit their schema: not merged",
                metadata: [
                    "source.name": "\(name)", "versions": "\(tally.schemaProblems.count)", "record.problem": "\(first)",
                ])
        }
    }

    /// How the warning about a file under this device's name written by another device starts.
    static let anotherDeviceUsesThisID = "ANOTHER DEVICE IS USING THIS DEVICE'S ID"

    /// How many of a file's rejected records a pass logs one by one.
    static let rejectionsLogged = 10

    /// A loud warning when a file under this device's name is not one this device wrote.
    private func impostorWarning(_ reading: SnapshotReading, fileDigest: String, session: StoreSession)
        throws -> String?
    {
        let what = reading.part.isWhole ? "generation \(reading.generation)" : "part \(reading.part.rawValue) generation \(reading.generation)"
        guard let written = try session.writtenFile(part: reading.part, generation: reading.generation) else {
            return
                "\(Self.anotherDeviceUsesThisID) \"\(device)\": \(what) was never written by this device (or this state directory was restored from an older backup). Give each device its own --device ID"
        }
        if written.isAdopted {
            return
                "\(Self.anotherDeviceUsesThisID) \"\(device)\": \(what) was written by it (with the same records as this device, so it is not rewritten). Give each device its own --device ID"
        }
        // Format 1 kept the same digest of the files it wrote (see PublishedLayout.fileDigest).
        guard written.fileDigest == fileDigest else {
            return
                "\(Self.anotherDeviceUsesThisID) \"\(device)\": \(what) holds content this device did not publish. Give each device its own --device ID"
        }
        return nil
    }
}

extension SourceOutcome {
    /// The outcome of a file whose stat is unchanged since it was last read: not read again.
    init(unchanged row: StoredSource) {
        self.init(
            name: row.name, status: .unchanged, device: row.device, role: row.role, generation: row.generation,
            reason: row.lastProblem, warning: row.lastWarning, rejectedRecords: [], problemKind: row.problemKind)
    }
}

extension Sequence where Element == UInt8 {
    /// Lower-case hexadecimal digits.
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension SHA256.Digest {
    var hexString: String { Array(self).hexString }
}
