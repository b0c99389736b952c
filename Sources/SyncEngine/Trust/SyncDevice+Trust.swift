import Dispatch
import SnapshotFormat
import SyncStore
import Synchronization

/// A device this device trusts, and the key its files must be signed with.
public struct TrustedDevice: Codable, Hashable, Sendable {
    public var device: String
    public var key: String
    public var fingerprint: String
    /// Whether it is this device (its own key, always trusted while any other device is).
    public var isThisDevice: Bool
}

/// A key that files in the shared folder carry, as `syncctl trust --review` offers it.
public struct FolderKey: Codable, Hashable, Sendable {
    public var device: String
    /// The key, nil for unsigned files.
    public var key: String?
    public var fingerprint: String?
    /// The files that name this device and this key.
    public var files: [String]
    /// How many of them carry a signature that verifies with the key: a key is worth trusting only
    /// when its files are signed by it (the others were changed after signing, or forged).
    public var validlySigned: Int
    /// The key trusted for this device now, if any.
    public var trustedKey: String?

    /// Whether this device trusts this key for this device already.
    public var isTrusted: Bool { key != nil && key == trustedKey }
    /// Whether trusting the key would let some of its files merge.
    public var canBeTrusted: Bool { key != nil && validlySigned > 0 && !isTrusted }
}

extension SyncDevice {
    /// The devices this device trusts, itself included, in device order; empty when it trusts none
    /// (and so merges every file, signed or not).
    public func trustedDevices() throws -> [TrustedDevice] {
        let stored = try store.reading { try $0.trustedKeys() }
        guard !stored.isEmpty else { return [] }
        let keys = TrustList(stored: stored, device: device, ownKey: key.publicKey).keys
        return keys.sorted { $0.key < $1.key }.map { device, key in
            TrustedDevice(
                device: device.rawValue, key: key.text, fingerprint: key.fingerprint, isThisDevice: device == self.device)
        }
    }

    /// Trusts `key` for `device` (replacing the key trusted for it, if any), so that its files merge
    /// when signed with it; every file is read again at the next pass.
    ///
    /// - Returns: the key trusted for `device` before, if any (`key` itself when it was trusted
    ///   already: nothing changes then).
    /// - Throws: ``EngineError/invalidEdit(_:)`` for this device itself (its own key is always
    ///   trusted), for this device's own key given as another's, and for a key trusted for another
    ///   device already: each device has a key of its own, so these are slips (`syncctl key` run on
    ///   the wrong machine), and trusting them would let one key publish as two devices.
    @discardableResult
    public func trust(_ key: PublicKey, for device: DeviceID) throws -> PublicKey? {
        guard device != self.device else {
            throw EngineError.invalidEdit(
                "\(device) is this device: its own key (syncctl key) is always trusted; to change it, use syncctl key --rotate")
        }
        return try locked {
            guard key != self.key.publicKey else {
                throw EngineError.invalidEdit(
                    "that is this device's own key (\(self.device)), not \(device)'s: run `syncctl key` on \(device) itself and give the key it prints"
                )
            }
            return try store.transaction { session in
                let stored = try session.trustedKeys()
                if let other = stored.first(where: { $0.value == key && $0.key != device && $0.key != self.device }) {
                    throw EngineError.invalidEdit(
                        "that key is trusted for \(other.key) already, and each device has a key of its own: run `syncctl key` on \(device) itself and give the key it prints (if \(other.key) is now called \(device), syncctl untrust \(other.key) first)"
                    )
                }
                let before = stored[device]
                if before != key { try session.trust(key, for: device, at: clock()) }
                return before
            }
        }
    }

