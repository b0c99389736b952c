import Foundation
import SnapshotFormat
import Testing

@Suite("syncctl key, trust and untrust")
struct TrustCommandTests {
    @Test("--help of key, trust and untrust exits 0 and names every option", arguments: [
        ("key", ["--rotate", "--json", "--shared"]),
        ("trust", ["--list", "--review", "--accept", "<device>", "<key>", "--json"]),
        ("untrust", ["<device>", "--json"]),
    ])
    func help(command: String, options: [String]) throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let run = try workspace.run([command, "--help"])
        #expect(run.status == 0, "\(run)")
        for option in options { #expect(run.stdout.contains(option), "syncctl \(command) --help: \(option)") }
    }

    @Test(
        "key prints this device's public key; trust DEVICE KEY, trust --list, a rejected file's exit code 3 and message, status, --review --accept, untrust"
    )
    func trustingByHand() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let desk = workspace.location(state: workspace.state("desk"), device: "desk")
        let phone = workspace.location(state: workspace.state("phone"), device: "phone")
        let tablet = workspace.location(state: workspace.state("tablet"), device: "tablet")
        for (location, text) in [(phone, "from phone"), (tablet, "from tablet")] {
            #expect(try workspace.run(["put", "--type", "Note"] + location, stdin: #"{"text": "\#(text)"}"#).status == 0)
        }

        // key: the key alone on standard output, its fingerprint on standard error; --json has both
        let key = try workspace.run(["key"] + phone)
        #expect(key.status == 0, "\(key)")
        let phoneKey = key.stdout.trimmingCharacters(in: .newlines)
        #expect(PublicKey(text: phoneKey) != nil, "\(key)")
        let keyJSON = try #require(try workspace.run(["key", "--json"] + phone).json() as? [String: Any])
        let fingerprint = try #require(keyJSON["fingerprint"] as? String)
        #expect(keyJSON["key"] as? String == phoneKey && key.stderr.contains(fingerprint))

        // trust DEVICE KEY: phone's files merge, tablet's are rejected with exit code 3 and a message
        let trusted = try workspace.run(["trust", "phone", phoneKey] + desk)
        #expect(trusted.status == 0, "\(trusted)")
        #expect(trusted.stdout.contains(fingerprint))
        let merge = try workspace.run(["merge"] + desk)
        #expect(merge.status == 3, "\(merge)")
        #expect(merge.stdout.contains("device tablet is not trusted") && merge.stdout.contains("syncctl trust tablet ed25519:"), "\(merge)")
        let texts = try #require(try workspace.run(["list", "--json"] + desk).json() as? [[String: Any]])
            .compactMap { ($0["fields"] as? [String: Any])?["text"] as? String }
        #expect(texts == ["from phone"])
        let list = try #require(try workspace.run(["trust", "--list", "--json"] + desk).json() as? [[String: Any]])
        #expect(list.compactMap { $0["device"] as? String } == ["desk", "phone"])
        let status = try #require(try workspace.run(["status", "--json"] + desk).json() as? [String: Any])
        #expect(status["rejectedForTrust"] as? [String] == ["tablet.json"])

        // trust --review lists tablet's key; --accept with its fingerprint (spaces optional) trusts it
        let review = try #require(try workspace.run(["trust", "--review", "--json"] + desk).json() as? [[String: Any]])
        let tabletEntry = try #require(review.first { $0["device"] as? String == "tablet" })
        let tabletFingerprint = try #require(tabletEntry["fingerprint"] as? String)
        let accepted = try workspace.run(
            ["trust", "--review", "--accept", tabletFingerprint.replacingOccurrences(of: " ", with: "")] + desk, stdin: "")
        #expect(accepted.status == 0, "\(accepted)")
        #expect(accepted.stdout.contains("Trusting tablet"))
        #expect(try workspace.run(["merge"] + desk).status == 0)
        #expect(try #require(try workspace.run(["list", "--json"] + desk).json() as? [[String: Any]]).count == 2)

        // --review never trusts without being told: with standard input not a terminal it only lists
        #expect(try workspace.run(["untrust", "tablet"] + desk).status == 0)
        let listed = try workspace.run(["trust", "--review"] + desk, stdin: "y\n")
        #expect(listed.status == 0 && listed.stdout.contains("Nothing trusted"), "\(listed)")
        #expect(try workspace.run(["merge"] + desk).status == 3)

