import Crypto
import SnapshotFormat
import SyncStore

/// This device's files to put in place once the transaction that recorded them commits.
struct Publication {
    /// The generation every file of this publication carries.
    var generation: Int64
    /// The files written and fsynced under temporary names, in prefix order.
    var files: [WrittenPart]
    /// This device's own files the new layout no longer uses: removed once the new files are in place.
    var obsolete: [String]
    /// Why the files could not be written (a full disk): nothing is published, the merge is
    /// kept, and the parts are written by the next pass.
    var failure: SystemCallError?
    /// What the pass should be told about the publication (a part kept clear of a name another
    /// file holds, a generation at the format's limit).
    var warnings: [String] = []
}

/// One part's file, written to its temporary name.
struct WrittenPart {
    var part: PartPrefix
    var temporaryPath: String
    var name: String
    var row: OwnPart
    var fileDigest: String
}

extension SyncDevice {
    /// Inside the transaction: decides which of this device's parts to write (the leaves whose
    /// records changed, whose file is missing or not the one last written, split or joined as
    /// ``PartPolicy`` says), writes them to temporary files (fsynced), and records the new layout
    /// and the files written, before any is renamed into place: a crash then leaves an intent
    /// that the next pass finishes.
    ///
    /// - Returns: nil when every part is current (nothing to write and nothing to remove).
    ///
    /// - Parameter first: the parts of a first publication, written while the records were saved.
    func planPublication(
        _ session: StoreSession, findings: FolderFindings, now: Timestamp,
        first: (parts: [WrittenPart], failure: SystemCallError?)? = nil
    ) throws -> Publication? {
        var warnings = try checkSigningKey(session)
        var files = findings.rowsByName
        // Another device's file under this device's name is not the one last written for its
        // part, even at a generation this device wrote too (a twin's: its generations do not
        // push this device's, docs/format.md reading 19): it is replaced.
        for name in findings.othersUnderOwnName { files[name]?.generation = nil }
        if let first, first.failure == nil, first.parts.contains(where: { reasonNotToReplace(files[$0.name]) != nil }) {
            // A first part's name holds a file this device must not replace: its layout is
            // recorded, nothing of it published, and the parts are written below as any later
            // publication writes them, clear of that name.
            for file in first.parts { try? SystemCalls.remove(file.temporaryPath) }
            try session.replaceOwnParts(
                removing: [],
                saving: first.parts.map(\.row).map { row in
                    var row = row
                    row.generation = 0
                    return row
                })
        } else if let first {
            let generation = first.parts.first?.row.generation ?? 0
            if let failure = first.failure {
                return Publication(generation: generation, files: [], obsolete: [], failure: failure)
            }
            var toPublish: [WrittenPart] = []
            var rows: [OwnPart] = []
            for file in first.parts {
                if let read = findings.ownReads[file.part], read.recordsDigest == file.row.contentDigest {
                    // Its file in the folder holds this very content (this device's state was lost,
                    // or a twin wrote it): adopted, not written again.
                    try? SystemCalls.remove(file.temporaryPath)
                    if try session.writtenFile(part: file.part, generation: read.generation) == nil {
                        try session.recordWritten(
                            WrittenFile(
                                part: file.part.rawValue, generation: read.generation, fileDigest: read.fileDigest,
                                writtenAt: now.milliseconds, isAdopted: true))
                    }
                    var row = file.row
                    row.generation = read.generation
                    row.isPublished = true
                    rows.append(row)
                    continue
                }
                try session.recordWritten(
                    WrittenFile(
                        part: file.part.rawValue, generation: generation, fileDigest: file.fileDigest,
                        writtenAt: now.milliseconds, bytes: file.row.bytes))
                toPublish.append(file)
                rows.append(file.row)
            }
            try session.replaceOwnParts(removing: [], saving: rows)
            try session.clearChangedPrefixes(within: .whole)
            let obsolete = try obsoleteOwnFiles(session, findings: findings, layout: Set(first.parts.map(\.part)))
            if generation >= VersionVector.maximumCount { _ = nextGeneration(after: generation, warnings: &warnings) }
            guard !toPublish.isEmpty || !obsolete.isEmpty else { return nil }
            warnings += overLimitWarnings(toPublish)
            return Publication(generation: generation, files: toPublish, obsolete: obsolete, warnings: warnings)
        }
        var layout: [PartPrefix: OwnPart?] = [:]
        for row in try session.ownParts() {
            guard let prefix = row.part else { continue }
            layout[prefix] = row
        }
        if layout.isEmpty { layout[.whole] = .some(nil) }
        let changed = try session.changedPrefixes()
        let policy = settings.publishingPartPolicy
        // The parts under this device's name whose file it must not write over (another device's,
        // a directory…): a part above one is kept whole however large (reading 20).
        lazy var taken = files.compactMap { name, row in reasonNotToReplace(row) == nil ? nil : ownPart(named: name) }
        let dirty = layout.keys.sorted().filter { leaf in
            let row = layout[leaf] ?? nil
            if !isCurrent(leaf, row, files)
                || changed.contains(where: { PartPrefix(value: $0, digits: PartPrefix.maximumDigits).isWithin(leaf) })
            {
                return true
            }
            // Larger than the policy allows now (the split size or --max-file-size lowered), and
            // not kept whole above a taken name: split now, whether or not its records changed.
            guard let row, row.bytes >= 0,
                policy.splits(leaf, PartPolicy.Size(records: Int(row.records), fileBytes: Int(row.bytes)))
            else { return false }
            return !taken.contains { $0 != leaf && $0.isWithin(leaf) }
        }
        if dirty.isEmpty {
            let obsolete = try obsoleteOwnFiles(session, findings: findings, layout: Set(layout.keys))
            let generation = try session.highestWrittenGeneration()
            return obsolete.isEmpty && warnings.isEmpty
                ? nil : Publication(generation: generation, files: [], obsolete: obsolete, warnings: warnings)
        }
        let generation = nextGeneration(
            after: max(
                try session.highestWrittenGeneration(), try session.highestGeneration(seenFrom: device.rawValue)),
            warnings: &warnings)
        var writer = PartWriter(
            device: self, session: session, generation: generation, now: now, layout: layout, files: files,
            ownReads: findings.ownReads)
        defer { writer.discardUnkept() }
        do {
            try writer.write(dirty)
            try writer.join()
        } catch let error as SystemCallError {
            // The merge commits; the layout and the changes stay as they were, for the next pass.
            return Publication(generation: generation, files: [], obsolete: [], failure: error)
        }
        let written = writer.finish()
        warnings += written.warnings + overLimitWarnings(written.files)
        for part in written.kept {
            try session.clearChangedPrefixes(within: part.part ?? .whole)
        }
        for file in written.files {
            try session.recordWritten(
                WrittenFile(
                    part: file.part.rawValue, generation: generation, fileDigest: file.fileDigest,
                    writtenAt: now.milliseconds, bytes: file.row.bytes))
            try session.clearChangedPrefixes(within: file.part)
        }
        for adopted in written.adopted { try session.recordWritten(adopted) }
        try session.replaceOwnParts(
            removing: written.replaced.map(\.rawValue),
            saving: written.kept + written.files.map(\.row) + written.blocked)
        let obsolete = try obsoleteOwnFiles(session, findings: findings, layout: written.layout)
        guard !written.files.isEmpty || !obsolete.isEmpty || !warnings.isEmpty else { return nil }
        return Publication(generation: generation, files: written.files, obsolete: obsolete, warnings: warnings)
    }

