import Foundation
import SyncEngine
import Testing

/// When syncd advises a line in Syncthing's `.stignore`, so that Syncthing does not pick up its
/// temporary files (real files in a real folder; the advice is logged once at start).
@Suite("the advice to ignore syncd's temporary files in a Syncthing folder")
struct SyncthingIgnoreTests {
    @Test("a folder without Syncthing's .stfolder marker gets no advice")
    func notSyncthing() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        #expect(SyncthingIgnore.advice(forFolder: sandbox.shared) == nil)
    }

    @Test("a Syncthing folder without .stignore, or whose .stignore lacks the line, gets the advice naming the line and the file")
    func advised() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try FileManager.default.createDirectory(atPath: sandbox.shared + "/.stfolder", withIntermediateDirectories: false)
        let advice = try #require(SyncthingIgnore.advice(forFolder: sandbox.shared))
        #expect(advice.contains(SyncthingIgnore.recommendedLine) && advice.contains(sandbox.shared + "/.stignore"))
        try "// notes\n*.bak\n(?d).DS_Store\n".write(toFile: sandbox.shared + "/.stignore", atomically: true, encoding: .utf8)
        #expect(SyncthingIgnore.advice(forFolder: sandbox.shared) != nil)
    }

    @Test("a folder inside a Syncthing folder is advised about the .stignore at Syncthing's root, where a rooted pattern does not reach it")
    func nested() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let lists = sandbox.shared + "/lists"
        try FileManager.default.createDirectory(atPath: lists, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: sandbox.shared + "/.stfolder", withIntermediateDirectories: false)
        let advice = try #require(SyncthingIgnore.advice(forFolder: lists))
        #expect(advice.contains(sandbox.shared + "/.stignore") && !advice.contains(lists + "/.stignore"), "\(advice)")
        try "/.*.json.*.tmp\n".write(toFile: sandbox.shared + "/.stignore", atomically: true, encoding: .utf8)
        #expect(SyncthingIgnore.advice(forFolder: lists) != nil, "a rooted pattern matches at the root only")
        #expect(SyncthingIgnore.advice(forFolder: sandbox.shared) == nil)
        #expect(SyncthingIgnore.advice(forFolder: lists + "/..") == nil, "the root, however it is spelled")
        try "(?d).*.json.*.tmp\n".write(toFile: sandbox.shared + "/.stignore", atomically: true, encoding: .utf8)
        #expect(SyncthingIgnore.advice(forFolder: lists) == nil)
    }

    @Test("a .stignore holding the line (with flags in any order, or a wider one), or including another file, needs no advice")
    func alreadyIgnored() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try FileManager.default.createDirectory(atPath: sandbox.shared + "/.stfolder", withIntermediateDirectories: false)
        for text in ["*.bak\n(?d).*.json.*.tmp\n", "(?i)(?d).*.json.*.tmp", "  .*.tmp  \r\n", "#include more-ignores.txt\n"] {
            try text.write(toFile: sandbox.shared + "/.stignore", atomically: true, encoding: .utf8)
            #expect(SyncthingIgnore.advice(forFolder: sandbox.shared) == nil, "\(text)")
        }
    }
}
