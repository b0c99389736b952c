// Fuzz target `json`: the strict I-JSON parser and the RFC 8785 serializers.
//
// For any input: the tree parser and the tree-less interchange writer accept the same documents
// and, when they accept, write the same bytes. For an accepted document: its canonical bytes
// parse again (as canonical text: RFC 8785 writes 1e20 as an integer beyond 2^53) to an equal
// value with the same canonical bytes; its interchange bytes parse again strictly to the same
// value, and are a fixed point of the interchange writer.

@_cdecl("SnapshotFormatFuzz_json")
func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    JSONFuzzTarget.check(fuzzBytes(data, size))
    return 0
}

enum JSONFuzzTarget {
    static func check(_ input: [UInt8]) {
        let tree = Result { () throws(JSONParseError) in try StrictJSON.parse(input) }
        let direct = Result { () throws(JSONParseError) in try StrictJSON.interchangeBytes(of: input) }
        let value: JSONValue
        switch (tree, direct) {
        case (.failure, .failure):
            return
        case (.success(let parsed), .success(let written)):
            fuzzCheck(
                parsed.interchangeBytes == written,
                "the interchange writer and the tree disagree on \(fuzzShown(input)): \(fuzzShown(written)) vs \(fuzzShown(parsed.interchangeBytes))"
            )
            value = parsed
        case (.success, .failure(let error)):
            fatalError("the tree parser accepts \(fuzzShown(input)) but the interchange writer refuses it: \(error)")
        case (.failure(let error), .success):
            fatalError("the interchange writer accepts \(fuzzShown(input)) but the tree parser refuses it: \(error)")
        }
        checkCanonical(value, input: input)
        checkInterchange(value, input: input)
    }

    /// Canonical bytes → parse (as this code's own canonical text) → the same value and bytes.
    private static func checkCanonical(_ value: JSONValue, input: [UInt8]) {
        let canonical = value.canonicalBytes
        let text = String(decoding: canonical, as: UTF8.self)
        fuzzCheck(Array(text.utf8) == canonical, "canonical bytes of \(fuzzShown(input)) are not UTF-8")
        let again: JSONValue
        do {
            again = try StrictJSON.parseCanonical(text)
        } catch {
            fatalError("canonical bytes \(fuzzShown(canonical)) of \(fuzzShown(input)) do not parse: \(error)")
        }
        fuzzCheck(again == value, "canonical bytes \(fuzzShown(canonical)) read back as another value")
        fuzzCheck(again.hashValue == value.hashValue, "equal values hash differently: \(fuzzShown(canonical))")
        fuzzCheck(
            again.canonicalBytes == canonical,
            "canonical bytes are not a fixed point: \(fuzzShown(canonical)) then \(fuzzShown(again.canonicalBytes))")
    }

    /// Interchange bytes → strict parse → the same value; the interchange writer leaves them as they are.
    private static func checkInterchange(_ value: JSONValue, input: [UInt8]) {
        let interchange = value.interchangeBytes
        let again: JSONValue
        do {
            again = try StrictJSON.parse(interchange)
        } catch {
            fatalError("interchange bytes \(fuzzShown(interchange)) of \(fuzzShown(input)) are refused: \(error)")
        }
        fuzzCheck(again == value, "interchange bytes \(fuzzShown(interchange)) read back as another value")
        fuzzCheck(
            again.canonicalBytes == value.canonicalBytes,
            "interchange bytes \(fuzzShown(interchange)) read back with other canonical bytes")
        let rewritten = try? StrictJSON.interchangeBytes(of: interchange)
        fuzzCheck(
            rewritten == interchange,
            "interchange bytes are not a fixed point: \(fuzzShown(interchange)) then \(fuzzShown(rewritten ?? []))")
    }
}
