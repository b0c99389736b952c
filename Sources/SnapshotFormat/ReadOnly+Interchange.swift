// Writing a record's normal form straight to bytes: what a published file and the store hold.

extension ReadOnly {
    /// 8 lowercase hex digits naming `bytes`: their 64-bit FNV-1a hash, its two halves XORed. It
    /// names, it does not protect: nothing relies on two values never sharing one. A script
    /// computes it over a record's or a version's normal form in RFC 8785 bytes.
    public static func shortTag(of bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        let digits = String(UInt32(truncatingIfNeeded: hash ^ (hash >> 32)), radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

extension ReadOnly.Record {
    /// A short name for the record as it is now, all its versions included (``ReadOnly/shortTag(of:)``
    /// of ``interchangeLine``): `syncctl resolve --seen` resolves only a record still so.
    public var tag: String { ReadOnly.shortTag(of: interchangeLine) }

    /// The interchange bytes of the record's normal form with its conflicts: exactly
    /// `JSONValue.object(normalForm).interchangeBytes`, written without building the tree
    /// (`fields` are already bytes).
    public var interchangeLine: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + version.encodedFields.bytes.count * (conflicts.count + 1))
        version.appendNormalForm(to: &bytes, conflicts: conflicts)
        return bytes
    }
}

extension ReadOnly.Version {
    /// A short name for this version that stays the same from one command to the next:
    /// ``ReadOnly/shortTag(of:)`` of its normal form. `syncctl conflicts` shows it and
    /// `syncctl resolve --take` accepts it, so that the version kept is the one a person chose
    /// even when other versions arrived in between and moved the numbers.
    public var tag: String {
        var bytes: [UInt8] = []
        appendNormalForm(to: &bytes, conflicts: [])
        return ReadOnly.shortTag(of: bytes)
    }

    /// Appends the interchange bytes of the normal form, with `conflicts` when there are any.
    func appendNormalForm(to bytes: inout [UInt8], conflicts: [ReadOnly.Version]) {
        // The members in RFC 8785 order. The known keys are ASCII, so their order is fixed; an
        // unknown key (rare) is slotted in before the first known key it precedes.
        var unknown = unknownKeys.members.sorted { CanonicalJSON.keyPrecedes($0.key, $1.key) }[...]
        var isFirst = true
        func open(_ key: StaticString) {
            while let next = unknown.first, CanonicalJSON.keyPrecedes(next.key, key.description) {
                member(next.key)
                next.value.writeInterchange(into: &bytes)
                unknown.removeFirst()
            }
            bytes.append(isFirst ? UInt8(ascii: "{") : UInt8(ascii: ","))
            isFirst = false
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            bytes.append(UInt8(ascii: "\""))
            bytes.append(UInt8(ascii: ":"))
        }
        func member(_ key: String) {
            bytes.append(isFirst ? UInt8(ascii: "{") : UInt8(ascii: ","))
            isFirst = false
            CanonicalJSON.writeString(key, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
        }
        if !conflicts.isEmpty {
            open("conflicts")
            bytes.append(UInt8(ascii: "["))
            for (index, conflict) in conflicts.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                conflict.appendNormalForm(to: &bytes, conflicts: [])
            }
            bytes.append(UInt8(ascii: "]"))
        }
        if deleted {
            open("deleted")
            bytes.append(contentsOf: "true".utf8)
        }
        if !encodedFields.isEmpty {
            open("fields")
            bytes.append(contentsOf: encodedFields.bytes)
        }
        open("id")
        bytes.append(UInt8(ascii: "\""))
        id.append(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        if let lastModified {
            open("lastModified")
            bytes.append(UInt8(ascii: "\""))
            if lastModified.appendWritten(to: &bytes) {
                bytes.append(UInt8(ascii: "\""))
            } else {  // a year outside 0000–9999: its string form, escaped as any string
                bytes.removeLast()
                CanonicalJSON.writeString(lastModified.written, into: &bytes)
            }
        }
        if let modifiedBy {
            open("modifiedBy")
            CanonicalJSON.writeString(modifiedBy.rawValue, into: &bytes)
        }
        if schemaVersion != 1 {
            open("schemaVersion")
            CanonicalJSON.writeNumber(Double(schemaVersion), into: &bytes, largeIntegersWithExponent: true)
        }
        open("type")
        CanonicalJSON.writeString(type, into: &bytes)
        if !versionVector.isEmpty {
            open("versionVector")
            bytes.append(UInt8(ascii: "{"))
            for (index, entry) in versionVector.entries.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                CanonicalJSON.writeString(entry.device.rawValue, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                CanonicalJSON.writeNumber(Double(entry.count), into: &bytes, largeIntegersWithExponent: true)
            }
            bytes.append(UInt8(ascii: "}"))
        }
        for rest in unknown {
            member(rest.key)
            rest.value.writeInterchange(into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}

extension JSONValue {
    /// Appends the interchange bytes of the value (see ``interchangeBytes``).
    func writeInterchange(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: interchangeBytes)
    }
}
