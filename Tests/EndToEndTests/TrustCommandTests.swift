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

        // untrust of the last device turns checking off, and says so
        let last = try workspace.run(["untrust", "phone"] + desk)
        #expect(last.status == 0 && last.stdout.contains("WARNING"), "\(last)")
        #expect(try workspace.run(["merge"] + desk).status == 0)
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
        let unknown = try workspace.run(["trust", "--review", "--accept", "0000 0000"] + desk)
        #expect(unknown.status == 65, "\(unknown)")
        let noMode = try workspace.run(["trust"] + desk)
        #expect(noMode.status != 0 && noMode.stderr.contains("--review"), "\(noMode)")
        #expect((try workspace.run(["trust", "--list", "--json"] + desk).json() as? [Any])?.isEmpty == true)
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
