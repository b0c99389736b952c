/// Writes snapshot files: one record per line, each in its normal form serialized by RFC 8785
/// (numbers beyond ±(2^53−1) with an exponent: see ``JSONValue/interchangeBytes``).
///
/// A file is a header, the records and a footer, so a writer can stream records out of the
/// store without holding the whole file's tree in memory.
public enum SnapshotWriter {
    /// The bytes before the first record:
    /// `{"format":2,"device":…,"part":…,"generation":…,"writtenAt":…,"key":…,"records":[`
    /// (`part` for a part only, `key` for a signed file only).
    ///
    /// Written member by member: `records` must come last so records can stream after it, which
    /// RFC 8785's order (where `writtenAt` sorts after `records`) would not give.
    public static func header(
        device: DeviceID, part: PartPrefix = .whole, generation: Int64, writtenAt: Timestamp, key: PublicKey? = nil
    ) -> [UInt8] {
        var bytes = Array(#"{"format":"#.utf8)
        JSONValue.number(Double(ReadOnly.Snapshot.currentFormat)).writeCanonical(into: &bytes)
        bytes += Array(#","device":"#.utf8)
        JSONValue.string(device.rawValue).writeCanonical(into: &bytes)
        if !part.isWhole {
            bytes += Array(#","part":"#.utf8)
            JSONValue.string(part.rawValue).writeCanonical(into: &bytes)
        }
        bytes += Array(#","generation":"#.utf8)
        JSONValue.number(Double(generation)).writeCanonical(into: &bytes)
        bytes += Array(#","writtenAt":"#.utf8)
        JSONValue.string(writtenAt.written).writeCanonical(into: &bytes)
        if let key {
            bytes += Array(#","key":"#.utf8)
            JSONValue.string(key.text).writeCanonical(into: &bytes)
        }
        bytes += Array(#","records":["#.utf8)
        return bytes
    }

    /// Appends one record (preceded by a separator unless it is the first).
    public static func appendRecord(_ record: ReadOnly.Record, isFirst: Bool, into bytes: inout [UInt8]) {
        appendLine(record.interchangeLine, isFirst: isFirst, into: &bytes)
    }

    /// Appends one record already serialized as its RFC 8785 normal form (a stored line).
    public static func appendLine(_ line: [UInt8], isFirst: Bool, into bytes: inout [UInt8]) {
        line.withUnsafeBytes { appendLine($0, isFirst: isFirst, into: &bytes) }
    }

    /// Appends one record line from raw memory (a row the store hands out), as ``appendLine(_:isFirst:into:)-([UInt8],_,_)``.
    public static func appendLine(_ line: UnsafeRawBufferPointer, isFirst: Bool, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: separator(isFirst: isFirst))
        bytes.append(contentsOf: line)
    }

    /// What comes before a record line: a line break, after a comma unless it is the first.
    public static func separator(isFirst: Bool) -> [UInt8] {
        isFirst ? newline : commaNewline
    }

    private static let newline: [UInt8] = [0x0A]
    private static let commaNewline: [UInt8] = [0x2C, 0x0A]

    /// The bytes after the last record.
    public static let footer: [UInt8] = Array("\n]}\n".utf8)

    /// What follows the last record in a signed file: the end of `records`, which is where the
    /// signed bytes end.
    public static let signedEnd: [UInt8] = Array("\n]".utf8)

    /// What follows the signed bytes of a signed file: the signature member, the closing brace and a line feed.
    public static func signatureFooter(_ signature: [UInt8]) -> [UInt8] {
        FileSignature.member(signature) + [0x0A]
    }

    /// A whole snapshot file.
    public static func bytes(of snapshot: ReadOnly.Snapshot) -> [UInt8] {
        var bytes = header(
            device: snapshot.device, part: snapshot.part, generation: snapshot.generation,
            writtenAt: snapshot.writtenAt ?? Timestamp(milliseconds: 0))
        for (index, record) in snapshot.records.enumerated() {
            appendRecord(record, isFirst: index == 0, into: &bytes)
        }
        bytes.append(contentsOf: footer)
        return bytes
    }
}
