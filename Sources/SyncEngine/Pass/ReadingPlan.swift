import SnapshotFormat

/// How a pass reads its changed files: a few small files at once; a large folder one group of
/// record ids at a time, so that a first merge of millions of records in parts never holds more
/// than a few groups.
///
/// Parts (`<device>.3F.json`, with 2 digits or more) are read in the group of their first two
/// digits, in id order. Whole snapshots and parts of one digit can hold any id: they are read
/// first, and their versions handed to each group. A name only suggests the part: should the
/// file inside say otherwise (`laptop.37.json` is device `laptop.37`'s whole snapshot), the pass
/// starts again with that file read first (``misplaced``).
struct ReadingPlan {
    typealias File = (name: String, status: FileStatus)

    /// Digits of a group's prefix in a large pass.
    static let groupDigits = 2
    /// A pass reading fewer bytes than this reads them as one group.
    static let oneGroupBytes: Int64 = 8 << 20

    /// Files read before the groups (their versions go to every group).
    var spanning: [File] = []
    /// The groups, in id order: their prefix, the parts read with them, and where the store's
    /// lines that their records may equal are (to skip those records unread).
    var groups: [(prefix: PartPrefix, files: [File], heldRanges: [PartPrefix])] = []

    /// A plan for `changed`; `readFirst` are files that turned out not to be the part their name suggests.
    init(_ changed: [File], readFirst: Set<String> = []) {
        let bytes = changed.reduce(Int64(0)) { $0 + $1.status.size }
        guard bytes >= Self.oneGroupBytes else {
            // A part's records are in its prefix; a whole snapshot's may be anywhere. The ranges
            // are the outermost prefixes: those none of whose ancestors (at most four) is there too.
            let suggested = Set(changed.map { Self.suggestedPart($0.name) ?? .whole })
            let ranges = suggested.filter { part in
                sequence(first: part, next: \.parent).dropFirst().allSatisfy { !suggested.contains($0) }
            }
            if !changed.isEmpty { groups = [(PartPrefix.whole, changed, ranges.sorted())] }
            return
        }
        var byGroup: [PartPrefix: [File]] = [:]
        for file in changed {
            if !readFirst.contains(file.name), let part = Self.suggestedPart(file.name), part.digits >= Self.groupDigits {
                byGroup[PartPrefix(value: part.value >> (4 * (part.digits - Self.groupDigits)), digits: Self.groupDigits), default: []]
                    .append(file)
            } else {
                spanning.append(file)
            }
        }
        // Every group, also those with no part changed: whole snapshots' versions go to each.
        let prefixes = spanning.isEmpty ? byGroup.keys.sorted() : PartPrefix.whole.childrenAt(digits: Self.groupDigits)
        groups = prefixes.map { ($0, byGroup[$0] ?? [], [$0]) }
    }

    /// The group holding `id`.
    func group(of id: RecordID) -> Int {
        guard groups.count > 1 else { return 0 }
        let prefix = PartPrefix(of: id, digits: Self.groupDigits)
        // With files read first, there is a group for every prefix, in order.
        if groups.count == 1 << (4 * Self.groupDigits) { return Int(prefix.value) }
        return groups.firstIndex { $0.prefix == prefix } ?? 0
    }

    /// The part a file's name suggests: `<device>.<1-4 upper-case hex digits>`, then `.json` or
    /// a sync tool's copy separator; nil for any other name.
    static func suggestedPart(_ name: String) -> PartPrefix? {
        let bytes = Array(name.utf8)
        var index = 1
        while index < bytes.count {
            defer { index += 1 }
            guard bytes[index] == UInt8(ascii: ".") else { continue }
            var end = index + 1
            while end < bytes.count, end - index <= PartPrefix.maximumDigits, isUpperHex(bytes[end]) { end += 1 }
            let digits = end - index - 1
            guard digits >= 1, digits <= PartPrefix.maximumDigits else { continue }
            let rest = bytes[end...]
            let endsHere = rest.elementsEqual(SourceFileName.fileExtension.utf8)
            let isCopy = SourceFileName.copySeparators.contains { rest.starts(with: $0.utf8) }
            guard endsHere || isCopy else { continue }
            return PartPrefix(String(decoding: bytes[(index + 1)..<end], as: UTF8.self))
        }
        return nil
    }

    private static func isUpperHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}

extension PartPrefix {
    /// Every prefix of `digits` digits under this one, in order.
    func childrenAt(digits: Int) -> [PartPrefix] {
        guard digits > self.digits else { return [self] }
        return children.flatMap { $0.childrenAt(digits: digits) }
    }
}