    /// A warning for each file about to be published that is larger than the largest file read.
    ///
    /// Only a part that is not split further gets there (4 digits, holding records that are large
    /// together; one record larger than the limit alone; or a part kept whole because a name under
    /// it is taken). It is published all the same, since this device has no other place for its
    /// records, and read back up to its size (``ReadLimits/ownLargeFiles``); peers with the same
    /// limit do not read it.
    func overLimitWarnings(_ files: [WrittenPart]) -> [String] {
        let limit = settings.maxFileSize
        return files.filter { $0.row.bytes > limit }.map { file in
            "\(file.name) is \(file.row.bytes) bytes, larger than the largest file read (--max-file-size \(limit)), and its \(file.row.records) record(s) are not split further (a part of 4 digits, one record, or a part kept whole because a name under it is taken): a device reading with that limit does not read it; raise maxFileSize on every device to at least \(file.row.bytes)"
        }
    }

    /// Marks every part to be written again when they were signed with another key than this
    /// device's (its `signing.key` lost, replaced by a restored one, or rotated): peers that trust
    /// the key it signs with now would reject the parts left signed with the old one. Records the
    /// key the parts are signed with from now on.
    ///
    /// - Returns: the warning to give, if the key changed.
    private func checkSigningKey(_ session: StoreSession) throws -> [String] {
        let signing = key.publicKey.text
        let signedWith = try session.signingKeyOfParts()
        guard signedWith != signing else { return [] }
        try session.setSigningKeyOfParts(signing)
        guard let signedWith else { return [] }
        try session.markPartsUnpublished()
        return [
            "this device signs with key \(signing) now, and its files were signed with \(signedWith) (its signing.key was replaced, lost or rotated): every file is written again, signed with the new key; devices that trust the old one reject them until told: syncctl trust \(device) \(signing)"
        ]
    }

