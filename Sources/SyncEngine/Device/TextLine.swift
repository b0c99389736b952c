/// Text for people (a terminal, a log line) made of what others chose: file names, reasons
/// quoting them.
public enum TextLine {
    /// `text` with each control character written as `\u{…}`: C0 and C1 controls (newline,
    /// carriage return, escape…), DEL, and the bidirectional overrides and isolates that can make
    /// a line read other than it is. A backslash that begins `\u{` in `text` itself is doubled,
    /// so that a name holding those characters does not read as an escaped control.
    public static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) || text.contains("\\u{") else { return text }
        var escaped = ""
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            if isControl(scalar) {
                escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else if scalar == "\\", scalars[(index + 1)...].starts(with: ["u", "{"]) {
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
