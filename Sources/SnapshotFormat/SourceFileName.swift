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

    /// Classify a considered name against the `device` found inside the file.
    public static func classify(name: String, deviceInside: String) -> SourceRole {
        guard isConsidered(name) else { return .skipped }
        guard let device = DeviceID(deviceInside) else {
            let problem = DeviceID.validationProblem(deviceInside) ?? "is not valid"
            return .rejected(reason: "'\(deviceInside)' is not a valid device ID: \(problem)")
        }
        let nameBytes = Array(name.utf8)
        if nameBytes.elementsEqual(ownFileName(for: device).utf8) { return .own }
        if isCopyName(nameBytes, of: device) { return .copy }
        return .rejected(reason: mismatchReason(name: name, device: device))
    }

    /// "<device>.json"
    public static func ownFileName(for device: DeviceID) -> String {
        device.rawValue + fileExtension
    }

    /// Whether `name` is the device's own file name or that of a sync tool's copy of it.
    public static func isSource(name: String, of device: DeviceID) -> Bool {
        switch classify(name: name, deviceInside: device.rawValue) {
        case .own, .copy: return true
        case .rejected, .skipped: return false
        }
    }

    /// The device, then a separator, then anything ending in ".json".
    private static func isCopyName(_ name: [UInt8], of device: DeviceID) -> Bool {
        let deviceBytes = Array(device.rawValue.utf8)
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

    private static func mismatchReason(name: String, device: DeviceID) -> String {
        let stem = String(decoding: name.utf8.dropLast(fileExtension.utf8.count), as: UTF8.self)
        if let named = DeviceID(stem) {
            return "the file is named for device '\(named)' but says it is from '\(device)'"
        }
        return "the name '\(name)' is neither '\(ownFileName(for: device))' nor a sync-tool copy of it,"
            + " but the file says it is from '\(device)'"
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
