/// Strict I-JSON (RFC 7493) parsing of one document.
///
/// Beyond RFC 8259's grammar it refuses invalid UTF-8, duplicate keys, lone surrogates, numbers
/// that overflow a double, integers (no fraction, no exponent) beyond ±(2^53−1), and nesting
/// deeper than ``maximumDepth``. A number that underflows (e.g. `1e-400`) is accepted as the
/// nearest double, zero keeping its sign: it is within the double range and RFC 7493 only
/// warns about lost precision; the conformance vectors do not say otherwise.
public enum StrictJSON {
    /// The deepest nesting of arrays and objects accepted.
    public static let maximumDepth = 512

    /// Parses exactly one JSON document (surrounding whitespace allowed; a leading UTF-8 BOM EF BB BF is ignored).
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { parseResult($0) }.get()
    }

    /// Parses exactly one JSON document given as text (a leading U+FEFF is ignored).
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        return try text.withUTF8 { parseResult($0) }.get()
    }

    /// Parses exactly one JSON document from raw memory, e.g. a `Data` or a mapped file.
    public static func parse(_ buffer: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        try parseResult(buffer.assumingMemoryBound(to: UInt8.self)).get()
    }

    /// Parses canonical JSON this code wrote itself (the store): like ``parse(_:)-([UInt8])``, but
    /// an integer beyond ±(2^53−1), which RFC 8785 writes for an integral double such as `1e20`,
    /// is read as that double instead of refused.
    public static func parseCanonical(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        return try text.withUTF8 { parseResult($0, acceptsLargeIntegers: true) }.get()
    }

    /// Checks one document as ``parse(_:)-([UInt8])`` does, but at any depth and building nothing
    /// (``StrictJSONParser/validateValue()``).
    static func validate(_ bytes: [UInt8]) throws(JSONParseError) {
        try bytes.withUnsafeBufferPointer { input -> Result<Void, JSONParseError> in
            var parser = StrictJSONParser(input)
            do throws(JSONParseError) {
                try parser.startDocument()
                try parser.validateValue()
                try parser.endDocument()
                return .success(())
            } catch {
                return .failure(error)
            }
        }.get()
    }

    private static func parseResult(_ input: UnsafeBufferPointer<UInt8>, acceptsLargeIntegers: Bool = false) -> Result<
        JSONValue, JSONParseError
    > {
        var parser = StrictJSONParser(input)
        parser.acceptsLargeIntegers = acceptsLargeIntegers
        do throws(JSONParseError) {
            return .success(try parser.parseDocument())
        } catch {
            return .failure(error)
        }
    }
}

/// The working arrays of a ``StrictJSONParser``, kept between documents.
public struct ParserBuffers: Sendable {
    var scratch: [UInt8] = []
    var memberSpans: [MemberSpan] = []
    var keyBytes: [UInt8] = []
    var reordering: [UInt8] = []
    var memberOrder: [Int] = []
    var fieldsBuffer: [UInt8] = []

    public init() {}
}

/// The parser's state; containers are kept on explicit stacks so deep input cannot overflow the call stack.
struct StrictJSONParser {
    let input: UnsafeBufferPointer<UInt8>
    var position = 0
    var acceptsLargeIntegers = false
    /// The input is a line this device's store wrote (``ReadOnly/Record/interchangeLine``), whose
    /// `fields` are interchange bytes already: the record scanner copies them as they are,
    /// instead of writing them again (which was more than half of reading a stored line).
    var fieldsAreInterchange = false
    /// Containers open around the input (when it is one element cut out of a larger document),
    /// counted against ``StrictJSON/maximumDepth`` as if they were in it.
    var baseDepth = 0
    var scratch: [UInt8] = []
    /// The members of the objects being written by ``appendInterchange(into:depth:)``, innermost last.
    var memberSpans: [MemberSpan] = []
    /// The decoded keys of those members, which ``memberSpans`` point into.
    var keyBytes: [UInt8] = []
    /// The members of an object being put in key order, copied aside.
    var reordering: [UInt8] = []
    /// Those members' indices, in key order.
    var memberOrder: [Int] = []
    /// Where `fields` are written before they get an array of their own.
    var fieldsBuffer: [UInt8] = []
    private var arrays: [[JSONValue]] = []
    private var objects: [ObjectBuilder] = []
    private var openIsObject: [Bool] = []

