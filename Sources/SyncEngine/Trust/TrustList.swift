import SnapshotFormat
import SyncStore

/// Which devices' files this device merges (format 2's "Signatures").
///
/// Empty, it merges every file, signed or not, and checks no signature (format 1's behaviour).
/// Not empty, it merges only files whose device it lists and that carry a valid signature by
/// that device's listed key; this device's own key is listed with it. Trust is local: the
/// folder's files never add to it.
struct TrustList: Sendable {
    /// The trusted devices and their keys, this device's own included; empty when none is.
    let keys: [DeviceID: PublicKey]
    let device: DeviceID
    /// The digest of the file this device wrote for a part and generation, if it wrote one: an
    /// earlier file of its own (signed with an earlier key, or written before it signed) is still
    /// its own. Asked only for a file under its name that its key did not sign.
    let writtenDigest: @Sendable (PartPrefix, Int64) -> String?
    /// The key this device's files were signed with before its key file changed, until it has
    /// published with the new one: its `signing.key` lost, or a state directory restored without
    /// it. A file under its name signed with that key is its own earlier file (published after
    /// the backup the store came from, say), which must merge, or its versions would be lost and
    /// their counts reused. Not set by a rotation (`syncctl key --rotate`), which records the new
    /// key at once: the old one may be in a thief's hands.
    let previousOwnKey: PublicKey?

    /// The list as the store holds it, with this device's own key.
    init(
        stored: [DeviceID: PublicKey], device: DeviceID, ownKey: PublicKey, previousOwnKey: PublicKey? = nil,
        writtenDigest: @escaping @Sendable (PartPrefix, Int64) -> String? = { _, _ in nil }
    ) {
        var keys = stored
        if !keys.isEmpty { keys[device] = ownKey }
        self.keys = keys
        self.device = device
        self.previousOwnKey = previousOwnKey == ownKey ? nil : previousOwnKey
        self.writtenDigest = writtenDigest
    }

    /// Whether any file is checked.
    var isActive: Bool { !keys.isEmpty }

    /// Why a file (`reading` of `bytes`) must not merge; nil when it may.
    func rejection(of reading: SnapshotReading, bytes: [UInt8]) -> String? {
        guard isActive else { return nil }
        let device = reading.device
        let carries = reading.key.map { "it names key \($0.text) (fingerprint \($0.fingerprint))" } ?? "it names no key"
        let signedBy = { (key: PublicKey) -> Bool in
            guard reading.key == key, let signature = reading.signature else { return false }
            return bytes.withUnsafeBytes { key.verifies(signature, of: $0) }
        }
        if device == self.device {
            if signedBy(keys[device]!) || previousOwnKey.map(signedBy) == true { return nil }
            if let digest = writtenDigest(reading.part, reading.generation),
                digest == PublishedLayout.fileDigest(of: bytes)
            {
                return nil
            }
            return
                "a file under this device's own name (\(device)) that this device did not sign: \(carries). ANOTHER DEVICE MAY BE USING THIS DEVICE'S ID; give each device its own --device ID"
        }
        guard let trusted = keys[device] else {
            guard let key = reading.key, reading.signature != nil else {
                return
                    "device \(device) is not trusted, and the file is not signed (\(carries)): once any device is trusted, only signed files merge. Update \(device) to a release that signs its files, then trust its key (`syncctl key` on \(device) prints it): syncctl trust \(device) KEY"
            }
            return
                "device \(device) is not trusted: \(carries). If that is \(device)'s genuine key (compare the fingerprint with `syncctl key` on \(device)), trust it: syncctl trust \(device) \(key.text)"
        }
        guard let key = reading.key, reading.signature != nil else {
            return
                "the file is not signed, and \(device)'s files must be signed with its trusted key \(trusted.text) (fingerprint \(trusted.fingerprint)): \(device) runs a release that does not sign (update it), or the file is forged"
        }
        guard key == trusted else {
            return
                "it is signed with key \(key.text) (fingerprint \(key.fingerprint)), not the key trusted for \(device) (fingerprint \(trusted.fingerprint)): a file from before \(device) made a new key (a sync tool's old copy, say), or a forgery. Only if that key is the one \(device) has now (compare the fingerprint with `syncctl key` on \(device)) trust it: syncctl trust \(device) \(key.text)"
        }
        guard signedBy(trusted) else {
            return
                "its signature does not verify with \(device)'s key (fingerprint \(trusted.fingerprint)): the file was changed after it was signed, or forged"
        }
        return nil
    }
}

extension SyncDevice {
    /// The trust list as the store holds it now, for a pass that reads `changed`.
    func trustList(reading changed: [(name: String, status: FileStatus)]) throws -> TrustList {
        let ownKey = key.publicKey
        return try store.reading { session in
            let stored = try session.trustedKeys()
            guard !stored.isEmpty else { return TrustList(stored: stored, device: device, ownKey: ownKey) }
            let previousOwnKey = try session.signingKeyOfParts().flatMap(PublicKey.init(text:))
            // The files this device wrote are read for the parts of the changed files under its
            // name: its own (`desk.json`, `desk.3.json`) and sync tools' copies (`desk (1).json`…).
            let ownNames = (["."] + SourceFileName.copySeparators).map { device.rawValue + $0 }
            var written: [PartPrefix: [Int64: String]] = [:]
            for file in changed where ownNames.contains(where: { file.name.hasPrefix($0) }) {
                let part = ReadingPlan.suggestedPart(file.name) ?? .whole
                if written[part] == nil { written[part] = try session.writtenFileDigests(of: part) }
            }
            let digests = written
            return TrustList(stored: stored, device: device, ownKey: ownKey, previousOwnKey: previousOwnKey) {
                part, generation in
                digests[part]?[generation]
            }
        }
    }
}
