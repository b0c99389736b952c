/// Validating a value and writing its interchange bytes in one pass, without building a tree.
///
/// This is what keeps `fields` cheap: a merge reads every version of every file, and building a
/// ``JSONValue`` tree per version, only to serialize it again, was most of a merge's time. The
/// checks are the tree parser's own (the same functions read strings and numbers), so this
/// accepts exactly what ``StrictJSON/parse(_:)-([UInt8])`` accepts, and writes exactly what
/// ``JSONValue/interchangeBytes`` writes for the parsed value; tests compare both over the
/// conformance vectors and generated documents.
extension StrictJSONParser {
    /// Validates the value at `position` (after whitespace) and appends its interchange bytes to
    /// `out`: object members sorted by their keys' UTF-16 code units, strings escaped as RFC 8785
    /// says, numbers in ECMAScript form with large integral ones in exponent form.
    ///
    /// - Parameter depth: containers already open around the value.
    mutating func appendInterchange(into out: inout [UInt8], depth: Int) throws(JSONParseError) {
        skipWhitespace()
        guard position < input.count else { throw truncated() }
        switch input[position] {
        case UInt8(ascii: "{"):
            try appendObject(into: &out, depth: depth + 1)
        case UInt8(ascii: "["):
            try checkInterchangeDepth(depth + 1)
            position += 1
            out.append(UInt8(ascii: "["))
            skipWhitespace()
            if position < input.count, input[position] == UInt8(ascii: "]") {
                position += 1
                out.append(UInt8(ascii: "]"))
                return
            }
            while true {
                try appendInterchange(into: &out, depth: depth + 1)
                guard try continues(closedBy: UInt8(ascii: "]")) else { break }
                out.append(UInt8(ascii: ","))
            }
            out.append(UInt8(ascii: "]"))
        case UInt8(ascii: "\""):
            try appendString(into: &out, isKey: false)
        case UInt8(ascii: "t"):
            _ = try parseLiteral("true", .bool(true))
            out.append(contentsOf: "true".utf8)
        case UInt8(ascii: "f"):
            _ = try parseLiteral("false", .bool(false))
            out.append(contentsOf: "false".utf8)
        case UInt8(ascii: "n"):
            _ = try parseLiteral("null", .null)
            out.append(contentsOf: "null".utf8)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try appendNumber(into: &out)
        default:
            throw unexpectedCharacter(context: "")
        }
    }

    private func checkInterchangeDepth(_ depth: Int) throws(JSONParseError) {
        if depth + baseDepth > StrictJSON.maximumDepth {
            throw JSONParseError.tooDeep(at: position)
        }
    }

