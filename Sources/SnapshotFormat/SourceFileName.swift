/// What a reader makes of a directory entry's name in the shared folder.
public enum SourceFileName {
    /// The extension every considered name ends in, compared exactly.
    public static let fileExtension = ".json"

    /// What may follow the device ID in the name of a sync tool's copy of the device's file.
    public static let copySeparators = [" ", "(", "_conflict-", ".sync-conflict-"]

    /// Whether a reader considers this name at all: ends in ".json" exactly (lower case) and does not start with ".".
    public static func isConsidered(_ name: String) -> Bool {
        // Byte-wise, not String comparison: names compare exactly, never by Unicode equivalence.
        let bytes = name.utf8
        return !bytes.starts(with: ".".utf8) && bytes.reversed().starts(with: fileExtension.utf8.reversed())
    }

    /// Classify a considered name against the `device` and `part` found inside the file.
    ///
    /// A part's file is `<device>.<part>.json` or a copy of it; the whole snapshot's is
    /// `<device>.json` or a copy of it. A name that reads two ways (`laptop.37.json`: part `37`
    /// of `laptop`, or device `laptop.37`) is decided by what the file says inside.
    public static func classify(name: String, deviceInside: String, part: PartPrefix = .whole) -> SourceRole {
        guard isConsidered(name) else { return .skipped }
        guard let device = DeviceID(deviceInside) else {
            let problem = DeviceID.validationProblem(deviceInside) ?? "is not valid"
            return .rejected(reason: "'\(deviceInside)' is not a valid device ID: \(problem)")
        }
        let nameBytes = Array(name.utf8)
        if nameBytes.elementsEqual(part.fileName(for: device).utf8) { return .own }
        if isCopyName(nameBytes, of: stem(device, part)) { return .copy }
        return .rejected(reason: mismatchReason(name: name, device: device, part: part))
    }

    /// What a file's name starts with: `<device>`, or `<device>.<part>` for a part.
    private static func stem(_ device: DeviceID, _ part: PartPrefix) -> String {
        part.isWhole ? device.rawValue : device.rawValue + "." + part.rawValue
    }

    /// Whether `name` looks like a sync tool's copy of some file (a copy separator after at least
    /// one character), whatever the file holds: for reports about files that could not be read.
    public static func looksLikeCopy(_ name: String) -> Bool {
        guard isConsidered(name) else { return false }
        let stem = name.utf8.dropLast(fileExtension.utf8.count)
        return copySeparators.contains { separator in
            let separator = Array(separator.utf8)
            return stem.indices.dropFirst().contains { stem[$0...].starts(with: separator) }
        }
    }

    /// "<device>.json"
    public static func ownFileName(for device: DeviceID) -> String {
        device.rawValue + fileExtension
    }

    /// Whether `name` is the device's own file name or that of a sync tool's copy of it.
    public static func isSource(name: String, of device: DeviceID, part: PartPrefix = .whole) -> Bool {
        switch classify(name: name, deviceInside: device.rawValue, part: part) {
        case .own, .copy: return true
        case .rejected, .skipped: return false
        }
    }

    /// The stem (a device, or a device and a part), then a separator, then anything ending in ".json".
    private static func isCopyName(_ name: [UInt8], of stem: String) -> Bool {
        let deviceBytes = Array(stem.utf8)
        guard name.starts(with: deviceBytes) else { return false }
        let afterDevice = name[deviceBytes.count...]
        return copySeparators.contains { separator in
            let separatorBytes = Array(separator.utf8)
            guard afterDevice.starts(with: separatorBytes) else { return false }
            // The ".json" must come after the separator, not overlap it.
            let rest = afterDevice.dropFirst(separatorBytes.count)
            return rest.reversed().starts(with: fileExtension.utf8.reversed())
        }
    }

    private static func mismatchReason(name: String, device: DeviceID, part: PartPrefix) -> String {
        let expected = part.fileName(for: device)
        let inside = part.isWhole ? "'\(device)' (its whole snapshot, no part)" : "part \(part.rawValue) of '\(device)'"
        let stem = String(decoding: name.utf8.dropLast(fileExtension.utf8.count), as: UTF8.self)
        if part.isWhole, let named = DeviceID(stem) {
            return "the file is named for device '\(named)' but says it is from '\(device)'"
        }
        return "the name '\(name)' is neither '\(expected)' nor a sync-tool copy of it,"
            + " but the file says it is \(inside)"
    }
}

/// What a reader does with a file in the shared folder, judged by its name and the device inside.
public enum SourceRole: Hashable, Sendable {
    /// The device's own file, `<device>.json`: merged.
    case own
    /// A sync tool's copy of the device's file: merged like the device's own file.
    case copy
    /// A name that fits neither for the device inside (or an invalid device): reported, not merged.
    case rejected(reason: String)
    /// A name the reader does not consider at all: the file is never opened.
    case skipped
}