    init(_ input: UnsafeBufferPointer<UInt8>) { self.input = input }

    /// A parser that works in `buffers` (taken, to be given back by ``giveBack(_:)``): reading many
    /// small documents then allocates its working arrays once, not once per document.
    init(_ input: UnsafeBufferPointer<UInt8>, reusing buffers: inout ParserBuffers) {
        self.input = input
        swap(&scratch, &buffers.scratch)
        swap(&memberSpans, &buffers.memberSpans)
        swap(&keyBytes, &buffers.keyBytes)
        swap(&reordering, &buffers.reordering)
        swap(&memberOrder, &buffers.memberOrder)
        swap(&fieldsBuffer, &buffers.fieldsBuffer)
    }

    /// Gives the working arrays back to `buffers`, emptied but keeping their capacity.
    mutating func giveBack(_ buffers: inout ParserBuffers) {
        scratch.removeAll(keepingCapacity: true)
        memberSpans.removeAll(keepingCapacity: true)
        keyBytes.removeAll(keepingCapacity: true)
        reordering.removeAll(keepingCapacity: true)
        memberOrder.removeAll(keepingCapacity: true)
        fieldsBuffer.removeAll(keepingCapacity: true)
        swap(&scratch, &buffers.scratch)
        swap(&memberSpans, &buffers.memberSpans)
        swap(&keyBytes, &buffers.keyBytes)
        swap(&reordering, &buffers.reordering)
        swap(&memberOrder, &buffers.memberOrder)
        swap(&fieldsBuffer, &buffers.fieldsBuffer)
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        try startDocument()
        let value = try parseValue()
        try endDocument()
        return value
    }

    /// Moves past a leading byte order mark and whitespace to the document's value, which must be there.
    mutating func startDocument() throws(JSONParseError) {
        if input.count >= 3, input[0] == 0xEF, input[1] == 0xBB, input[2] == 0xBF { position = 3 }
        skipWhitespace()
        if position == input.count {
            throw JSONParseError(offset: position, reason: "unexpected end of input (there is no JSON value)")
        }
    }

    /// After the document's value: nothing but whitespace may follow.
    mutating func endDocument() throws(JSONParseError) {
        skipWhitespace()
        if position < input.count { throw unexpectedCharacter(context: " after the end of the document") }
    }

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        var value: JSONValue
        nextValue: while true {
            skipWhitespace()
            guard position < input.count else { throw truncated() }
            switch input[position] {
            case UInt8(ascii: "{"):
                try checkDepth()
                position += 1
                skipWhitespace()
                if position < input.count, input[position] == UInt8(ascii: "}") {
                    position += 1
                    value = .object(JSONObject())
                } else {
                    objects.append(ObjectBuilder())
                    openIsObject.append(true)
                    try readKey()
                    continue nextValue
                }
            case UInt8(ascii: "["):
                try checkDepth()
                position += 1
                skipWhitespace()
                if position < input.count, input[position] == UInt8(ascii: "]") {
                    position += 1
                    value = .array([])
                } else {
                    arrays.append([])
                    openIsObject.append(false)
                    continue nextValue
                }
            case UInt8(ascii: "\""): value = .string(try parseString(isKey: false))
            case UInt8(ascii: "t"): value = try parseLiteral("true", .bool(true))
            case UInt8(ascii: "f"): value = try parseLiteral("false", .bool(false))
            case UInt8(ascii: "n"): value = try parseLiteral("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = try parseNumber()
            default: throw unexpectedCharacter(context: "")
            }
            // Attach the finished value to the open containers, closing those that end here.
            while let isObject = openIsObject.last {
                if isObject {
                    objects[objects.count - 1].add(value)
                } else {
                    arrays[arrays.count - 1].append(value)
                }
                if try continues(closedBy: UInt8(ascii: isObject ? "}" : "]")) {
                    if isObject { try readKey() }
                    continue nextValue
                }
                openIsObject.removeLast()
                value = isObject ? .object(objects.removeLast().finish()) : .array(arrays.removeLast())
            }
            return value
        }
    }