    private mutating func appendObject(into out: inout [UInt8], depth: Int) throws(JSONParseError) {
        try checkInterchangeDepth(depth)
        position += 1
        let objectStart = out.count
        out.append(UInt8(ascii: "{"))
        skipWhitespace()
        if position < input.count, input[position] == UInt8(ascii: "}") {
            position += 1
            out.append(UInt8(ascii: "}"))
            return
        }
        let firstMember = memberSpans.count
        let firstKeyByte = keyBytes.count
        var inOrder = true
        while true {
            skipWhitespace()
            guard position < input.count else { throw truncated() }
            guard input[position] == UInt8(ascii: "\"") else {
                throw unexpectedCharacter(context: " (expected a key in double quotes)")
            }
            let keyOffset = position
            let memberStart = out.count
            let keyStart = keyBytes.count
            try appendString(into: &out, isKey: true)
            let span = MemberSpan(
                keyStart: keyStart, keyEnd: keyBytes.count, start: memberStart, end: 0, keyOffset: keyOffset)
            if memberSpans.count > firstMember, inOrder, !keyPrecedes(memberSpans[memberSpans.count - 1], span) {
                inOrder = false
            }
            skipWhitespace()
            guard position < input.count else { throw truncated() }
            guard input[position] == UInt8(ascii: ":") else { throw unexpectedCharacter(context: " (expected ':')") }
            position += 1
            out.append(UInt8(ascii: ":"))
            memberSpans.append(span)
            let index = memberSpans.count - 1
            try appendInterchange(into: &out, depth: depth)
            memberSpans[index].end = out.count
            guard try continues(closedBy: UInt8(ascii: "}")) else { break }
            out.append(UInt8(ascii: ","))
        }
        if !inOrder {
            // Written in document order; rewrite in key order, refusing a key that repeats.
            // (Worked out in the parser's own array, taken out meanwhile: the sort reads
            // `memberSpans`, so it cannot sort a property of the parser in place.)
            var order: [Int] = []
            swap(&order, &memberOrder)
            defer { swap(&order, &memberOrder) }
            order.removeAll(keepingCapacity: true)
            order.append(contentsOf: firstMember..<memberSpans.count)
            sortByKey(&order)
            for (previous, next) in zip(order, order.dropFirst())
            where !keyPrecedes(memberSpans[previous], memberSpans[next]) {
                let key = String(decoding: keyBytes[memberSpans[next].keyStart..<memberSpans[next].keyEnd], as: UTF8.self)
                let offset = max(memberSpans[previous].keyOffset, memberSpans[next].keyOffset)
                throw JSONParseError(offset: offset, reason: "duplicate key \(JSONParseError.displayed(key))")
            }
            // The members and their commas keep their total length: copy them aside once, then
            // write them back in order over the same bytes.
            reordering.removeAll(keepingCapacity: true)
            reordering.append(contentsOf: out[(objectStart + 1)...])
            var at = objectStart + 1
            out.withUnsafeMutableBufferPointer { target in
                reordering.withUnsafeBufferPointer { source in
                    for (n, member) in order.enumerated() {
                        if n > 0 {
                            target[at] = UInt8(ascii: ",")
                            at += 1
                        }
                        let span = memberSpans[member]
                        let from = span.start - objectStart - 1
                        let count = span.end - span.start
                        _ = UnsafeMutableBufferPointer(rebasing: target[at..<at + count]).initialize(
                            from: UnsafeBufferPointer(rebasing: source[from..<from + count]))
                        at += count
                    }
                }
            }
        }
        out.append(UInt8(ascii: "}"))
        memberSpans.removeSubrange(firstMember...)
        keyBytes.removeSubrange(firstKeyByte...)
    }

    /// Sorts the members `order` (indices into ``memberSpans``) by their keys, as
    /// ``keyPrecedes(_:_:)`` orders them.
    private func sortByKey(_ order: inout [Int]) {
        // The arrays are passed on, not `self`: a closure that captured the parser copied it
        // whole (every array in it retained and released) at each object.
        Self.sortByKey(&order, spans: memberSpans, keys: keyBytes)
    }

    /// Sorts `order`, indices into `spans`, by the keys `spans` point at in `keys`.
    ///
    /// A few members are sorted by insertion. For more, each key's first 8 bytes after the
    /// beginning they all share (`"org.example.settings."`), read as one big-endian integer
    /// (zeros past a key's end), decide most comparisons at once, and equal ones go on to the
    /// whole keys: an object's keys out of order (200 shuffled names per record, or one object of
    /// 400,000 keys) spent most of a merge comparing keys byte by byte. When those bytes hold a
    /// lead byte from EE up, where UTF-16 order can differ from byte order, every comparison
    /// takes the whole keys.
    private static func sortByKey(_ order: inout [Int], spans: [MemberSpan], keys: [UInt8]) {
        guard order.count > 1 else { return }
        keys.withUnsafeBufferPointer { bytes in
            spans.withUnsafeBufferPointer { spans in
                if order.count <= 16 {
                    for i in 1..<order.count {
                        let member = order[i]
                        var j = i
                        while j > 0, precedes(bytes, spans[member], spans[order[j - 1]]) {
                            order[j] = order[j - 1]
                            j -= 1
                        }
                        order[j] = member
                    }
                    return
                }
                struct Keyed {
                    var prefix: UInt64
                    var member: Int
                }
                let first = spans[order[0]]
                var shared = first.keyEnd - first.keyStart
                for member in order.dropFirst() where shared > 0 {
                    let span = spans[member]
                    shared = commonLength(bytes, first.keyStart, span.keyStart, min(shared, span.keyEnd - span.keyStart))
                }
                var highLead = false
                var keyed: [Keyed] = []
                keyed.reserveCapacity(order.count)
                for member in order {
                    let span = spans[member]
                    var prefix: UInt64 = 0
                    for i in shared..<shared + 8 {
                        let byte: UInt8 = span.keyStart + i < span.keyEnd ? bytes[span.keyStart + i] : 0
                        if byte >= 0xEE { highLead = true }
                        prefix = prefix << 8 | UInt64(byte)
                    }
                    keyed.append(Keyed(prefix: prefix, member: member))
                }
                if highLead {
                    order.sort { precedes(bytes, spans[$0], spans[$1]) }
                    return
                }
                keyed.sort { $0.prefix != $1.prefix ? $0.prefix < $1.prefix : precedes(bytes, spans[$0.member], spans[$1.member]) }
                for i in order.indices { order[i] = keyed[i].member }
            }
        }
    }

