import CInotifyTools
import Crypto
import Foundation
import SnapshotFormat

/// This device's Ed25519 key pair (format 2's "Signatures"): every file it publishes names the
/// public key and ends with a signature by the private one.
///
/// The private key lives in the state directory, `signing.key`, mode 0600, never in the shared
/// folder; it is created the first time the device is opened.
// Unchecked: the private key is an immutable value that swift-crypto does not mark Sendable;
// nothing here mutates it after init.
public struct DeviceKey: @unchecked Sendable {
    private let privateKey: Curve25519.Signing.PrivateKey
    /// The private key's 32-byte seed, as libcrypto takes it (``sign(_:)``).
    private let seed: [UInt8]
    /// The public key, as files name it.
    public let publicKey: PublicKey
    /// The inode of the key file it was read from or written to: a running `syncd` notices a key
    /// rotated by `syncctl key --rotate` by its new inode.
    let fileInode: Int64
    /// The permission bits the key file had when loaded, when other users could read or write it
    /// (it is made readable by this user only then): nil when it was private.
    let permissionsOpenToOthers: UInt32?

    /// The key file's name in the state directory.
    static let fileName = "signing.key"
    private static let scheme = "ed25519-private:"

    private init(_ privateKey: Curve25519.Signing.PrivateKey, fileInode: Int64, permissionsOpenToOthers: UInt32? = nil)
    {
        self.privateKey = privateKey
        seed = Array(privateKey.rawRepresentation)
        self.fileInode = fileInode
        self.permissionsOpenToOthers = permissionsOpenToOthers
        publicKey = PublicKey(bytes: Array(privateKey.publicKey.rawRepresentation))!
    }

    /// Whether the key file in `stateDirectory` is still this key's (not replaced by a rotation).
    func isCurrent(in stateDirectory: String) -> Bool {
        (try? SystemCalls.status(stateDirectory + "/" + Self.fileName).inode) == fileInode
    }

    /// The key kept in `stateDirectory`, made and kept there when there is none.
    static func loadOrCreate(in stateDirectory: String) throws -> DeviceKey {
        let path = stateDirectory + "/" + fileName
        if let key = try load(path) { return key }
        do {
            return try write(Curve25519.Signing.PrivateKey(), to: path)
        } catch let error as SystemCallError where error.errno == EEXIST {
            // Another process made it meanwhile: use that one.
            if let key = try load(path) { return key }
            throw error
        }
    }

    /// Replaces the key in `stateDirectory` with a new one (the old one is kept as
    /// `signing.key.old`); the new key.
    ///
    /// - Parameter record: called with the new key once it is written, before it replaces the
    ///   old one (nothing is replaced when it throws): never the new key in use while the store
    ///   still takes the old one for its own. A crash after it recorded the key leaves the rotation
    ///   for the next process that takes the lock to finish (``settleUnfinishedRotation(in:recordedKey:)``).
    static func rotate(in stateDirectory: String, record: (DeviceKey) throws -> Void) throws -> DeviceKey {
        let path = stateDirectory + "/" + fileName
        let fresh = path + ".new"
        try? SystemCalls.remove(fresh)
        let key = try write(Curve25519.Signing.PrivateKey(), to: fresh)
        do {
            // Its name on disk before the store records it: a store naming a key whose file a
            // power loss took would leave the rotation unfinishable.
            try synchronizeDirectory(stateDirectory)
            try record(key)
        } catch {
            try? SystemCalls.remove(fresh)
            throw error
        }
        try replace(in: stateDirectory)
        return key
    }

    /// The last step of a rotation: the old key keeps a second name (`signing.key.old`), and the
    /// new one replaces it in one rename. There is always a signing.key (a process starting
    /// meanwhile would make a key of its own).
    private static func replace(in stateDirectory: String) throws {
        let path = stateDirectory + "/" + fileName
        try? SystemCalls.remove(path + ".old")
        try? SystemCalls.link(path, to: path + ".old")
        try SystemCalls.rename(path + ".new", to: path)
        try synchronizeDirectory(stateDirectory)
    }

    private static func synchronizeDirectory(_ stateDirectory: String) throws {
        let directory = try SystemCalls.openDirectory(stateDirectory)
        defer { SystemCalls.close(directory) }
        try SystemCalls.synchronize(directory, path: stateDirectory)
    }

    /// Whether a rotation was cut short in `stateDirectory` (its new key not yet in place): the
    /// next command that takes the lock finishes or undoes it.
    public static func hasUnfinishedRotation(in stateDirectory: String) -> Bool {
        (try? SystemCalls.statusOfLink(stateDirectory + "/" + fileName + ".new")) != nil
    }

