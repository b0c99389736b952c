/// Text for people (a terminal, a log line) made of what others chose: file names, reasons
/// quoting them.
public enum TextLine {
    /// "1 record", "2 records": a count and its noun (an English plural in -s).
    public static func counted(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    /// `text` with each control character written as `\u{…}`: C0 and C1 controls (newline,
    /// carriage return, escape…), DEL, and the bidirectional overrides and isolates that can make
    /// a line read other than it is. Text that holds none, and no `\u{` of its own, is shown as it
    /// is (so a shown text without `\u{` is the text); otherwise each of its own backslashes is
    /// doubled too, so that no text reads as another (`a\u{A}` is not `a` and a newline, nor is
    /// `a\` and a newline).
    public static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) || text.contains("\\u{") else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else if scalar == "\\" {
                escaped += "\\\\"
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