    /// How many bytes from `left` and `right` in `bytes` are equal, up to `limit`: eight at a time,
    /// then one at a time.
    private static func commonLength(_ bytes: UnsafeBufferPointer<UInt8>, _ left: Int, _ right: Int, _ limit: Int) -> Int {
        guard limit > 0 else { return 0 }
        let base = UnsafeRawPointer(bytes.baseAddress!)
        var i = 0
        while i + 8 <= limit,
            base.loadUnaligned(fromByteOffset: left + i, as: UInt64.self)
                == base.loadUnaligned(fromByteOffset: right + i, as: UInt64.self)
        {
            i += 8
        }
        while i < limit, bytes[left + i] == bytes[right + i] { i += 1 }
        return i
    }

    /// Whether the key of `lhs` sorts strictly before the key of `rhs` by UTF-16 code units
    /// (RFC 8785), as ``precedes(_:_:_:)`` says.
    private func keyPrecedes(_ lhs: MemberSpan, _ rhs: MemberSpan) -> Bool {
        keyBytes.withUnsafeBufferPointer { Self.precedes($0, lhs, rhs) }
    }

    /// Whether the key `lhs` points at in `bytes` sorts strictly before the key of `rhs` by UTF-16
    /// code units (RFC 8785). UTF-8 byte order is code point order, which differs from UTF-16 order
    /// only between U+E000…U+FFFF (lead bytes EE, EF) and supplementary characters (F0…F4); the
    /// first differing bytes are both lead bytes whenever that case arises.
    @inline(__always)
    private static func precedes(_ bytes: UnsafeBufferPointer<UInt8>, _ lhs: MemberSpan, _ rhs: MemberSpan) -> Bool {
        let leftCount = lhs.keyEnd - lhs.keyStart
        let rightCount = rhs.keyEnd - rhs.keyStart
        // Keys often share a long beginning (namespaced names): skipped eight bytes at a time.
        let i = commonLength(bytes, lhs.keyStart, rhs.keyStart, min(leftCount, rightCount))
        guard i < leftCount, i < rightCount else { return leftCount < rightCount }
        let a = bytes[lhs.keyStart + i]
        let b = bytes[rhs.keyStart + i]
        if a >= 0xEE, a <= 0xEF, b >= 0xF0 { return false }
        if b >= 0xEE, b <= 0xEF, a >= 0xF0 { return true }
        return a < b
    }

