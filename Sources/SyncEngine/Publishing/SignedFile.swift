import SnapshotFormat

extension SyncDevice {
    /// The header of one of this device's files: format 2, the part, the generation, when it was
    /// written, and the public key it is signed with.
    func fileHeader(part: PartPrefix, generation: Int64, now: Timestamp) -> [UInt8] {
        SnapshotWriter.header(device: device, part: part, generation: generation, writtenAt: now, key: key.publicKey)
    }

    /// Ends a file whose header (`headerCount` bytes) and record lines are in `bytes`: closes its
    /// records, signs every byte so far and appends the signature member, as the contract spells it.
    ///
    /// - Returns: the file's digest as this device keeps it (``PublishedLayout/fileDigest(of:)``).
    func signAndEnd(_ bytes: inout [UInt8], headerCount: Int, recordsDigest: String) -> String {
        bytes += SnapshotWriter.signedEnd
        let footer = SnapshotWriter.signedEnd + SnapshotWriter.signatureFooter(key.sign(bytes))
        bytes += footer.dropFirst(SnapshotWriter.signedEnd.count)
        return PublishedLayout.fileDigest(header: bytes[..<headerCount], footer: footer, recordsDigest: recordsDigest)
    }
}
