/// Reads a snapshot file's bytes exactly as the contract says.
public enum SnapshotReader {
    /// Reads one snapshot file found under `fileName` in the shared folder.
    ///
    /// A problem with the file as a whole throws; a problem with one record (or one conflict
    /// entry) only drops that record (or entry) and is listed in ``SnapshotReading/problems``.
    public static func read(bytes: [UInt8], fileName: String) throws(SnapshotFileProblem) -> SnapshotReading {
        let document: JSONValue
        do {
            document = try StrictJSON.parse(bytes)
        } catch {
            throw .invalidJSON(error)
        }
        guard case .object(let top) = document else {
            throw .invalidTopLevel("the top level must be an object, not \(document.briefDescription)")
        }
        let header = try readHeader(top, fileName: fileName)
        guard case .array(let records)? = top["records"].nonNull else {
            let found = top["records"].nonNull.map { $0.briefDescription } ?? "nothing"
            throw .invalidTopLevel("records must be an array, found \(found)")
        }
        var reading = SnapshotReading(
            device: header.device, role: header.role, generation: header.generation,
            writtenAt: nil, versions: [], problems: [], warnings: [], recordCount: records.count)
        switch top["writtenAt"].nonNull {
        case nil: break
        case .string(let text)? where Timestamp(parsing: text) != nil:
            reading.writtenAt = Timestamp(parsing: text)
        case let other?:
            reading.warnings.append(
                "writtenAt \(other.briefDescription) is not a valid timestamp (informational only; the file still merges)"
            )
        }
        reading.versions.reserveCapacity(records.count)
        for (index, element) in records.enumerated() {
            readRecord(element, at: index, into: &reading)
        }
        return reading
    }

    private struct Header {
        var device: DeviceID
        var role: SourceRole
        var generation: Int64
    }

    private static func readHeader(_ top: JSONObject, fileName: String) throws(SnapshotFileProblem) -> Header {
        guard let formatValue = top["format"].nonNull else { throw .invalidTopLevel("format is missing") }
        guard let format = formatValue.exactInteger else {
            throw .invalidTopLevel("format must be an integer, not \(formatValue.briefDescription)")
        }
        if format > ReadOnly.Snapshot.currentFormat { throw .newerFormat(format) }
        guard format == ReadOnly.Snapshot.currentFormat else {
            throw .invalidTopLevel("format \(format) is not a snapshot format (this version reads 1)")
        }
        guard case .string(let deviceText)? = top["device"].nonNull else {
            throw .invalidTopLevel("device is missing or not a string")
        }
        let role = SourceFileName.classify(name: fileName, deviceInside: deviceText)
        switch role {
        case .own, .copy: break
        case .rejected(let reason): throw .misnamed(reason)
        case .skipped: throw .misnamed("\(fileName) is not a name a snapshot may have")
        }
        guard let device = DeviceID(deviceText) else {
            throw .misnamed("\(quoted(deviceText)) is not a valid device ID")
        }
        guard let generationValue = top["generation"].nonNull else {
            throw .invalidTopLevel("generation is missing")
        }
        guard let generation = generationValue.exactInteger, generation >= 1 else {
            throw .invalidTopLevel("generation must be an integer >= 1, not \(generationValue.briefDescription)")
        }
        return Header(device: device, role: role, generation: generation)
    }

    private static func readRecord(_ element: JSONValue, at index: Int, into reading: inout SnapshotReading) {
        guard case .object(let object) = element else {
            reading.problems.append(
                RecordProblem(
                    recordIndex: index, recordID: nil,
                    rule: "a record must be an object, not \(element.briefDescription)"))
            return
        }
        let idText: String? = if case .string(let text)? = object["id"] { text } else { nil }
        func problem(_ rule: String, entry: Int? = nil) {
            reading.problems.append(
                RecordProblem(recordIndex: index, conflictIndex: entry, recordID: idText, rule: rule))
        }
        var entries: [JSONValue] = []
        switch object["conflicts"].nonNull {
        case nil: break
        case .array(let values)?: entries = values
        case let other?:
            problem("conflicts must be an array, not \(other.briefDescription)")
            return
        }
        do {
            reading.versions.append(try ReadOnly.Version(validating: object))
        } catch {
            problem(error.rule)
        }
        guard !entries.isEmpty else { return }
        guard let recordID = idText.flatMap(RecordID.init) else {
            problem("its \(entries.count) conflict entries cannot be merged: the record has no valid id")
            return
        }
        for (entryIndex, entry) in entries.enumerated() {
            do {
                reading.versions.append(try readConflictEntry(entry, recordID: recordID))
            } catch {
                problem(error.rule, entry: entryIndex)
            }
        }
    }

    private static func readConflictEntry(_ entry: JSONValue, recordID: RecordID) throws(VersionRuleViolation)
        -> ReadOnly.Version
    {
        guard case .object(let object) = entry else {
            throw VersionRuleViolation("a conflict entry must be an object, not \(entry.briefDescription)")
        }
        switch object["conflicts"].nonNull {
        case nil: break
        case .array(let nested)? where nested.isEmpty: break
        case _?: throw VersionRuleViolation("a conflict entry must not have conflicts of its own")
        }
        let version = try ReadOnly.Version(validating: object)
        guard version.id == recordID else {
            throw VersionRuleViolation("a conflict entry must have its record's id \(recordID), not \(version.id)")
        }
        return version
    }
}
