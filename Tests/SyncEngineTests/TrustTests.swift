import Crypto
import Foundation
import SnapshotFormat
import SyncEngine
import SyncStore
import Synchronization
import TestSupport
import Testing

/// A key pair that signs format 2 files the way the contract spells it, built here independently
/// of the engine's writer.
struct TestSigner {
    let privateKey: Curve25519.Signing.PrivateKey

    init(privateKey: Curve25519.Signing.PrivateKey = .init()) { self.privateKey = privateKey }

    /// The signer of a `signing.key` file (`ed25519-private:` then base64).
    init(keyFile path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let raw = try #require(Data(base64Encoded: String(text.dropFirst("ed25519-private:".count))))
        self.init(privateKey: try Curve25519.Signing.PrivateKey(rawRepresentation: raw))
    }

    var keyText: String { "ed25519:" + Data(privateKey.publicKey.rawRepresentation).base64EncodedString() }
    var publicKey: PublicKey { PublicKey(text: keyText)! }

    /// A format 2 file of `device` (a part of it, with `part`), naming this key and signed by it.
    func file(_ device: String, generation: Int64, versions: [ReadOnly.Version], part: String? = nil) -> [UInt8] {
        var bytes = Self.unsigned(device, generation: generation, versions: versions, part: part, key: keyText)
        sign(&bytes)
        return bytes
    }

    /// Ends `bytes` (a file's JSON object, closing brace included) with this key's signature of
    /// everything before `,"signature":`.
    func sign(_ bytes: inout [UInt8]) {
        bytes.removeLast()
        let signature = try! privateKey.signature(for: bytes)
        bytes += Array(#","signature":"ed25519:\#(Data(signature).base64EncodedString())"}"#.utf8)
    }

    /// A format 2 file with no signature (naming `key` if given).
    static func unsigned(
        _ device: String, generation: Int64, versions: [ReadOnly.Version], part: String? = nil, key: String? = nil
    ) -> [UInt8] {
        var top = JSONObject()
        top["format"] = .number(2)
        top["device"] = .string(device)
        top["generation"] = .number(Double(generation))
        top["writtenAt"] = .string(Timestamp(milliseconds: Wire.base).written)
        if let part { top["part"] = .string(part) }
        if let key { top["key"] = .string(key) }
        top["records"] = .array(
            versions.sorted { $0.id < $1.id }.map { .object(ReadOnly.Record(version: $0).normalForm) })
        return JSONValue.object(top).canonicalBytes
    }
}

@Suite("Signed files and trusted keys")
struct TrustTests {
    /// Version `n` of a note by `device`, whose text says who made it.
    static func note(_ n: Int, by device: String, count: Int64 = 1) -> ReadOnly.Version {
        Wire.version(n, by: device, vector: [device: count], at: count, fields: #"{"text": "\#(device) \#(count)"}"#)
    }

    static func held(_ device: SyncDevice) throws -> Set<RecordID> {
        Set(try device.records(includeDeleted: true).map(\.id))
    }

    @Test(
        "with no trusted device, unsigned and signed files merge alike and signatures are not checked (format 1 behaviour)"
    )
    func noTrustMergesEverything() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let phone = TestSigner()
        var tampered = phone.file("tablet", generation: 1, versions: [Self.note(3, by: "tablet")])
        tampered[tampered.firstRange(of: Array("tablet 1".utf8))!.lowerBound] = UInt8(ascii: "T")
        try sandbox.write("phone.json", phone.file("phone", generation: 1, versions: [Self.note(1, by: "phone")]))
        try sandbox.write("laptop.json", Wire.snapshot("laptop", generation: 1, versions: [Self.note(2, by: "laptop")]))
        try sandbox.write("tablet.json", tampered)
        let desk = try sandbox.device("desk")

        let report = try desk.merge()

        #expect(!report.hasRejections, "\(report.sources)")
        #expect(try Self.held(desk) == [Wire.id(1), Wire.id(2), Wire.id(3)])
        #expect(try desk.trustedDevices().isEmpty)
    }

    @Test(
        "trusting phone's key: only its files signed with that key merge; unsigned, tampered, wrong-key, forged and untrusted-device files, their copies and their parts are each rejected whole, named, and none of their versions is stored"
    )
    func rejectsWhatIsNotTrusted() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let phone = TestSigner()
        let mallory = TestSigner()
        let desk = try sandbox.device("desk")
        try desk.trust(phone.publicKey, for: DeviceID("phone")!)

