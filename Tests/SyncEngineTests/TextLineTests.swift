import SyncEngine
import Testing

/// Text for people: counts said in words, and names that cannot forge a line.
@Suite("text for people")
struct TextLineTests {
    @Test("a count takes its noun's plural but for one")
    func counts() {
        #expect(TextLine.counted(0, "record") == "0 records")
        #expect(TextLine.counted(1, "record") == "1 record")
        #expect(TextLine.counted(2, "file") == "2 files")
    }

    @Test("a name with a newline or an override is shown with escapes, its own backslashes doubled; a plain one as it is")
    func controls() {
        #expect(TextLine.escapingControls(#"C:\w.json"#) == #"C:\w.json"#)
        #expect(TextLine.escapingControls("a\nb.json") == #"a\u{A}b.json"#)
        #expect(TextLine.escapingControls("a\\\nb") == #"a\\\u{A}b"#)
        #expect(TextLine.escapingControls("x\u{202E}y") == #"x\u{202E}y"#)
    }
}