    /// Validates the string at `position` and appends it as RFC 8785 writes it; a key's decoded
    /// bytes also go to ``keyBytes``.
    private mutating func appendString(into out: inout [UInt8], isKey: Bool) throws(JSONParseError) {
        let start = position + 1
        // Fast path: nothing to unescape or escape, so the input's bytes are the output's.
        let i = try skippingPlainText(from: start)
        if i < input.count, input[i] == UInt8(ascii: "\"") {
            let plain = UnsafeBufferPointer(rebasing: input[start..<i])
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: plain)
            out.append(UInt8(ascii: "\""))
            if isKey { keyBytes.append(contentsOf: plain) }
            position = i + 1
            return
        }
        // Escapes: decoded into `scratch` and written from there, without making a String.
        if let plain = try decodeString(isKey: isKey) {
            CanonicalJSON.writeString(utf8: plain, into: &out)
            if isKey { keyBytes.append(contentsOf: plain) }
            return
        }
        scratch.withUnsafeBufferPointer { CanonicalJSON.writeString(utf8: $0, into: &out) }
        if isKey { keyBytes.append(contentsOf: scratch) }
    }

    /// Validates the number at `position` and appends its interchange form.
    private mutating func appendNumber(into out: inout [UInt8]) throws(JSONParseError) {
        let start = position
        guard case .number(let value) = try parseNumber() else { preconditionFailure("parseNumber returns numbers") }
        let literal = UnsafeBufferPointer(rebasing: input[start..<position])
        // A plain integer of at most 15 digits (below 2^53) other than -0 is already written as
        // ECMAScript writes it; anything else goes through the serializer.
        if Self.isAlreadyInterchange(literal, value: value) {
            out.append(contentsOf: literal)
        } else {
            CanonicalJSON.writeNumber(value, into: &out, largeIntegersWithExponent: true)
        }
    }
}

extension StrictJSONParser {
    /// Whether a number's literal is already what ECMAScript writes for its value, so it can be
    /// copied instead of formatted (formatting goes through the shortest round-trip digits).
    ///
    /// True for plain decimals (no exponent) with at most 15 significant digits, no leading zero
    /// in the integer part beyond a lone `0`, no trailing zero in the fraction, and a magnitude
    /// of at least 10^-6 (ECMAScript uses an exponent below that), and not `-0`. At most 15
    /// significant digits make the literal the shortest decimal of its double: two different
    /// decimals of at most 15 digits are never the same double.
    static func isAlreadyInterchange(_ literal: UnsafeBufferPointer<UInt8>, value: Double) -> Bool {
        if value == 0 { return literal.count == 1 }  // "0"; "-0", "0.0" are written "0"
        var index = literal[0] == UInt8(ascii: "-") ? 1 : 0
        var significant = 0
        var leadingZeros = 0  // zeros right after the point when the integer part is 0
        let integerIsZero = literal[index] == UInt8(ascii: "0")
        while index < literal.count, literal[index] &- UInt8(ascii: "0") < 10 {
            if !integerIsZero { significant += 1 }
            index += 1
        }
        if index == literal.count { return significant <= 15 }
        guard literal[index] == UInt8(ascii: ".") else { return false }  // an exponent
        index += 1
        let fractionStart = index
        while index < literal.count, literal[index] &- UInt8(ascii: "0") < 10 {
            if integerIsZero, significant == 0, literal[index] == UInt8(ascii: "0") {
                leadingZeros += 1
            } else {
                significant += 1
            }
            index += 1
        }
        guard index == literal.count, index > fractionStart, literal[index - 1] != UInt8(ascii: "0") else {
            return false
        }
        return significant <= 15 && leadingZeros <= 5
    }
}

/// One member of an object being written: where its decoded key is in ``StrictJSONParser/keyBytes``
/// and where `"key":value` is in the output.
struct MemberSpan: Sendable {
    var keyStart: Int
    var keyEnd: Int
    var start: Int
    var end: Int
    /// Where the key is in the input, for an error message.
    var keyOffset: Int
}

extension StrictJSON {
    /// Validates one JSON document as ``parse(_:)-([UInt8])`` does and returns its interchange
    /// bytes (what ``JSONValue/interchangeBytes`` gives for the parsed value), building no tree.
    public static func interchangeBytes(of bytes: [UInt8]) throws(JSONParseError) -> [UInt8] {
        let result: Result<[UInt8], JSONParseError> = bytes.withUnsafeBufferPointer { buffer in
            var parser = StrictJSONParser(buffer)
            var out: [UInt8] = []
            out.reserveCapacity(buffer.count)
            do throws(JSONParseError) {
                try parser.startDocument()
                try parser.appendInterchange(into: &out, depth: 0)
                try parser.endDocument()
                return .success(out)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
