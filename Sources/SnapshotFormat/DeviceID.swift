/// A device ID: 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit.
public struct DeviceID: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// The ID as written in files and file names.
    public let rawValue: String

    /// The most characters a device ID may have.
    public static let maximumLength = 64

    /// Wraps `text` when it is a valid device ID; nil otherwise.
    public init?(_ text: String) {
        guard Self.validationProblem(text) == nil else { return nil }
        rawValue = text
    }

    /// Wraps the text of these UTF-8 bytes when it is a valid device ID; nil otherwise. The rule
    /// of ``init(_:)``, checked on the bytes (a valid ID is ASCII, so bytes and scalars agree):
    /// every record read names one device or more.
    public init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard (1...Self.maximumLength).contains(bytes.count), isLetterOrDigit(bytes[0]), bytes.allSatisfy(isAllowed)
        else { return nil }
        rawValue = String(decoding: bytes, as: UTF8.self)
    }

    /// Why `text` is not a valid device ID, as a sentence for a person; nil when it is valid.
    public static func validationProblem(_ text: String) -> String? {
        if text.isEmpty { return "is empty" }
        // Count scalars, not grapheme clusters: a valid ID is ASCII, where both agree, and a
        // combining mark must not hide behind a base letter.
        if text.unicodeScalars.count > maximumLength {
            return "is longer than \(maximumLength) characters"
        }
        if let bad = text.unicodeScalars.first(where: { !isAllowed($0) }) {
            return "has \(describe(bad)): device IDs use only a-z 0-9 . _ - (lower case)"
        }
        if let first = text.unicodeScalars.first, !isLetterOrDigit(first) {
            return "must start with a letter or digit"
        }
        return nil
    }

    /// ``validationProblem(_:)`` with the rule it breaks, for a person who typed the ID: "has
    /// 'B': device IDs use only a-z 0-9 . _ - (lower case)", "is empty: a device ID is 1 to 64 …".
    public static func problemWithRule(_ text: String) -> String? {
        guard let problem = validationProblem(text) else { return nil }
        return problem.contains("a-z") ? problem : problem + ": a device ID is 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit"
    }

    /// The ID itself.
    public var description: String { rawValue }

    /// Orders IDs by their UTF-8 bytes.
    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool {
        lhs.rawValue.precedesInUTF8Order(rhs.rawValue)
    }

    /// Decodes a single string and refuses it unless it is a valid device ID.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        if let problem = Self.validationProblem(text) {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)' is not a valid device ID: \(problem)")
        }
        rawValue = text
    }

    /// Encodes the ID as a single string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

// The characters of a device ID, said once, on bytes; a scalar beyond ASCII is never one.
private func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
    scalar.isASCII && isLetterOrDigit(UInt8(scalar.value))
}

private func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
    scalar.isASCII && isAllowed(UInt8(scalar.value))
}

private func isLetterOrDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
}

private func isAllowed(_ byte: UInt8) -> Bool {
    isLetterOrDigit(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
}

/// A character quoted so that a person can see it, even when it is blank or invisible.
private func describe(_ scalar: Unicode.Scalar) -> String {
    let code = String(scalar.value, radix: 16, uppercase: true)
    let codePoint = "U+" + String(repeating: "0", count: max(0, 4 - code.count)) + code
    if scalar.value > 0x20 && scalar.value < 0x7F { return "'\(scalar)'" }
    if scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
        || scalar.properties.generalCategory == .format
    {
        return codePoint
    }
    return "'\(scalar)' (\(codePoint))"
}
