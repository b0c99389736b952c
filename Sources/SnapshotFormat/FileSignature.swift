/// An Ed25519 public key as a snapshot file names it (format 2): `ed25519:` and the standard
/// base64, with padding, of its 32 bytes.
public struct PublicKey: Hashable, Sendable, CustomStringConvertible {
    /// The key's 32 bytes.
    public let bytes: [UInt8]

    /// What every key's text starts with.
    public static let scheme = "ed25519:"

    /// A key from its 32 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// Reads `ed25519:<base64 of 32 bytes>`; nil for anything else.
    public init?(text: String) {
        guard text.utf8.starts(with: Self.scheme.utf8),
            let bytes = Base64.decode(text.utf8.dropFirst(Self.scheme.utf8.count)), bytes.count == 32
        else { return nil }
        self.bytes = bytes
    }

    /// The key as a file names it.
    public var text: String { Self.scheme + Base64.encode(bytes) }

    public var description: String { text }
}

/// Where a signed file's signature is and what it says (format 2).
///
/// A signed file ends with exactly `,"signature":"ed25519:<base64 of 64 bytes>"}` and at most
/// one line feed; the signed bytes are every byte before that `,"signature":`.
public struct FileSignature: Hashable, Sendable {
    /// How many of the file's first bytes are signed.
    public let signedCount: Int
    /// The signature's 64 bytes.
    public let bytes: [UInt8]

    /// A signature over a file's first `signedCount` bytes.
    public init(signedCount: Int, bytes: [UInt8]) {
        self.signedCount = signedCount
        self.bytes = bytes
    }

    /// What a signed file ends with, before the signature's base64.
    static let opening = Array(#","signature":"ed25519:"#.utf8)
    /// The base64 of 64 bytes: 88 characters with padding.
    static let encodedCount = 88

    /// The signature member that ends `bytes`, when it ends them exactly as the contract spells
    /// it; nil otherwise (no signature there, or one written any other way).
    public static func trailing(_ bytes: some RandomAccessCollection<UInt8>) -> FileSignature? {
        var end = bytes.count
        func byte(_ offset: Int) -> UInt8 { bytes[bytes.index(bytes.startIndex, offsetBy: offset)] }
        if end > 0, byte(end - 1) == 0x0A { end -= 1 }
        let closing = Array(#""}"#.utf8)
        let length = opening.count + encodedCount + closing.count
        guard end >= length else { return nil }
        let start = end - length
        let tail = (start..<end).map(byte)
        guard tail.starts(with: opening), tail.suffix(closing.count).elementsEqual(closing),
            let signature = Base64.decode(tail[opening.count..<(tail.count - closing.count)]), signature.count == 64
        else { return nil }
        return FileSignature(signedCount: start, bytes: signature)
    }

    /// The member a writer appends after the signed bytes (then `\n` ends the file).
    public static func member(_ signature: [UInt8]) -> [UInt8] {
        opening + Array(Base64.encode(signature).utf8) + Array(#""}"#.utf8)
    }
}

/// Standard base64 (RFC 4648, `+` `/`, `=` padding, nothing else): written by hand because the
/// pure format module uses no Foundation, and the contract needs exact lengths and padding anyway.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The bytes `text` encodes; nil unless it is canonical padded base64.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        let characters = Array(text)
        guard characters.count % 4 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count / 4 * 3)
        var index = 0
        while index < characters.count {
            var quad: [UInt8] = []
            var padding = 0
            for character in characters[index..<(index + 4)] {
                if character == UInt8(ascii: "=") {
                    padding += 1
                    quad.append(0)
                    continue
                }
                guard padding == 0, let value = alphabet.firstIndex(of: character) else { return nil }
                quad.append(UInt8(value))
            }
            // Padding only at the very end, at most two. Bits the padding leaves over in the last
            // symbol are ignored, as common decoders do (the contract's own vectors set them).
            guard padding <= 2, padding == 0 || index + 4 == characters.count else { return nil }
            let group = UInt32(quad[0]) << 18 | UInt32(quad[1]) << 12 | UInt32(quad[2]) << 6 | UInt32(quad[3])
            let produced = [UInt8(group >> 16), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)]
            bytes += produced.prefix(3 - padding)
            index += 4
        }
        return bytes
    }

    /// The padded base64 of `bytes`.
    static func encode(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var group: UInt32 = 0
            for (offset, byte) in chunk.enumerated() { group |= UInt32(byte) << (16 - 8 * offset) }
            for position in 0..<4 {
                text.append(
                    position <= chunk.count ? alphabet[Int(group >> (18 - 6 * position) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }
}
