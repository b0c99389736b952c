import CInotifyTools
import Crypto
import Foundation
import SnapshotFormat
@testable import SyncEngine
import Testing

/// This device's signatures, made by the system's OpenSSL: the very bytes swift-crypto makes
/// (Ed25519 is deterministic), valid under swift-crypto's check, and checked the same way both
/// ways round, bad signatures refused.
@Suite("signing with this device's key")
struct DeviceKeyTests {
    @Test("signatures are swift-crypto's bytes, and each library accepts the other's and refuses a bad one")
    func signaturesAgree() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        try FileManager.default.createDirectory(atPath: sandbox.state(), withIntermediateDirectories: true)
        let key = try DeviceKey.loadOrCreate(in: sandbox.state())
        let stored = try String(contentsOfFile: sandbox.state() + "/" + DeviceKey.fileName, encoding: .utf8)
        let seed = try #require(Base64Text.decode(String(stored.dropFirst("ed25519-private:".count)).trimmingCharacters(in: .whitespacesAndNewlines)))
        let reference = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        #expect(Array(reference.publicKey.rawRepresentation) == key.publicKey.bytes)
        var generator = SystemRandomNumberGenerator()
        // Empty, small, a block's edge, and large enough for the hash's bulk code.
        for count in [0, 1, 127, 128, 129, 4_096, 1 << 20] {
            let message = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let signature = key.sign(message)
            let expected = Array(try reference.signature(for: message))
            #expect(signature == expected, "\(count) bytes")
            // Made by libcrypto itself (not swift-crypto's fallback).
            var made = [UInt8](repeating: 0, count: 64)
            let status = seed.withUnsafeBufferPointer { seed in
                message.withUnsafeBufferPointer { message in
                    made.withUnsafeMutableBufferPointer {
                        snapshotsync_ed25519_sign(seed.baseAddress, message.baseAddress, message.count, $0.baseAddress)
                    }
                }
            }
            #expect(status == 1 && made == expected, "\(count) bytes")
            #expect(reference.publicKey.isValidSignature(signature, for: message), "\(count) bytes")
            // Checked as a file's signature: over the first `count` bytes of a longer buffer.
            let file = message + Array(#","signature":"…"}"#.utf8)
            let valid = file.withUnsafeBytes {
                key.publicKey.verifies(FileSignature(signedCount: count, bytes: signature), of: $0)
            }
            #expect(valid, "\(count) bytes")
            // A changed byte of the signature or of the message is refused.
            var badSignature = signature
            badSignature[count % 64] ^= 0x01
            let refusedSignature = file.withUnsafeBytes {
                key.publicKey.verifies(FileSignature(signedCount: count, bytes: badSignature), of: $0)
            }
            #expect(!refusedSignature, "\(count) bytes")
            if count > 0 {
                var changed = file
                changed[count / 2] ^= 0x80
                let refusedMessage = changed.withUnsafeBytes {
                    key.publicKey.verifies(FileSignature(signedCount: count, bytes: signature), of: $0)
                }
                #expect(!refusedMessage, "\(count) bytes")
            }
        }
        // Another key's signature is refused.
        let other = Curve25519.Signing.PrivateKey()
        let message = Array("a file".utf8)
        let othersSignature = Array(try other.signature(for: message))
        let refused = message.withUnsafeBytes {
            key.publicKey.verifies(FileSignature(signedCount: message.count, bytes: othersSignature), of: $0)
        }
        #expect(!refused)
    }
}