        // Given phone's genuine file and part, and every kind of file that must not merge
        try sandbox.write("phone.json", phone.file("phone", generation: 1, versions: [Self.note(1, by: "phone")]))
        let genuinePart = phone.file("phone", generation: 1, versions: [Self.note(0xB, by: "phone")], part: "0")
        try sandbox.write("phone.0.json", genuinePart)
        var bad: [String: (id: Int, reason: String)] = [:]
        // unsigned, claiming phone
        try sandbox.write(
            "phone.sync-conflict-20261125-000001-AAAAAAA.json",
            TestSigner.unsigned("phone", generation: 2, versions: [Self.note(0x10, by: "phone", count: 2)]))
        bad["phone.sync-conflict-20261125-000001-AAAAAAA.json"] = (0x10, "not signed")
        // tampered by one byte after signing
        var tampered = phone.file("phone", generation: 3, versions: [Self.note(0x11, by: "phone", count: 3)], part: "1")
        tampered[tampered.firstRange(of: Array("phone 3".utf8))!.lowerBound] = UInt8(ascii: "P")
        try sandbox.write("phone.1.json", tampered)
        bad["phone.1.json"] = (0x11, "does not verify")
        // signed with another key, naming it (a forged phone)
        try sandbox.write(
            "phone.2.json",
            mallory.file("phone", generation: 4, versions: [Self.note(0x12, by: "phone", count: 4)], part: "2"))
        bad["phone.2.json"] = (0x12, "not the key trusted for phone")
        // naming phone's key but signed by another (a forged signature)
        var forged = TestSigner.unsigned(
            "phone", generation: 5, versions: [Self.note(0x13, by: "phone", count: 5)], part: "3", key: phone.keyText)
        mallory.sign(&forged)
        try sandbox.write("phone.3.json", forged)
        bad["phone.3.json"] = (0x13, "does not verify")
        // a device nobody trusts, its part and a copy of it
        try sandbox.write(
            "mallory.json", mallory.file("mallory", generation: 1, versions: [Self.note(0x14, by: "mallory")]))
        try sandbox.write(
            "mallory.4.json",
            mallory.file("mallory", generation: 1, versions: [Self.note(0x15, by: "mallory")], part: "4"))
        try sandbox.write(
            "mallory (conflicted copy).json",
            mallory.file("mallory", generation: 2, versions: [Self.note(0x16, by: "mallory")]))
        bad["mallory.json"] = (0x14, "mallory is not trusted")
        bad["mallory.4.json"] = (0x15, "mallory is not trusted")
        bad["mallory (conflicted copy).json"] = (0x16, "mallory is not trusted")
        // an unsigned file of a device nobody trusts: the reason says it must be signed, not to compare a key
        try sandbox.write(
            "legacy.json", TestSigner.unsigned("legacy", generation: 1, versions: [Self.note(0x17, by: "legacy")]))
        bad["legacy.json"] = (0x17, "legacy is not trusted, and the file is not signed")

        // When desk merges
        let report = try desk.merge()