    /// The generation after `highest`, within the format's integers: a file under this device's
    /// name that claims the largest (another writer's, or a damaged one) leaves this device
    /// publishing that generation again, which readers still merge (a lower or equal generation
    /// is reported, never skipped while the file's stat changes), rather than one that no reader
    /// could read.
    func nextGeneration(after highest: Int64, warnings: inout [String]) -> Int64 {
        guard highest >= VersionVector.maximumCount else { return max(highest, 0) + 1 }
        warnings.append(
            "a file under this device's name claims generation \(highest), the largest the format allows: this device's files carry \(VersionVector.maximumCount) again instead of a higher one. Find the file (syncctl status) and remove it, or give the device that wrote it its own ID; once this device has published that generation itself, removing files no longer helps, and only a new device ID (a new --device and --state) lets its generations grow again"
        )
        return VersionVector.maximumCount
    }

    /// Why this device must not write over the file that `row` describes (one of its own names
    /// holds it), nil when it may: a file in a newer format (the contract: never deleted or
    /// overwritten), and another device's own file whose name is also one of this device's
    /// parts' (`zz.1.json` is device `zz.1`'s whole snapshot and part `1` of device `zz`; its
    /// content says which). The part is then written as its 16 children instead (``PartWriter``).
    func reasonNotToReplace(_ row: StoredSource?) -> String? {
        guard let row, row.present else { return nil }
        switch row.problemKind {
        case "newer_format":
            return
                "it holds a snapshot in a newer format, which is never overwritten (\(row.lastProblem ?? "newer format"))"
        case "not_regular":
            return "\(row.lastProblem ?? "it is not a regular file"), nor replaced; remove it or rename it"
        case "too_large":
            // Never read, so what it holds is unknown: neither overwritten nor copied whole.
            return
                "\(row.lastProblem ?? "it is larger than the largest file read"); raise --max-file-size to merge it, or remove it"
        case "unreadable":
            // Not read either (its permissions, an I/O error): it is merged once it can be read.
            return "\(row.lastProblem ?? "it cannot be read"); it is merged once it can be read"
        default:
            break
        }
        if let other = row.device, other != device.rawValue { return "it is device \(other)'s own file" }
        return nil
    }

    /// Whether a leaf's file in the folder is the one last written for it, read cleanly.
    func isCurrent(_ leaf: PartPrefix, _ row: OwnPart?, _ files: [String: StoredSource]) -> Bool {
        guard let row, row.isPublished, let file = files[leaf.fileName(for: device)] else { return false }
        return file.present && file.lastProblem == nil && file.device == device.rawValue
            && file.generation == row.generation
    }

    /// The temporary name of a part's file while it is written: a dot file (readers skip it),
    /// starting with `.<device>.json.` like every temporary file of this device.
    func temporaryName(for part: PartPrefix) -> String {
        ".\(ownFileName).\(SystemCalls.processID).\(part.isWhole ? "whole" : part.rawValue).tmp"
    }

    /// Whether `name` is one of this device's temporary names (``temporaryName(for:)``, of any
    /// process): `.<device>.json.<pid>.<whole or a prefix>.tmp`. Exactly that: device `me.json`'s
    /// temporaries (`.me.json.json.…`) or a person's `.me.json.tmp` are not this device's.
    func isOwnTemporaryName(_ name: String) -> Bool {
        let start = ".\(ownFileName)."
        guard name.hasPrefix(start), name.hasSuffix(".tmp") else { return false }
        let middle = name.dropFirst(start.count).dropLast(".tmp".count).split(
            separator: ".", omittingEmptySubsequences: false)
        guard middle.count == 2, !middle[0].isEmpty, middle[0].allSatisfy(\.isASCII), middle[0].allSatisfy(\.isNumber)
        else { return false }
        return middle[1] == "whole" || PartPrefix(String(middle[1])) != nil
    }

