import Foundation
import SnapshotFormat
@testable import SyncEngine
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The listing of the shared folder: every entry, each considered one with the status of the
/// very entry (a link's own, never its target's), whether the statuses are taken on one core
/// (few names) or in stretches on every core (many).
@Suite("listing the shared folder")
struct DirectoryListingTests {
    @Test("each considered entry has its own status, few entries or many, links too; a name not valid UTF-8 is marked, shown with its bad bytes, and looked at by its own bytes", arguments: [5, 1_500])
    func statusesOfEntries(files count: Int) throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        // Sizes differ from file to file, so a status given to the wrong name shows.
        for index in 0..<count {
            try sandbox.write("device-\(index).json", String(repeating: "x", count: index % 97 + 1))
        }
        try sandbox.write("notes.txt", "not a snapshot")
        try sandbox.write(".hidden.json", "a temporary")
        try FileManager.default.createDirectory(atPath: sandbox.sharedPath("folder.json"), withIntermediateDirectories: false)
        #expect(symlink(sandbox.sharedPath("device-0.json"), sandbox.sharedPath("link.json")) == 0)
        // A name that is not valid UTF-8 (its String is repaired): its status is still its own.
        let undecodable: [CChar] = Array("caf".utf8CString.dropLast()) + [CChar(bitPattern: 0xE9)] + Array(".json".utf8CString)
        let descriptor = sandbox.sharedPath("").withCString { directory in
            undecodable.withUnsafeBufferPointer { name in
                let folder = open(directory, O_RDONLY | O_DIRECTORY)
                defer { close(folder) }
                return openat(folder, name.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            }
        }
        #expect(descriptor >= 0)
        #expect(write(descriptor, "12345678901", 11) == 11)
        close(descriptor)

        let entries = try SystemCalls.directoryListing(sandbox.shared, wantsStatus: SourceFileName.isConsidered)
        var byName: [String: FileStatus?] = [:]
        for entry in entries { byName[entry.name] = entry.status }
        let invalid = entries.filter { !$0.isValidUTF8 }.map(\.name)
        #expect(entries.count == count + 5)
        for index in 0..<count {
            let status = byName["device-\(index).json"] ?? nil
            #expect(status?.kind == .regular && status?.size == Int64(index % 97 + 1), "device-\(index).json")
        }
        #expect(byName["notes.txt"] == .some(nil))
        #expect(byName[".hidden.json"] == .some(nil))
        #expect((byName["folder.json"] ?? nil)?.kind == .directory)
        #expect((byName["link.json"] ?? nil)?.kind == .symbolicLink)
        // A name that is not valid UTF-8 is listed with its bad byte shown, marked, and looked at
        // by its own bytes
        #expect(invalid == [#"caf\xE9.json"#], "\(invalid)")
        let status = byName[#"caf\xE9.json"#] ?? nil
        #expect(status?.kind == .regular && status?.size == 11)
    }

    @Test("a name not valid UTF-8 is shown with each byte of its bad sequences as \\xHH, its valid text as it is")
    func displayedNames() {
        let cases: [([UInt8], String)] = [
            (Array("caf".utf8) + [0xE9], #"caf\xE9"#),
            ([0xC3, 0x28] + Array("é".utf8), #"\xC3(é"#),
            ([0xFF, 0x0F], #"\xFF\#u{0F}"#),
            ([0xE2, 0x82], #"\xE2\x82"#),
        ]
        for (bytes, shown) in cases {
            #expect(bytes.withUnsafeBytes { SystemCalls.displayedName($0) } == shown, "\(bytes)")
        }
    }
}