        // Then only phone's genuine files merge
        #expect(report.hasRejections)
        #expect(try Self.held(desk) == [Wire.id(1), Wire.id(0xB)])
        for source in report.sources where source.name.hasPrefix("phone.json") || source.name == "phone.0.json" {
            #expect(source.status == .merged, "\(source)")
        }
        // And every other file is rejected whole, with a reason naming its device and the key it carries
        let outcomes = Dictionary(uniqueKeysWithValues: report.sources.map { ($0.name, $0) })
        for (name, expected) in bad {
            let outcome = try #require(outcomes[name], "\(name) not reported")
            #expect(outcome.status == .rejected, "\(name): \(outcome)")
            let reason = outcome.reason ?? ""
            #expect(reason.contains(expected.reason), "\(name): \(reason)")
            #expect(outcome.device == String(name.prefix { $0 != "." && $0 != " " }), "\(name)")
            if name.hasPrefix("mallory") || name == "phone.2.json" {
                #expect(
                    reason.contains(mallory.keyText) && reason.contains(mallory.publicKey.fingerprint),
                    "\(name): \(reason)")
            }
        }
        // And status lists each of them as rejected for trust
        let status = try desk.status()
        #expect(Set(status.rejectedForTrust) == Set(bad.keys))
        #expect(status.trusted.map(\.device) == ["desk", "phone"])
    }

    /// Desk trusting phone, whose file (record 1, "phone 1") desk merged.
    static func deskTrustingPhone(_ sandbox: Sandbox) throws -> (desk: SyncDevice, phone: TestSigner) {
        let phone = TestSigner()
        let desk = try sandbox.device("desk")
        try desk.trust(phone.publicKey, for: DeviceID("phone")!)
        try sandbox.write("phone.json", phone.file("phone", generation: 1, versions: [Self.note(1, by: "phone")]))
        _ = try desk.merge()
        return (desk, phone)
    }

    @Test(
        "what merged from a file before stays when the file turns bad, and untrusting its device stops its later files")
    func earlierMergesStay() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let (desk, phone) = try Self.deskTrustingPhone(sandbox)
        #expect(try desk.record(Wire.id(1))?.version.fields["text"] == .string("phone 1"))

        // When phone's file is replaced by an unsigned one holding a later version
        sandbox.clock.advance()
        try sandbox.write(
            "phone.json", TestSigner.unsigned("phone", generation: 2, versions: [Self.note(1, by: "phone", count: 2)]))
        let rejected = try desk.merge()

        // Then the later version is rejected and the version merged before stays
        #expect(rejected.hasRejections)
        #expect(try desk.record(Wire.id(1))?.version.fields["text"] == .string("phone 1"))

        // When desk stops trusting phone, and another device is still trusted
        let laptop = TestSigner()
        try desk.trust(laptop.publicKey, for: DeviceID("laptop")!)
        #expect(try desk.untrust(DeviceID("phone")!) == .untrusted)
        try sandbox.write(
            "phone.json", phone.file("phone", generation: 3, versions: [Self.note(2, by: "phone", count: 3)]))
        let untrusted = try desk.merge()

        // Then phone's genuine file no longer merges, and nothing merged before is lost
        #expect(untrusted.sources.first { $0.name == "phone.json" }?.status == .rejected)
        #expect(try Self.held(desk) == [Wire.id(1)])
        #expect(try desk.trustedDevices().map(\.device) == ["desk", "laptop"])
    }

    @Test(
        "untrusting the last other device (a stolen one) keeps checking on, this device alone trusted; untrusting this device then turns it off, and not before"
    )
    func untrustLastPeer() throws {
        // Given desk trusting phone, whose file merged
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let (desk, phone) = try Self.deskTrustingPhone(sandbox)
        #expect(throws: EngineError.self) { try desk.untrust(DeviceID("desk")!) }

        // When phone is stolen and untrusted, then the thief and a stranger write files
        #expect(try desk.untrust(DeviceID("phone")!) == .onlyThisDeviceTrusted)
        sandbox.clock.advance()
        try sandbox.write(
            "phone.json", phone.file("phone", generation: 2, versions: [Self.note(1, by: "phone", count: 2)]))
        try sandbox.write(
            "mallory.json", TestSigner.unsigned("mallory", generation: 1, versions: [Self.note(2, by: "mallory")]))
        let report = try desk.merge()

        // Then both are rejected whole, and only desk is trusted
        #expect(report.sources.first { $0.name == "phone.json" }?.status == .rejected)
        #expect(report.sources.first { $0.name == "mallory.json" }?.status == .rejected)
        #expect(try Self.held(desk) == [Wire.id(1)])
        #expect(try desk.record(Wire.id(1))?.version.fields["text"] == .string("phone 1"))
        #expect(try desk.trustedDevices().map(\.device) == ["desk"])
        // And desk's own files still merge when read again (its own key is trusted)
        _ = try desk.put(id: Wire.id(3), type: "Note", fields: Wire.object(#"{"text": "desk"}"#), schemaVersion: nil)
        let reread = try desk.merge(rereadAll: true).sources.filter { $0.name.hasPrefix("desk") }
        #expect(!reread.isEmpty && reread.allSatisfy { $0.status == .merged }, "\(reread)")

        // When desk itself is untrusted: checking is off, every file merges
        #expect(try desk.untrust(DeviceID("desk")!) == .checkingOff)
        #expect(try desk.trustedDevices().isEmpty)
        #expect(try !desk.merge().hasRejections)
        #expect(try desk.record(Wire.id(2)) != nil)
        #expect(try desk.untrust(DeviceID("desk")!) == .wasNotTrusted)
    }

    @Test("a file rejected for trust merges once its key is trusted, though the file did not change")
    func trustingRereads() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let phone = TestSigner()
        let laptop = TestSigner()
        let desk = try sandbox.device("desk")
        try desk.trust(laptop.publicKey, for: DeviceID("laptop")!)
        try sandbox.write("phone.json", phone.file("phone", generation: 1, versions: [Self.note(1, by: "phone")]))
        #expect(try desk.merge().hasRejections)
        #expect(try Self.held(desk).isEmpty)

        try desk.trust(phone.publicKey, for: DeviceID("phone")!)
        let report = try desk.merge()

        #expect(!report.hasRejections, "\(report.sources)")
        #expect(try Self.held(desk) == [Wire.id(1)])
        #expect(try desk.status().rejectedForTrust.isEmpty)
    }

    @Test(
        "this device signs every file and part it publishes with the key in its state directory (mode 0600), the same after reopening"
    )
    func signsItsFiles() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try sandbox.write(
            "phone.json", Wire.snapshot("phone", generation: 1, versions: (0..<80).map { Self.note($0, by: "phone") }))
        let policy = PartPolicy(splitBytes: 4 << 10, joinBytes: 1 << 10)
        let key = try sandbox.device("desk", partPolicy: policy).key.publicKey
        let desk = try sandbox.device("desk", partPolicy: policy)
        #expect(desk.key.publicKey == key)
        _ = try desk.merge()

        let published = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(published.files.count > 1)
        for (name, reading) in zip(published.files, published.readings) {
            #expect(reading.key == key && reading.signature != nil, "\(name)")
            let bytes = try sandbox.read(name)
            let signature = try #require(reading.signature)
            let verifies = try Curve25519.Signing.PublicKey(rawRepresentation: key.bytes)
                .isValidSignature(signature.bytes, for: bytes[..<signature.signedCount])
            #expect(verifies, "\(name)")
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: sandbox.state() + "/signing.key")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    /// Parts of a few KiB, so that 80 notes make several.
    static let smallParts = PartPolicy(splitBytes: 4 << 10, joinBytes: 1 << 10)

    /// Desk's 80 notes published in several parts signed with its key, which phone trusts and has
    /// merged; desk's published files.
    static func deskInPartsTrustedByPhone(_ sandbox: Sandbox) throws -> (
        desk: SyncDevice, phone: SyncDevice, published: PublishedSnapshot
    ) {
        let desk = try sandbox.device("desk", state: sandbox.state("desk"), partPolicy: smallParts)
        let phone = try sandbox.device("phone", state: sandbox.state("phone"))
        for n in 0..<80 {
            _ = try desk.put(
                id: Wire.id(n), type: "Note", fields: Wire.object(#"{"text": "note \#(n)"}"#), schemaVersion: nil)
        }
        try phone.trust(desk.key.publicKey, for: DeviceID("desk")!)
        _ = try phone.merge()
        #expect(try held(phone).count == 80)
        let published = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(published.files.count > 1)
        return (desk, phone, published)
    }

    @Test(
        "a rotation killed before it replaced the old key: finished by the next command that takes the lock when the store had recorded the new key, else its new key is removed and the old one stays"
    )
    func unfinishedRotationSettled() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let state = sandbox.state("desk")
        let desk = try sandbox.device("desk", state: state)
        _ = try desk.merge()
        let oldKey = desk.key.publicKey
        let keyFile = state + "/signing.key"

        // Given a rotation's new key left behind before the store recorded it (killed while it
        // was written or recorded)
        try Data("ed25519-private:\(Data(repeating: 7, count: 32).base64EncodedString())\n".utf8)
            .write(to: URL(fileURLWithPath: keyFile + ".new"))
        // When the device next merges
        let undone = try desk.merge()
        // Then the leftover is gone, and the key in use is the old one, with nothing to tell
        #expect(!undone.warnings.contains { $0.contains("key rotation") }, "\(undone.warnings)")
        #expect(!FileManager.default.fileExists(atPath: keyFile + ".new"))
        #expect(desk.key.publicKey == oldKey)
        #expect(try sandbox.device("desk", state: state).key.publicKey == oldKey)

        // Given a rotation killed after the store recorded its new key, before the rename (made
        // here from a finished one, undone: the new key back at signing.key.new, the old one back
        // in place)
        let (newKey, _) = try desk.rotateKey()
        try FileManager.default.moveItem(atPath: keyFile, toPath: keyFile + ".new")
        try FileManager.default.moveItem(atPath: keyFile + ".old", toPath: keyFile)
        let restarted = try sandbox.device("desk", state: state)
        #expect(restarted.key.publicKey == oldKey)
        // When the device next merges
        let report = try restarted.merge()
        // Then the rotation is finished: the new key signs, the old one is kept aside, the report
        // says so with the command for the other devices, and no warning says the key was lost
        #expect(restarted.key.publicKey == newKey.publicKey)
        #expect(
            report.warnings.contains {
                $0.contains("key rotation cut short is finished")
                    && $0.contains("syncctl trust desk \(newKey.publicKey.text)")
            }, "\(report.warnings)")
        #expect(!FileManager.default.fileExists(atPath: keyFile + ".new"))
        #expect(try TestSigner(keyFile: keyFile + ".old").publicKey == oldKey)
        #expect(!report.warnings.contains { $0.contains("replaced, lost or rotated") }, "\(report.warnings)")
        let published = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(published.readings.allSatisfy { $0.key == newKey.publicKey })
    }

    @Test(
        "rotating the key publishes every part again signed with the new one; a peer trusting the old key rejects them until it trusts the new one"
    )
    func rotation() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let (desk, phone, before) = try Self.deskInPartsTrustedByPhone(sandbox)
        let oldKey = desk.key.publicKey

        // When desk rotates its key
        let (newKey, report) = try desk.rotateKey()

        // Then every one of its files is published again, signed with the new key
        #expect(newKey.publicKey != oldKey)
        #expect(Set(report.publishedFiles) == Set(before.files))
        let after = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(after.readings.allSatisfy { $0.key == newKey.publicKey && $0.signature != nil })
        #expect(FileManager.default.fileExists(atPath: sandbox.state("desk") + "/signing.key.old"))
        // And desk, trusting its new key as its own, still merges its files cleanly
        #expect(!(try desk.merge().hasRejections))
        // But a file under its name signed with the old key (which may be why it rotated), and not
        // one it wrote, is not its own any more (once desk checks signatures: it trusts tablet)
        try desk.trust(TestSigner().publicKey, for: DeviceID("tablet")!)
        let oldSigner = try TestSigner(keyFile: sandbox.state("desk") + "/signing.key.old")
        #expect(oldSigner.publicKey == oldKey)
        try sandbox.write(
            "desk (1).json", oldSigner.file("desk", generation: 90, versions: [Self.note(99, by: "desk", count: 90)]))
        #expect(try desk.merge().sources.first { $0.name == "desk (1).json" }?.status == .rejected)
        try FileManager.default.removeItem(atPath: sandbox.sharedPath("desk (1).json"))

        // And phone, trusting the old key, rejects desk's files, keeping what it merged
        sandbox.clock.advance()
        _ = try desk.put(id: Wire.id(100), type: "Note", fields: Wire.object(#"{"text": "new"}"#), schemaVersion: nil)
        let rejected = try phone.merge()
        #expect(rejected.sources.filter { $0.device == "desk" && $0.status == .rejected }.count == after.files.count)
        #expect(try Self.held(phone).count == 80)

        // When phone trusts the new key, its next merge takes everything
        try phone.trust(newKey.publicKey, for: DeviceID("desk")!)
        #expect(!(try phone.merge().hasRejections))
        #expect(try Self.held(phone).count == 81)
    }

    @Test(
        "a device whose key file was lost signs every part again with the key it makes, and says which trust command its peers need"
    )
    func lostKey() throws {
        // Given desk's 80 records in parts signed with its key, which phone trusts
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let (desk, _, before) = try Self.deskInPartsTrustedByPhone(sandbox)
        let oldKey = desk.key.publicKey

        // When desk's signing.key is lost and desk starts again (it makes a new key) and merges
        try FileManager.default.removeItem(atPath: sandbox.state("desk") + "/signing.key")
        let restarted = try sandbox.device("desk", state: sandbox.state("desk"), partPolicy: Self.smallParts)
        let newKey = restarted.key.publicKey
        let report = try restarted.merge()

        // Then every one of its files is published again, signed with the new key, and the
        // report says what to run on the devices that trust the old one
        #expect(newKey != oldKey)
        #expect(Set(report.publishedFiles) == Set(before.files))
        let after = try #require(try PublishedSnapshot.read(folder: sandbox.shared, device: "desk"))
        #expect(after.readings.allSatisfy { $0.key == newKey && $0.signature != nil })
        #expect(report.warnings.contains { $0.contains("syncctl trust desk \(newKey.text)") }, "\(report.warnings)")
        // And once, not on every pass
        #expect(try restarted.merge().warnings.isEmpty)

        // And a device that trusts the new key takes all of desk's records from desk's files
        let fresh = try sandbox.device("fresh", state: sandbox.state("fresh"))
        try fresh.trust(newKey, for: DeviceID("desk")!)
        _ = try fresh.merge()
        #expect(try Self.held(fresh).count == 80)
    }

    @Test(
        "a state directory restored from a backup without its signing.key: the device's own later file, signed with its old key, merges (nothing lost, no count reused)"
    )
    func restoredWithoutKey() throws {
        // Given desk trusting phone, with a backup of its state directory taken after its first edit
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let state = sandbox.state("desk")
        let desk = try sandbox.device("desk", state: state)
        try desk.trust(TestSigner().publicKey, for: DeviceID("phone")!)
        _ = try desk.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"text": "v1"}"#), schemaVersion: nil)
        try FileManager.default.copyItem(atPath: state, toPath: sandbox.state("backup"))
        // And an edit published after the backup
        sandbox.clock.advance()
        _ = try desk.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"text": "v2"}"#), schemaVersion: nil)

        // When the state directory is restored from the backup, without its signing.key, and desk merges
        try FileManager.default.removeItem(atPath: state)
        try FileManager.default.copyItem(atPath: sandbox.state("backup"), toPath: state)
        try FileManager.default.removeItem(atPath: state + "/signing.key")
        let restored = try sandbox.device("desk", state: state)
        let report = try restored.merge()

        // Then its own file merged (not taken for an impostor's), v2 is back, and its next edit counts on
        #expect(report.sources.first { $0.name == "desk.json" }?.status != .rejected, "\(report.sources)")
        #expect(try restored.record(Wire.id(1))?.version.fields["text"] == .string("v2"))
        sandbox.clock.advance()
        _ = try restored.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"text": "v3"}"#), schemaVersion: nil)
        #expect(try restored.record(Wire.id(1))?.version.versionVector == VersionVector([DeviceID("desk")!: 3]))
        // And once it published with its new key, a file signed with the old one is no longer its own
        let published = try SnapshotReader.read(bytes: try sandbox.read("desk.json"), fileName: "desk.json")
        #expect(published.key == restored.key.publicKey)
        let oldSigner = try TestSigner(keyFile: sandbox.state("backup") + "/signing.key")
        try sandbox.write(
            "desk (1).json", oldSigner.file("desk", generation: 50, versions: [Self.note(7, by: "desk", count: 50)]))
        #expect(try restored.merge().sources.first { $0.name == "desk (1).json" }?.status == .rejected)
        #expect(try restored.record(Wire.id(7)) == nil)
    }

    @Test(
        "with keys trusted, a file under this device's own name that it did not sign is rejected, reported, and its own file published again"
    )
    func impostorUnderOwnName() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let desk = try sandbox.device("desk")
        try desk.trust(TestSigner().publicKey, for: DeviceID("phone")!)
        _ = try desk.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"text": "mine"}"#), schemaVersion: nil)

        // When someone replaces desk.json with a file signed by another key
        let mallory = TestSigner()
        try sandbox.write(
            "desk.json", mallory.file("desk", generation: 9, versions: [Self.note(2, by: "desk", count: 9)]))
        let report = try desk.merge()

        // Then it is rejected, loudly, and desk publishes its own file again
        let outcome = try #require(report.sources.first { $0.name == "desk.json" })
        #expect(outcome.status == .rejected)
        #expect(outcome.reason?.contains("ANOTHER DEVICE MAY BE USING THIS DEVICE'S ID") == true, "\(outcome)")
        #expect(try Self.held(desk) == [Wire.id(1)])
        #expect(report.publishedFiles == ["desk.json"])
        let republished = try SnapshotReader.read(bytes: try sandbox.read("desk.json"), fileName: "desk.json")
        // (its generation follows its own, not the rejected file's: an untrusted file sets nothing)
        #expect(republished.key == desk.key.publicKey && republished.versions.map(\.id) == [Wire.id(1)])
    }

    @Test(
        "a file under this device's own name renamed over the one it just published, before it recorded what it published, is read at the next merge and rejected, not taken for its own"
    )
    func impostorRenamedOverAPublication() throws {
        // Given desk, trusting keys, whose clock (read after its publication's renames) lets a
        // twin under its ID rename its own file over desk.json at that instant
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let twinFile = sandbox.outside + "/twin.json"
        try Data(TestSigner().file("desk", generation: 1, versions: [])).write(to: URL(fileURLWithPath: twinFile))
        let armed = Mutex<UInt64?>(nil)
        let clock = sandbox.clock
        var settings = SyncSettings(
            sharedFolder: sandbox.shared, stateDirectory: sandbox.state(), device: DeviceID("desk")!)
        settings.partPolicy = .standard
        let desk = try SyncDevice(settings: settings, logger: quietLogger) {
            armed.withLock { before in
                // Once desk.json is another file than when armed: desk renamed its own into place
                guard let inode = before, let now = Self.inode(sandbox.sharedPath("desk.json")), now != inode else {
                    return
                }
                rename(twinFile, sandbox.sharedPath("desk.json"))
                before = nil
            }
            return clock.now
        }
        try desk.trust(TestSigner().publicKey, for: DeviceID("phone")!)
        _ = try desk.put(id: Wire.id(1), type: "Note", fields: Wire.object(#"{"text": "mine"}"#), schemaVersion: nil)

        // When desk publishes an edit and the twin's file replaces it before desk records it
        armed.withLock { $0 = Self.inode(sandbox.sharedPath("desk.json")) }
        sandbox.clock.advance()
        _ = try desk.put(
            id: Wire.id(2), type: "Note", fields: Wire.object(#"{"text": "mine too"}"#), schemaVersion: nil)
        try #require(armed.withLock { $0 } == nil, "the twin's file was not renamed in")

        // Then the next merge reads the twin's file and rejects it, and desk publishes its own again
        let report = try desk.merge()
        let outcome = try #require(report.sources.first { $0.name == "desk.json" })
        #expect(outcome.status == .rejected, "\(outcome)")
        #expect(report.publishedFiles == ["desk.json"])
        let republished = try SnapshotReader.read(bytes: try sandbox.read("desk.json"), fileName: "desk.json")
        #expect(republished.key == desk.key.publicKey && republished.versions.map(\.id) == [Wire.id(1), Wire.id(2)])
    }

    static func inode(_ path: String) -> UInt64? {
        var status = stat()
        return lstat(path, &status) == 0 ? UInt64(status.st_ino) : nil
    }

    @Test("reviewing the folder lists each other device's keys with fingerprints, which verify, and which are trusted")
    func reviewingKeys() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let phone = TestSigner()
        let mallory = TestSigner()
        try sandbox.write("phone.json", phone.file("phone", generation: 1, versions: [Self.note(1, by: "phone")]))
        try sandbox.write(
            "phone.1.json", phone.file("phone", generation: 1, versions: [Self.note(0x11, by: "phone")], part: "1"))
        var forged = TestSigner.unsigned(
            "laptop", generation: 1, versions: [Self.note(2, by: "laptop")], key: mallory.keyText)
        phone.sign(&forged)
        try sandbox.write("laptop.json", forged)
        try sandbox.write("tablet.json", Wire.snapshot("tablet", generation: 1, versions: [Self.note(3, by: "tablet")]))
        let desk = try sandbox.device("desk")
        _ = try desk.merge()

        let keys = try desk.keysInFolder()

        #expect(keys.map(\.device) == ["laptop", "phone", "tablet"])
        let phoneKey = try #require(keys.first { $0.device == "phone" })
        #expect(phoneKey.key == phone.keyText && phoneKey.fingerprint == phone.publicKey.fingerprint)
        #expect(
            phoneKey.files == ["phone.1.json", "phone.json"] && phoneKey.validlySigned == 2 && phoneKey.canBeTrusted)
        let laptopKey = try #require(keys.first { $0.device == "laptop" })
        #expect(laptopKey.validlySigned == 0 && !laptopKey.canBeTrusted)
        let tabletKey = try #require(keys.first { $0.device == "tablet" })
        #expect(tabletKey.key == nil && !tabletKey.canBeTrusted)

        try desk.trust(phone.publicKey, for: DeviceID("phone")!)
        #expect(try desk.keysInFolder().first { $0.device == "phone" }?.isTrusted == true)
        #expect(throws: EngineError.self) { try desk.trust(phone.publicKey, for: DeviceID("desk")!) }
    }
}