    /// This device's own files in the folder that `layout` does not use, and that this device
    /// wrote (read cleanly, its generation one this device wrote for that part): safe to remove,
    /// as everything in them is in the store. Files of others under this name stay, reported.
    private func obsoleteOwnFiles(_ session: StoreSession, findings: FolderFindings, layout: Set<PartPrefix>) throws
        -> [String]
    {
        var obsolete: [String] = []
        for row in findings.rows where row.present && row.device == device.rawValue && row.role == "own" {
            guard let part = ownPart(named: row.name), !layout.contains(part), row.lastProblem == nil,
                let generation = row.generation,
                let written = try session.writtenFile(part: part, generation: generation), !written.isAdopted
            else { continue }
            obsolete.append(row.name)
        }
        return obsolete
    }

    /// The part whose own file has `name`: `<device>.json` or `<device>.<prefix>.json`.
    func ownPart(named name: String) -> PartPrefix? {
        if name == ownFileName { return .whole }
        let head = device.rawValue + "."
        guard name.hasPrefix(head), name.hasSuffix(".json") else { return nil }
        return PartPrefix(String(name.dropFirst(head.count).dropLast(".json".count)))
    }
}

/// Writes the parts of one publication: splits a part that is too large, joins siblings that
/// are small together, keeps a part whose content its file already holds.
private struct PartWriter {
    let device: SyncDevice
    let session: StoreSession
    let generation: Int64
    let now: Timestamp
    /// The layout before, with each leaf's row (nil for a leaf never written).
    let before: [PartPrefix: OwnPart?]
    let files: [String: StoredSource]
    let ownReads: [PartPrefix: OwnFileRead]
    var policy: PartPolicy { device.settings.publishingPartPolicy }

    /// The leaves as they are now.
    private var leaves: Set<PartPrefix>
    /// Leaves written to temporary files, by prefix.
    private var written: [PartPrefix: WrittenPart] = [:]
    /// Leaves whose file already holds their content, with their row.
    private var kept: [PartPrefix: OwnPart] = [:]
    /// Files another writer published with this device's content, adopted.
    private var adopted: [WrittenFile] = []
    /// Prefixes of the layout before that the new one no longer has.
    private var replaced: Set<PartPrefix> = []
    /// Sizes of prefixes from the store, for parts too large to read at once.
    private var sizes: [PartPrefix: PartPolicy.Size] = [:]
    /// Leaves of 4 digits whose name is taken: not written, their rows kept unpublished (generation
    /// 0, which no file has) so that every pass tries again.
    private var blocked: [PartPrefix: OwnPart] = [:]
    private var warnings: [String] = []

    init(
        device: SyncDevice, session: StoreSession, generation: Int64, now: Timestamp, layout: [PartPrefix: OwnPart?],
        files: [String: StoredSource], ownReads: [PartPrefix: OwnFileRead]
    ) {
        self.device = device
        self.session = session
        self.generation = generation
        self.now = now
        before = layout
        self.files = files
        self.ownReads = ownReads
        leaves = Set(layout.keys)
    }

    /// Writes each part of `parts`, or its children when it is too large.
    mutating func write(_ parts: [PartPrefix]) throws {
        var queue = parts.sorted().reversed() as [PartPrefix]
        while let part = queue.popLast() {
            // A part under a leaf kept whole since it was queued (below) is in that leaf's file.
            if isUnderALeaf(part) { continue }
            let name = part.fileName(for: device.device)
            if let why = device.reasonNotToReplace(files[name]) {
                if part.digits < PartPrefix.maximumDigits {
                    warnings.append(
                        "\(name) is not replaced: \(why); its records are published as the 16 parts under it instead")
                    split(part, into: &queue)
                } else if let parent = part.parent, parent.digits > 0,
                    device.reasonNotToReplace(files[parent.fileName(for: device.device)]) == nil
                {
                    // A part of 4 digits cannot split further: its records go out in its parent's
                    // file, kept whole however large (docs/format.md, reading 20).
                    warnings.append(
                        "\(name) is not replaced: \(why); the records of part \(part.rawValue) are published in \(parent.fileName(for: device.device)) with the rest of part \(parent.rawValue) instead"
                    )
                    try keepWhole(parent)
                } else {
                    warnings.append(
                        "\(name) is not replaced: \(why); the records of part \(part.rawValue) stay unpublished until it is renamed or removed"
                    )
                    let built = try BuiltPart(part, of: device, session: session, generation: generation, now: now)
                    blocked[part] = built.row(generation: 0, isPublished: false)
                }
                continue
            }
            // A part of unknown size, or far larger than a part may be (a format 1 store's one
            // file), is measured before its lines are read, so that millions of records are never
            // held at once; any other is built, and split if it turned out too large.
            let known = (before[part] ?? nil)?.bytes ?? -1
            if known < 0 || Int(known) > 4 * policy.splitBytes,
                policy.splits(part, try size(of: part))
            {
                split(part, into: &queue)
                continue
            }
            let built = try BuiltPart(
                part, of: device, session: session, generation: generation, now: now, expectedBytes: Int(known))
            if policy.splits(part, PartPolicy.Size(records: built.records, fileBytes: built.bytes.count)) {
                split(part, into: &queue)
                continue
            }
            try place(built)
        }
    }