    /// What ``untrust(_:)`` did.
    public enum Untrusted: Sendable, Equatable {
        /// The device's files no longer merge; other devices are still trusted.
        case untrusted
        /// The device's files no longer merge, and it was the last device trusted besides this one:
        /// only this device's own files merge now (checking stays on: a list with only this device
        /// in it is not empty).
        case onlyThisDeviceTrusted
        /// This device was named, with no other device trusted: signatures are no longer checked,
        /// and every file merges, signed or not.
        case checkingOff
        /// The device was not trusted: nothing changed.
        case wasNotTrusted
    }

    /// Stops trusting `device`: its files no longer merge (what they gave before stays).
    ///
    /// Untrusting the last other device keeps checking on, with this device alone trusted (the
    /// answer to a lost or stolen peer must not be to merge everyone's files). Checking stops only
    /// when this device itself is untrusted once no other device is.
    ///
    /// - Throws: ``EngineError/invalidEdit(_:)`` for this device while other devices are trusted.
    @discardableResult
    public func untrust(_ device: DeviceID) throws -> Untrusted {
        let ownKey = key.publicKey
        return try locked {
            try store.transaction { session in
                // By name: an entry whose key is not readable can be removed too.
                let others = try session.trustedDeviceNames().filter { $0 != self.device.rawValue }
                if device == self.device {
                    guard others.isEmpty else {
                        throw EngineError.invalidEdit(
                            "\(device) is this device: its own key is trusted as long as any other device is (trusted now: \(others.sorted().joined(separator: ", "))). To stop checking signatures, untrust those first, then \(device)"
                        )
                    }
                    return try session.untrust(device) ? .checkingOff : .wasNotTrusted
                }
                guard try session.untrust(device) else { return .wasNotTrusted }
                guard others.count == 1 else { return .untrusted }
                // The last other device: this device's own entry keeps the list, and checking, on.
                try session.trust(ownKey, for: self.device, at: clock())
                return .onlyThisDeviceTrusted
            }
        }
    }

    /// The devices whose files were read (present in the folder at the last pass) that this device
    /// does not trust, in order.
    public func untrustedDevicesSeen() throws -> [String] {
        try store.reading { session in
            let trusted = try session.trustedKeys()
            let seen = Set(try session.sources().filter(\.present).compactMap(\.device))
            return seen.filter { name in
                guard let device = DeviceID(name) else { return false }
                return device != self.device && trusted[device] == nil
            }.sorted()
        }
    }

    /// Every key that the files of other devices in the shared folder carry (unsigned files too),
    /// by device and key, with whether their signatures verify and whether it is trusted. Reads the
    /// head and signature of every file, on every core.
    public func keysInFolder() throws -> [FolderKey] {
        let entries = try folder.candidates().considered.filter { $0.status?.kind == .regular }
        let trusted = try store.reading { try $0.trustedKeys() }
        let found = Mutex([String: FolderKey]())
        DispatchQueue.concurrentPerform(iterations: entries.count) { index in
            let name = entries[index].name
            guard let read = try? folder.readSnapshotBytes(name, limit: settings.maxFileSize),
                let header = OpenedSource(
                    name: name, listed: read.status,
                    content: SourceReader.content(name, read.bytes, read.status, findingIDs: false)
                ).header,
                header.device != device
            else { return }
            let verifies =
                header.key.flatMap { key in
                    header.signature.map { signature in read.bytes.withUnsafeBytes { key.verifies(signature, of: $0) } }
                } ?? false
            let entry = "\(header.device.rawValue)\u{0}\(header.key?.text ?? "")"
            found.withLock { found in
                var key =
                    found[entry]
                    ?? FolderKey(
                        device: header.device.rawValue, key: header.key?.text, fingerprint: header.key?.fingerprint,
                        files: [], validlySigned: 0, trustedKey: trusted[header.device]?.text)
                key.files.append(name)
                if verifies { key.validlySigned += 1 }
                found[entry] = key
            }
        }
        return found.withLock { $0.values }.map { key in
            var key = key
            key.files.sort()
            return key
        }.sorted { ($0.device, $0.key ?? "") < ($1.device, $1.key ?? "") }
    }
}