    /// ``parseValue()``, except that a value that is valid JSON but nested deeper than
    /// ``StrictJSON/maximumDepth`` gives an empty container of its kind instead of an error: for a
    /// file's top-level members, whose rules look only at the kinds of the keys they know.
    mutating func parseValueOrItsKind() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let start = position
        do throws(JSONParseError) {
            return try parseValue()
        } catch {
            guard error.isTooDeep else { throw error }
            arrays.removeAll()
            objects.removeAll()
            openIsObject.removeAll()
            position = start
            try validateValue()
            return input[start] == UInt8(ascii: "{") ? .object(JSONObject()) : .array([])
        }
    }

    private func checkDepth() throws(JSONParseError) {
        if openIsObject.count + baseDepth >= StrictJSON.maximumDepth {
            throw JSONParseError.tooDeep(at: position)
        }
    }

    /// Reads `"key" :` inside the innermost object, refusing a key it already has.
    private mutating func readKey() throws(JSONParseError) {
        let (key, keyOffset) = try readMemberName()
        guard objects[objects.count - 1].insertKey(key) else { throw Self.duplicate(key, at: keyOffset) }
        try readColon()
    }

    /// The key at `position` (after whitespace) and where it starts.
    private mutating func readMemberName() throws(JSONParseError) -> (key: String, offset: Int) {
        skipWhitespace()
        guard position < input.count else { throw truncated() }
        guard input[position] == UInt8(ascii: "\"") else {
            throw unexpectedCharacter(context: " (expected a key in double quotes)")
        }
        let keyOffset = position
        return (try parseString(isKey: true), keyOffset)
    }

    /// The `:` after a key (after whitespace).
    private mutating func readColon() throws(JSONParseError) {
        skipWhitespace()
        guard position < input.count else { throw truncated() }
        guard input[position] == UInt8(ascii: ":") else { throw unexpectedCharacter(context: " (expected ':')") }
        position += 1
    }

    private static func duplicate(_ key: String, at offset: Int) -> JSONParseError {
        JSONParseError(offset: offset, reason: "duplicate key \(JSONParseError.displayed(key))")
    }

    /// Checks the value at `position` as ``parseValue()`` does, at any depth, and builds nothing.
    ///
    /// For input refused as nested deeper than ``StrictJSON/maximumDepth``: it tells valid JSON
    /// (a record that deep is then rejected on its own) from invalid JSON (its whole file is),
    /// and gives the error ``parseValue()`` would have found with no depth limit. Open containers
    /// are kept on a stack of their keys, so no depth overflows the call stack.
    mutating func validateValue() throws(JSONParseError) {
        var open: [Set<UTF8ByteKey>?] = []  // per open container: an object's keys so far, nil for an array
        nextValue: while true {
            skipWhitespace()
            guard position < input.count else { throw truncated() }
            switch input[position] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = input[position] == UInt8(ascii: "{")
                position += 1
                skipWhitespace()
                if position < input.count, input[position] == UInt8(ascii: isObject ? "}" : "]") {
                    position += 1
                } else {
                    open.append(isObject ? [] : nil)
                    if isObject { try validateKey(in: &open) }
                    continue nextValue
                }
            case UInt8(ascii: "\""): _ = try parseString(isKey: false)
            case UInt8(ascii: "t"): _ = try parseLiteral("true", .bool(true))
            case UInt8(ascii: "f"): _ = try parseLiteral("false", .bool(false))
            case UInt8(ascii: "n"): _ = try parseLiteral("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
            default: throw unexpectedCharacter(context: "")
            }
            while let keys = open.last {
                if try continues(closedBy: UInt8(ascii: keys == nil ? "]" : "}")) {
                    if keys != nil { try validateKey(in: &open) }
                    continue nextValue
                }
                open.removeLast()
            }
            return
        }
    }

    /// ``readKey()`` for ``validateValue()``: the innermost of `open` is an object.
    private mutating func validateKey(in open: inout [Set<UTF8ByteKey>?]) throws(JSONParseError) {
        let (key, keyOffset) = try readMemberName()
        guard open[open.count - 1]!.insert(UTF8ByteKey(key)).inserted else { throw Self.duplicate(key, at: keyOffset) }
        try readColon()
    }

    mutating func parseLiteral(_ word: StaticString, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let start = position
        for i in 0..<word.utf8CodeUnitCount {
            guard position < input.count else { throw truncated() }
            guard input[position] == word.utf8Start[i] else {
                throw JSONParseError(
                    offset: start, reason: "invalid literal (expected \(word), and only in lower case)")
            }
            position += 1
        }
        return value
    }

    mutating func skipWhitespace() {
        while position < input.count {
            switch input[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// After an array's element or an object's member: skips whitespace, then takes the `,` that
    /// says another follows (true) or the `closing` byte that ends the container (false). Any
    /// other byte, or the end of the input, is an error.
    mutating func continues(closedBy closing: UInt8) throws(JSONParseError) -> Bool {
        skipWhitespace()
        guard position < input.count else { throw truncated() }
        if input[position] == UInt8(ascii: ",") {
            position += 1
            return true
        }
        guard input[position] == closing else {
            throw unexpectedCharacter(
                context: closing == UInt8(ascii: "}") ? " (expected ',' or '}')" : " (expected ',' or ']')")
        }
        position += 1
        return false
    }

    func truncated() -> JSONParseError {
        JSONParseError(offset: input.count, reason: JSONParseError.truncatedReason)
    }

    /// An error for the byte at `position`: its character, or "invalid UTF-8" if it starts none.
    func unexpectedCharacter(context: String) -> JSONParseError {
        let byte = input[position]
        let shown: String
        if byte < 0x80 {
            shown =
                byte >= 0x20 && byte < 0x7F
                ? "'\(Character(Unicode.Scalar(byte)))'" : "U+\(JSONParseError.hex4(UInt32(byte)))"
        } else {
            do throws(JSONParseError) {
                let length = try utf8SequenceLength(at: position)
                let text = String(
                    decoding: UnsafeBufferPointer(rebasing: input[position..<position + length]), as: UTF8.self)
                shown = "'\(text)' (U+\(JSONParseError.hex4(text.unicodeScalars.first!.value)))"
            } catch {
                return error
            }
        }
        return JSONParseError(offset: position, reason: "unexpected character \(shown)\(context)")
    }
}

/// An object being parsed: its members so far, the key waiting for its value, and a key index once large.
private struct ObjectBuilder {
    var members: [JSONObject.Element] = []
    var pendingKey = ""
    var index: [UTF8ByteKey: Int]?

    /// Records `key` as waiting for its value; false if the object already has it.
    mutating func insertKey(_ key: String) -> Bool {
        if index != nil {
            guard index!.updateValue(members.count, forKey: UTF8ByteKey(key)) == nil else { return false }
        } else {
            for member in members where member.key.utf8.elementsEqual(key.utf8) { return false }
            if members.count == JSONObject.indexThreshold {
                var built = [UTF8ByteKey: Int](minimumCapacity: members.count * 2)
                for (i, member) in members.enumerated() { built[UTF8ByteKey(member.key)] = i }
                built[UTF8ByteKey(key)] = members.count
                index = built
            }
        }
        pendingKey = key
        return true
    }

    mutating func add(_ value: JSONValue) {
        members.append((key: pendingKey, value: value))
    }

    func finish() -> JSONObject {
        JSONObject(uncheckedMembers: members, index: index)
    }
}