    /// Whether a leaf holds `part` (one of its ancestors is a leaf).
    private func isUnderALeaf(_ part: PartPrefix) -> Bool {
        var ancestor = part.parent
        while let prefix = ancestor {
            if leaves.contains(prefix) { return true }
            ancestor = prefix.parent
        }
        return false
    }

    /// Makes `parent` a leaf again, written whole, in place of the parts under it (written, kept
    /// or blocked so far in this publication, or in the layout before).
    private mutating func keepWhole(_ parent: PartPrefix) throws {
        for part in leaves where part.rawValue.hasPrefix(parent.rawValue) {
            leaves.remove(part)
            if let file = written.removeValue(forKey: part) { try? SystemCalls.remove(file.temporaryPath) }
            kept.removeValue(forKey: part)
            blocked.removeValue(forKey: part)
            if before[part] != nil { replaced.insert(part) }
        }
        leaves.insert(parent)
        try place(try BuiltPart(parent, of: device, session: session, generation: generation, now: now))
    }

    private mutating func split(_ part: PartPrefix, into queue: inout [PartPrefix]) {
        leaves.remove(part)
        if before[part] != nil { replaced.insert(part) }
        leaves.formUnion(part.children)
        queue.append(contentsOf: part.children.reversed())
    }

    /// Keeps, adopts or writes a built part.
    private mutating func place(_ built: BuiltPart) throws {
        let part = built.part
        if let previous = before[part] ?? nil, previous.contentDigest == built.contentDigest,
            device.isCurrent(part, previous, files)
        {
            // Marked changed, but its file in the folder already holds this content.
            kept[part] = previous
            return
        }
        if let read = ownReads[part], read.recordsDigest == built.contentDigest {
            // Another writer under this ID (a twin, or a restored copy) published this very content:
            // rewriting it would only start a ping-pong of generations. Adopt it.
            if try session.writtenFile(part: part, generation: read.generation) == nil {
                adopted.append(
                    WrittenFile(
                        part: part.rawValue, generation: read.generation, fileDigest: read.fileDigest,
                        writtenAt: now.milliseconds, isAdopted: true))
            }
            kept[part] = built.row(generation: read.generation, isPublished: true)
            return
        }
        let path = device.folder.path(of: device.temporaryName(for: part))
        try? SystemCalls.remove(path)
        try SystemCalls.writeNewFile(path, built.bytes, exactMode: true)
        written[part] = WrittenPart(
            part: part, temporaryPath: path, name: part.fileName(for: device.device),
            row: built.row(generation: generation, isPublished: false), fileDigest: built.fileDigest)
    }

    /// Joins, from each part written up, every 16 siblings that are small together.
    mutating func join() throws {
        var candidates = written.keys.sorted()
        while let leaf = candidates.popLast() {
            guard leaves.contains(leaf), let parent = try parentToJoin(leaf) else { continue }
            for child in parent.children {
                leaves.remove(child)
                if let file = written.removeValue(forKey: child) { try? SystemCalls.remove(file.temporaryPath) }
                kept.removeValue(forKey: child)
                if before[child] != nil { replaced.insert(child) }
            }
            leaves.insert(parent)
            try place(try BuiltPart(parent, of: device, session: session, generation: generation, now: now))
            candidates.append(parent)
        }
    }

