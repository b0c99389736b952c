/// Why a document is not strict I-JSON, and the byte offset where that was found.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The byte offset in the input (counting a byte order mark, if any) where the problem was found.
    public var offset: Int
    /// The problem, for a person: e.g. `duplicate key "name"` or `invalid UTF-8`.
    public var reason: String

    /// An error at `offset` for `reason`.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// `at byte <offset>: <reason>`.
    public var description: String { "at byte \(offset): \(reason)" }
}

extension JSONParseError {
    /// The reason given when the input ends inside a document.
    static let truncatedReason = "unexpected end of input (the file is truncated)"

    /// The reason given for arrays and objects nested deeper than ``StrictJSON/maximumDepth``.
    /// Such input can still be valid JSON, which the contract sets no depth for: a record nested
    /// that deep is rejected on its own, not its whole file (``SnapshotReader``, docs/format.md).
    static let tooDeepReason = "arrays and objects are nested deeper than \(StrictJSON.maximumDepth) levels"

    /// The error for a container opened at `offset` beyond ``StrictJSON/maximumDepth``.
    static func tooDeep(at offset: Int) -> JSONParseError {
        JSONParseError(offset: offset, reason: tooDeepReason)
    }

    /// Whether this is the refusal of nesting deeper than ``StrictJSON/maximumDepth`` (the input
    /// up to there was valid; what follows was not looked at).
    public var isTooDeep: Bool { reason == Self.tooDeepReason }

    /// A string shown in a message: quoted, controls escaped, cut after 60 scalars.
    static func displayed(_ text: String) -> String {
        var shown = ""
        for (count, scalar) in text.unicodeScalars.enumerated() {
            if count == 60 {
                shown += "…"
                break
            }
            switch scalar {
            case "\"": shown += "\\\""
            case "\\": shown += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                shown += "\\u" + hex4(scalar.value)
            default: shown.unicodeScalars.append(scalar)
            }
        }
        return "\"" + shown + "\""
    }

    /// A literal from the input shown in a message, cut after 40 bytes.
    static func displayedLiteral(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let text = String(decoding: bytes.prefix(40), as: UTF8.self)
        return bytes.count > 40 ? text + "…" : text
    }

    /// Four upper-case hexadecimal digits.
    static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