        // untrust of the last other device keeps checking on (this device alone trusted), and says so
        let last = try workspace.run(["untrust", "phone"] + desk)
        #expect(last.status == 0 && last.stdout.contains("only this device's own files merge"), "\(last)")
        #expect(last.stdout.contains("syncctl untrust desk") && !last.stdout.contains("WARNING"), "\(last)")
        #expect(try workspace.run(["merge"] + desk).status == 3)
        // untrust of this device then turns checking off, and warns
        let off = try workspace.run(["untrust", "desk"] + desk)
        #expect(off.status == 0 && off.stdout.contains("WARNING"), "\(off)")
        #expect(try workspace.run(["merge"] + desk).status == 0)
    }

    @Test("key says when a rotation was cut short; the next merge settles it (undone here: the store never recorded its key)")
    func keyAfterRotationCutShort() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let desk = workspace.location(state: workspace.state("desk"), device: "desk")
        #expect(try workspace.run(["merge"] + desk).status == 0)
        let key = try workspace.run(["key"] + desk).stdout
        let leftover = workspace.state("desk") + "/signing.key.new"
        try Data("ed25519-private:\(Data(repeating: 9, count: 32).base64EncodedString())\n".utf8)
            .write(to: URL(fileURLWithPath: leftover))
        let shown = try workspace.run(["key"] + desk)
        #expect(shown.status == 0 && shown.stdout == key, "\(shown)")
        #expect(shown.stderr.contains("a key rotation was cut short"), "\(shown)")
        #expect(try workspace.run(["merge"] + desk).status == 0)
        #expect(!FileManager.default.fileExists(atPath: leftover))
        let after = try workspace.run(["key"] + desk)
        #expect(after.stdout == key && !after.stderr.contains("cut short"), "\(after)")
    }

    @Test("mistakes are refused with what to do: a bad key, this device itself, a device not trusted, an unknown fingerprint")
    func mistakes() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let desk = workspace.location(state: workspace.state("desk"), device: "desk")
        #expect(try workspace.run(["merge"] + desk).status == 0)

        // What is not a key or not a device ID is refused as the command line is read
        let badKey = try workspace.run(["trust", "phone", "ed25519:short"] + desk)
        #expect(badKey.status == 64 && badKey.stderr.contains("syncctl key"), "\(badKey)")
        let badDevice = try workspace.run(["untrust", "Phone!"] + desk)
        #expect(badDevice.status == 64 && badDevice.stderr.contains("Phone!"), "\(badDevice)")
        let ownKey = try workspace.run(["key"] + desk).stdout.trimmingCharacters(in: .newlines)
        let itself = try workspace.run(["trust", "desk", ownKey] + desk)
        #expect(itself.status == 65 && itself.stderr.contains("this device"), "\(itself)")
        let notTrusted = try workspace.run(["untrust", "phone"] + desk)
        #expect(notTrusted.status == 65 && notTrusted.stderr.contains("trust --list"), "\(notTrusted)")
        let notChecking = try workspace.run(["untrust", "desk"] + desk)
        #expect(notChecking.status == 65 && notChecking.stderr.contains("not checked already"), "\(notChecking)")
        let unknown = try workspace.run(["trust", "--review", "--accept", "0000 0000"] + desk)
        #expect(unknown.status == 65, "\(unknown)")
        let noMode = try workspace.run(["trust"] + desk)
        #expect(noMode.status != 0 && noMode.stderr.contains("--review"), "\(noMode)")
        #expect((try workspace.run(["trust", "--list", "--json"] + desk).json() as? [Any])?.isEmpty == true)
    }

    @Test(
        "slips a person or a script makes: a private key pasted (not echoed), this device's key or another device's given as a peer's, the same trust given twice, --accept of a key trusted already; a signing.key open to others is made private, with a warning"
    )
    func slips() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let desk = workspace.location(state: workspace.state("desk"), device: "desk")
        let phone = workspace.location(state: workspace.state("phone"), device: "phone")
        #expect(try workspace.run(["put", "--type", "Note"] + phone, stdin: #"{"text": "from phone"}"#).status == 0)
        #expect(try workspace.run(["merge"] + desk).status == 0)
        let deskKey = try workspace.run(["key"] + desk).stdout.trimmingCharacters(in: .newlines)
        let phoneKey = try workspace.run(["key"] + phone).stdout.trimmingCharacters(in: .newlines)

        // A private key given to trust is refused without being repeated
        let secret = try String(contentsOfFile: workspace.state("phone") + "/signing.key", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let pasted = try workspace.run(["trust", "phone", secret] + desk)
        #expect(pasted.status == 64 && pasted.stderr.contains("private key"), "\(pasted)")
        #expect(!pasted.stderr.contains(String(secret.dropFirst("ed25519-private:".count))), "\(pasted)")
        // This device's own key given as phone's is refused
        let own = try workspace.run(["trust", "phone", deskKey] + desk)
        #expect(own.status == 65 && own.stderr.contains("this device's own key"), "\(own)")

        // Trusting phone twice: the second time says nothing changed, and exits 0
        #expect(try workspace.run(["trust", "phone", phoneKey] + desk).status == 0)
        let again = try workspace.run(["trust", "phone", phoneKey] + desk)
        #expect(again.status == 0 && again.stdout.contains("already"), "\(again)")
        // phone's key given for tablet too is refused
        let shared = try workspace.run(["trust", "tablet", phoneKey] + desk)
        #expect(shared.status == 65 && shared.stderr.contains("trusted for phone already"), "\(shared)")
        // --accept of the key trusted already succeeds, saying so (a script run twice)
        let fingerprint = try #require(try workspace.run(["key", "--json"] + phone).json() as? [String: Any])["fingerprint"]
        let accepted = try workspace.run(["trust", "--review", "--accept", try #require(fingerprint as? String)] + desk, stdin: "")
        #expect(accepted.status == 0 && accepted.stdout.contains("already"), "\(accepted)")

        // A signing.key others can read is made private again, with a warning
        let keyFile = workspace.state("desk") + "/signing.key"
        #expect(chmod(keyFile, 0o644) == 0)
        let loose = try workspace.run(["merge"] + desk)
        #expect(loose.status == 0 && loose.stderr.contains("open to other users"), "\(loose)")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        #expect(try workspace.run(["merge"] + desk).stderr.contains("open to other users") == false)
    }

    @Test("--review warns when two keys claim one device, and names the files that carry each")
    func reviewClash() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let desk = workspace.location(state: workspace.state("desk"), device: "desk")
        let phone = workspace.location(state: workspace.state("phone"), device: "phone")
        let impostor = workspace.location(state: workspace.state("impostor"), device: "phone", shared: workspace.path("elsewhere"))
        try FileManager.default.createDirectory(atPath: workspace.path("elsewhere"), withIntermediateDirectories: false)
        #expect(try workspace.run(["put", "--type", "Note"] + phone, stdin: #"{"text": "genuine"}"#).status == 0)
        #expect(try workspace.run(["put", "--type", "Note"] + impostor, stdin: #"{"text": "forged"}"#).status == 0)
        try FileManager.default.copyItem(atPath: workspace.path("elsewhere") + "/phone.json", toPath: workspace.sharedPath("phone (1).json"))

        let review = try workspace.run(["trust", "--review"] + desk, stdin: "")
        #expect(review.status == 0, "\(review)")
        #expect(review.stdout.contains("WARNING: 2 different keys claim to be phone"), "\(review)")
        #expect(review.stdout.contains("phone.json") && review.stdout.contains("phone (1).json"), "\(review)")
        // Accepting both is refused: one key per device
        let keys = try #require(try workspace.run(["trust", "--review", "--json"] + desk).json() as? [[String: Any]])
        let fingerprints = keys.compactMap { $0["fingerprint"] as? String }
        #expect(fingerprints.count == 2)
        let both = try workspace.run(["trust", "--review"] + fingerprints.flatMap { ["--accept", $0] } + desk, stdin: "")
        #expect(both.status == 65 && both.stderr.contains("at most one is genuine"), "\(both)")
    }

    @Test("key --rotate prints the new key, keeps the old one as signing.key.old, and republishes signed with the new key")
    func rotate() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let desk = workspace.location(state: workspace.state("desk"), device: "desk")
        #expect(try workspace.run(["put", "--type", "Note"] + desk, stdin: #"{"text": "a"}"#).status == 0)
        let old = try workspace.run(["key"] + desk).stdout.trimmingCharacters(in: .newlines)

        let rotated = try workspace.run(["key", "--rotate"] + desk)

        #expect(rotated.status == 0, "\(rotated)")
        let new = rotated.stdout.trimmingCharacters(in: .newlines)
        #expect(new != old && PublicKey(text: new) != nil)
        #expect(rotated.stderr.contains("syncctl trust desk \(new)"), "\(rotated)")
        #expect(FileManager.default.fileExists(atPath: workspace.state("desk") + "/signing.key.old"))
        let file = try SnapshotReader.read(bytes: try workspace.read("desk.json"), fileName: "desk.json")
        #expect(file.key?.text == new && file.signature != nil)
        #expect(try workspace.run(["key"] + desk).stdout.trimmingCharacters(in: .newlines) == new)
    }
}
