/// Codable conformance of the `ReadOnly` projection, through ``JSONValue``.
///
/// Decoding is strict: any rule a version or record breaks throws a `DecodingError` naming it.
/// (``SnapshotReader`` is the lenient reader the merge uses: it drops only the bad record.)
extension ReadOnly.Version: Codable {
    public init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSONValue(from: decoder) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "a version must be an object"))
        }
        do {
            self = try ReadOnly.Version(validating: object)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.rule))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try JSONValue.object(normalForm).encode(to: encoder)
    }
}

extension ReadOnly.Record: Codable {
    private enum CodingKeys: String, CodingKey { case conflicts }

    public init(from decoder: any Decoder) throws {
        let version = try ReadOnly.Version(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let conflicts = try container.decodeIfPresent([ReadOnly.Version].self, forKey: .conflicts) ?? []
        if let stranger = conflicts.first(where: { $0.id != version.id }) {
            throw DecodingError.dataCorruptedError(
                forKey: .conflicts, in: container, debugDescription: "a conflict entry has another id: \(stranger.id)")
        }
        self.init(version: version, conflicts: conflicts)
    }

    public func encode(to encoder: any Encoder) throws {
        try JSONValue.object(normalForm).encode(to: encoder)
    }
}

extension ReadOnly.Snapshot: Codable {
    private enum CodingKeys: String, CodingKey { case format, device, part, generation, writtenAt, records }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(Int64.self, forKey: .format)
        guard (Self.oldestFormat...Self.currentFormat).contains(format) else {
            throw DecodingError.dataCorruptedError(
                forKey: .format, in: container, debugDescription: "format \(format) is not 1 or 2")
        }
        if format >= 2, let partText = try container.decodeIfPresent(String.self, forKey: .part) {
            guard let part = PartPrefix(partText) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .part, in: container, debugDescription: "part \(partText) is not 1 to 4 upper-case hex digits")
            }
            self.part = part
        }
        let deviceText = try container.decode(String.self, forKey: .device)
        guard let device = DeviceID(deviceText) else {
            throw DecodingError.dataCorruptedError(forKey: .device, in: container, debugDescription: "not a device ID")
        }
        self.device = device
        generation = try container.decode(Int64.self, forKey: .generation)
        writtenAt = try container.decodeIfPresent(String.self, forKey: .writtenAt).flatMap(Timestamp.init(parsing:))
        records = try container.decode([ReadOnly.Record].self, forKey: .records)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encode(device.rawValue, forKey: .device)
        if !part.isWhole { try container.encode(part.rawValue, forKey: .part) }
        try container.encode(generation, forKey: .generation)
        try container.encodeIfPresent(writtenAt?.written, forKey: .writtenAt)
        try container.encode(records, forKey: .records)
    }
}
