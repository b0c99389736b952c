// Fuzz target `filename`: device IDs and the shared folder's file-name rules (own files, parts,
// sync-tool copies).
//
// The input is `name \n device \n part` (missing lines are empty). For any input:
// SourceFileName.classify never crashes and says what a plain reference reading of the contract
// says (skipped, own, copy or rejected), and DeviceID accepts exactly the IDs the contract allows.
// A valid device and part made from the input's bytes: the part's own file name classifies as own
// under that part and is rejected under any other; a copy name made from it classifies as a copy.

@_cdecl("SnapshotFormatFuzz_filename")
func fuzzFileName(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FileNameFuzzTarget.check(fuzzBytes(data, size))
    return 0
}

enum FileNameFuzzTarget {
    static func check(_ input: [UInt8]) {
        let lines = input.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false).map(Array.init)
        let nameBytes = lines.count > 0 ? lines[0] : []
        let deviceBytes = lines.count > 1 ? lines[1] : []
        let partBytes = lines.count > 2 ? lines[2] : []
        let name = String(decoding: nameBytes, as: UTF8.self)
        let deviceText = String(decoding: deviceBytes, as: UTF8.self)
        let part = PartPrefix(String(decoding: partBytes, as: UTF8.self)) ?? madePart(from: partBytes)

        let device = DeviceID(deviceText)
        fuzzCheck((device != nil) == isReferenceDevice(deviceText), "device \(fuzzShown(deviceBytes)): \(device != nil)")
        fuzzCheck((DeviceID.validationProblem(deviceText) == nil) == (device != nil), "validationProblem of \(fuzzShown(deviceBytes))")

        let role = SourceFileName.classify(name: name, deviceInside: deviceText, part: part)
        let expected = referenceRole(name: name, device: device, part: part)
        fuzzCheck(
            sameKind(role, expected),
            "\(fuzzShown(Array(name.utf8))) with device \(fuzzShown(deviceBytes)), part \(part): \(role), expected \(expected)")
        if let device {
            let isSource = SourceFileName.isSource(name: name, of: device, part: part)
            fuzzCheck(isSource == (role == .own || role == .copy), "isSource disagrees with classify for \(name)")
        }

        let made = madeDevice(from: deviceBytes)
        checkMadeNames(device: made, part: part, middle: nameBytes)
    }

    // MARK: - The contract, read plainly

    private static func isReferenceDevice(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        func isLetterOrDigit(_ s: Unicode.Scalar) -> Bool { ("a"..."z").contains(s) || ("0"..."9").contains(s) }
        return (1...64).contains(scalars.count) && isLetterOrDigit(scalars[0])
            && scalars.allSatisfy { isLetterOrDigit($0) || $0 == "." || $0 == "_" || $0 == "-" }
    }

    private static func referenceRole(name: String, device: DeviceID?, part: PartPrefix) -> SourceRole {
        let bytes = Array(name.utf8)
        let json = Array(".json".utf8)
        guard bytes.first != UInt8(ascii: "."), bytes.count >= json.count, Array(bytes.suffix(json.count)) == json
        else { return .skipped }
        guard let device else { return .rejected(reason: "") }
        let stem = Array(device.rawValue.utf8) + (part.isWhole ? [] : Array(("." + part.rawValue).utf8))
        if bytes == stem + json { return .own }
        guard bytes.count >= stem.count, Array(bytes.prefix(stem.count)) == stem else { return .rejected(reason: "") }
        let rest = Array(bytes.dropFirst(stem.count))
        for separator in [" ", "(", "_conflict-", ".sync-conflict-"].map({ Array($0.utf8) }) {
            if rest.count >= separator.count + json.count, Array(rest.prefix(separator.count)) == separator,
                Array(rest.suffix(json.count)) == json
            {
                return .copy
            }
        }
        return .rejected(reason: "")
    }

    private static func sameKind(_ a: SourceRole, _ b: SourceRole) -> Bool {
        switch (a, b) {
        case (.own, .own), (.copy, .copy), (.skipped, .skipped), (.rejected, .rejected): true
        default: false
        }
    }

    // MARK: - Names made from a valid device and part

    /// A valid device ID from any bytes: each folded onto `a-z 0-9 . _ -`, the first onto a letter or digit.
    private static func madeDevice(from bytes: [UInt8]) -> DeviceID {
        let allowed = Array("abcdefghijklmnopqrstuvwxyz0123456789._-".utf8)
        var text: [UInt8] = []
        for (index, byte) in bytes.prefix(DeviceID.maximumLength).enumerated() {
            text.append(allowed[Int(byte) % (index == 0 ? 36 : allowed.count)])
        }
        if text.isEmpty { text = Array("laptop".utf8) }
        guard let device = DeviceID(String(decoding: text, as: UTF8.self)) else {
            fatalError("the valid device ID \(fuzzShown(text)) is refused")
        }
        return device
    }

    /// A part from any bytes: 0 to 4 digits, by the bytes' count, valued by their first two.
    private static func madePart(from bytes: [UInt8]) -> PartPrefix {
        let value = UInt16(bytes.first ?? 0) << 8 | UInt16(bytes.dropFirst().first ?? 0)
        return PartPrefix(value: value, digits: bytes.count % (PartPrefix.maximumDigits + 1))
    }

    private static func checkMadeNames(device: DeviceID, part: PartPrefix, middle: [UInt8]) {
        let own = part.fileName(for: device)
        let role = SourceFileName.classify(name: own, deviceInside: device.rawValue, part: part)
        fuzzCheck(role == .own, "\(own) is not the own file of \(device), part \(part): \(role)")
        for other in [PartPrefix.whole, part.parent, part.children.first, part.children.last].compactMap({ $0 })
        where other != part {
            let misread = SourceFileName.classify(name: own, deviceInside: device.rawValue, part: other)
            guard case .rejected = misread else {
                fatalError("\(own) is \(misread) for \(device), part \(other), though it is part \(part)'s")
            }
        }
        let stem = part.isWhole ? device.rawValue : device.rawValue + "." + part.rawValue
        let separator = SourceFileName.copySeparators[middle.count % SourceFileName.copySeparators.count]
        let copy = stem + separator + String(decoding: middle, as: UTF8.self) + ".json"
        let copyRole = SourceFileName.classify(name: copy, deviceInside: device.rawValue, part: part)
        fuzzCheck(copyRole == .copy, "\(copy) is not a copy of \(device), part \(part): \(copyRole)")
    }
}