    /// What to do with the new key of a rotation that was interrupted (a crash) before it
    /// replaced the old one: finish the rotation when the store had recorded that key as the one
    /// the parts are signed with (`recordedKey`: the rotation was decided, perhaps because the old
    /// key leaked); else remove it (the rotation did not happen, and that key signs nothing).
    /// Only under the state directory's lock, which a rotation holds throughout.
    ///
    /// - Returns: the new key when the rotation was finished.
    static func settleUnfinishedRotation(in stateDirectory: String, recordedKey: () throws -> String?) throws
        -> DeviceKey?
    {
        let fresh = stateDirectory + "/" + fileName + ".new"
        guard hasUnfinishedRotation(in: stateDirectory) else { return nil }
        // A key file cut short (killed while it was written) was never recorded.
        if let key = try? load(fresh), key.publicKey.text == (try recordedKey()) {
            try replace(in: stateDirectory)
            return try load(stateDirectory + "/" + fileName)
        }
        try? SystemCalls.remove(fresh)
        return nil
    }

    private static func load(_ path: String) throws -> DeviceKey? {
        let descriptor: Int32
        do {
            descriptor = try SystemCalls.openForReadingNoFollow(path)
        } catch let error where error.errno == ENOENT {
            return nil
        }
        defer { SystemCalls.close(descriptor) }
        let status = try SystemCalls.status(of: descriptor, path: path)
        let inode = status.inode
        let text = String(decoding: try SystemCalls.readAll(descriptor, expectedSize: 128, path: path), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix(scheme), let raw = Base64Text.decode(String(text.dropFirst(scheme.count))),
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw)
        else {
            throw EngineError.stateDirectoryUnusable(
                path: path,
                reason:
                    "it does not hold this device's signing key (damaged?). Put back the signing.key of a backup if you have one; otherwise move it away, and a new key is made, which the devices that trust this one must then trust (syncctl trust on each)"
            )
        }
        // A private key others can read lets them sign as this device: made private again (and the
        // device warns, since it may have been read).
        let openToOthers = status.permissions & 0o077
        if openToOthers != 0 { try? SystemCalls.changeMode(of: descriptor, to: 0o600, path: path) }
        return DeviceKey(key, fileInode: inode, permissionsOpenToOthers: openToOthers != 0 ? status.permissions : nil)
    }

    /// Writes `privateKey` to a new file at `path`, readable by this user only, synchronized.
    private static func write(_ privateKey: Curve25519.Signing.PrivateKey, to path: String) throws -> DeviceKey {
        let text = scheme + Base64Text.encode(Array(privateKey.rawRepresentation)) + "\n"
        try SystemCalls.writeNewFile(path, Array(text.utf8), mode: 0o600)
        return DeviceKey(privateKey, fileInode: try SystemCalls.status(path).inode)
    }

    /// The signature of `bytes`.
    ///
    /// Ed25519 as RFC 8032 defines it, deterministic: the same bytes always give the same
    /// signature, whichever library makes it. The system's OpenSSL makes it (twice as fast over a
    /// large file as swift-crypto's, see shim.h); swift-crypto only if libcrypto failed.
    func sign(_ bytes: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: 64)
        let made = seed.withUnsafeBufferPointer { seed in
            bytes.withUnsafeBufferPointer { message in
                signature.withUnsafeMutableBufferPointer { signature in
                    snapshotsync_ed25519_sign(
                        seed.baseAddress, message.baseAddress, message.count, signature.baseAddress)
                }
            }
        }
        if made == 1 { return signature }
        return Array((try? privateKey.signature(for: bytes)) ?? Data())
    }
}

extension PublicKey {
    /// A short form a person compares on two screens: the start of the SHA-256 of the key, in
    /// five groups of four hex digits.
    public var fingerprint: String {
        let digest = Array(SHA256.hash(data: bytes).prefix(10)).hexString
        return stride(from: 0, to: digest.count, by: 4).map { offset in
            let start = digest.index(digest.startIndex, offsetBy: offset)
            return String(digest[start..<digest.index(start, offsetBy: 4)])
        }.joined(separator: " ")
    }

    /// Whether `signature` is this key's signature of `bytes`.
    ///
    /// Checked by the system's OpenSSL (one SHA-512 pass over the bytes, twice as fast as
    /// swift-crypto's, see shim.h); by swift-crypto only for a key libcrypto does not take.
    func verifies(_ signature: FileSignature, of bytes: UnsafeRawBufferPointer) -> Bool {
        let signed = UnsafeRawBufferPointer(rebasing: bytes[..<signature.signedCount])
        if self.bytes.count == 32, signature.bytes.count == 64 {
            let valid = self.bytes.withUnsafeBufferPointer { key in
                signature.bytes.withUnsafeBufferPointer { signatureBytes in
                    snapshotsync_ed25519_verify(
                        key.baseAddress, signatureBytes.baseAddress,
                        signed.baseAddress?.assumingMemoryBound(to: UInt8.self), signed.count)
                }
            }
            if valid >= 0 { return valid == 1 }
        }
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: self.bytes) else { return false }
        return key.isValidSignature(signature.bytes, for: signed)
    }
}

/// Standard base64 through Foundation (the engine has it; the pure format module has its own).
enum Base64Text {
    static func encode(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
    static func decode(_ text: String) -> [UInt8]? { Data(base64Encoded: text).map { Array($0) } }
}