    private mutating func parentToJoin(_ leaf: PartPrefix) throws -> PartPrefix? {
        var siblingSizes: [PartPrefix: PartPolicy.Size] = [:]
        if let parent = leaf.parent, device.reasonNotToReplace(files[parent.fileName(for: device.device)]) == nil,
            !parent.children.contains(where: { blocked[$0] != nil })
        {
            for sibling in parent.children where leaves.contains(sibling) {
                if let file = written[sibling] {
                    siblingSizes[sibling] = PartPolicy.Size(
                        records: Int(file.row.records), fileBytes: Int(file.row.bytes))
                } else if let row = kept[sibling] ?? (before[sibling] ?? nil), row.bytes >= 0 {
                    siblingSizes[sibling] = PartPolicy.Size(records: Int(row.records), fileBytes: Int(row.bytes))
                }
            }
        }
        return policy.joinedParent(of: leaf, leaves: leaves) { siblingSizes[$0] }
    }

    /// What the writing gave, for the transaction to record.
    mutating func finish() -> (
        files: [WrittenPart], kept: [OwnPart], blocked: [OwnPart], adopted: [WrittenFile], replaced: [PartPrefix],
        layout: Set<PartPrefix>, warnings: [String]
    ) {
        let files = written.values.sorted { $0.part < $1.part }
        written = [:]
        let gone = replaced.filter { !leaves.contains($0) }
        return (files, Array(kept.values), Array(blocked.values), adopted, gone.sorted(), leaves, warnings)
    }

    /// Removes the temporary files not handed over (a failed publication).
    func discardUnkept() {
        for file in written.values { try? SystemCalls.remove(file.temporaryPath) }
    }

    /// The records under `prefix`, from the store (three digits deeper at once).
    private mutating func size(of prefix: PartPrefix) throws -> PartPolicy.Size {
        if let size = sizes[prefix] { return size }
        let digits = min(PartPrefix.maximumDigits, prefix.digits + 3)
        var totals: [PartPrefix: (records: Int, bytes: Int)] = [:]
        for (deep, size) in try session.lineSizes(in: prefix, digits: digits) {
            for level in prefix.digits...digits {
                let ancestor = PartPrefix(value: deep.value >> (4 * (digits - level)), digits: level)
                let sum = totals[ancestor] ?? (0, 0)
                totals[ancestor] = (sum.records + size.records, sum.bytes + size.bytes)
            }
        }
        // Every prefix down to `digits` under this one is now known, those with no record as empty.
        func fill(_ under: PartPrefix) {
            let total = totals[under] ?? (0, 0)
            sizes[under] = PartPolicy.Size(records: total.records, lineBytes: total.bytes)
            if under.digits < digits, total.records > 0 { under.children.forEach(fill) }
        }
        fill(prefix)
        return sizes[prefix]!
    }
}

/// One part's file built in memory from the store's lines, with its digests.
private struct BuiltPart {
    let part: PartPrefix
    let bytes: [UInt8]
    let records: Int
    /// SHA-256 (hex) of its records' line digests: whether its content changed.
    let contentDigest: String
    /// Its digest as this device keeps it (``PublishedLayout/fileDigest(of:)``): to recognize it as this device's.
    let fileDigest: String

    /// - Parameter expectedBytes: the size of the part's file before, if known (negative if not):
    ///   room for it and some growth is made at once, instead of doubling the buffer up to it
    ///   (a quarter of the page faults of a merge of one changed record at 1,000,000 records).
    init(
        _ part: PartPrefix, of device: SyncDevice, session: StoreSession, generation: Int64, now: Timestamp,
        expectedBytes: Int = -1
    ) throws {
        self.part = part
        var bytes = device.fileHeader(part: part, generation: generation, now: now)
        if expectedBytes > 0 { bytes.reserveCapacity(expectedBytes + expectedBytes / 8 + 4096) }
        let headerCount = bytes.count
        var content = ContentDigest()
        var records = 0
        try session.forEachLine(in: part) { _, line, digest in
            SnapshotWriter.appendLine(line, isFirst: records == 0, into: &bytes)
            content.add(lineDigest: digest)
            records += 1
        }
        self.records = records
        contentDigest = content.finalize()
        fileDigest = device.signAndEnd(&bytes, headerCount: headerCount, recordsDigest: contentDigest)
        self.bytes = bytes
    }

    func row(generation: Int64, isPublished: Bool) -> OwnPart {
        OwnPart(
            prefix: part.rawValue, generation: generation, contentDigest: contentDigest, bytes: Int64(bytes.count),
            records: Int64(records), isPublished: isPublished)
    }
}
