import Glibc

/// The elements of a big file's `records` found by two readers at once, each in one half.
///
/// Finding where each element ends is a walk through the bytes that cannot start in the middle:
/// a reader there does not know whether it is inside a string. So the second reader guesses: it
/// starts at what looks like an element's start past the middle (the separator the first two
/// elements have, then `{`), and the first reader, walking from the start, checks the guess: if
/// an element starts exactly there, the guess was a true element start and the second reader's
/// elements are the ones a single reader would have found; if not, the first reader goes on to
/// the end alone, as a single reader would have. Either way the result is a single reader's.
///
/// Why: a first merge of three 40 MB files on two cores found the elements of the third file
/// alone while the other core waited (docs/performance.md).
public struct RecordsHalves: Sendable {
    /// Where the `records` array opens (its `[`).
    public let arrayOpen: Int
    /// Where the second reader starts: a guess at an element's start past the middle.
    public let cut: Int

    /// Where `bytes` may be cut, or nil when the file is small or its `records` array is not found
    /// by the quick look this takes (the file is then split by one reader, as any other).
    ///
    /// - Parameter minimumBytes: files smaller than this are not cut.
    public static func find(in bytes: UnsafeBufferPointer<UInt8>, minimumBytes: Int = 8 << 20) -> RecordsHalves? {
        guard bytes.count >= minimumBytes, let arrayOpen = recordsArrayOpen(bytes) else { return nil }
        var parser = StrictJSONParser(bytes)
        parser.position = arrayOpen + 1
        parser.skipWhitespace()
        let first = parser.position
        guard first < bytes.count, bytes[first] == UInt8(ascii: "{"), let firstEnd = parser.endOfElement() else {
            return nil
        }
        parser.position = firstEnd
        parser.skipWhitespace()
        guard parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: ",") else { return nil }
        parser.position += 1
        parser.skipWhitespace()
        let second = parser.position
        guard second < bytes.count, bytes[second] == UInt8(ascii: "{") else { return nil }
        // The separator and the opening of the second element up to its first key's end (`,{"id"`,
        // `,\n    {\n      "type"`): most writers start every record with the same key.
        var keyEnd = second + 1
        while keyEnd < bytes.count, keyEnd - second < 64, bytes[keyEnd] != UInt8(ascii: ":") { keyEnd += 1 }
        let middle = arrayOpen + (bytes.count - arrayOpen) / 2
        let candidates = [firstEnd..<keyEnd, firstEnd..<(second + 1)]
        // Looked for in the 4 MiB past the middle only: a pattern that does not recur (a first key
        // no other record starts with) must not cost a search through half the file.
        let window = middle..<min(bytes.count, middle + (4 << 20))
        for pattern in candidates where keyEnd < bytes.count {
            if let found = search(bytes, for: pattern, in: window) {
                return RecordsHalves(arrayOpen: arrayOpen, cut: found + (second - firstEnd))
            }
        }
        return nil
    }

    /// The first half's elements: from the array's start until an element starts at ``cut``
    /// (`reachedCut`), or to the array's end when none does (the whole array, as one reader finds it).
    public func firstHalf(of bytes: UnsafeBufferPointer<UInt8>) -> ElementsFound? {
        var parser = StrictJSONParser(bytes)
        parser.position = arrayOpen + 1
        parser.skipWhitespace()
        if parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: "]") {
            return ElementsFound(elements: [], ids: [], arrayEnd: parser.position + 1, reachedCut: false)
        }
        return Self.elements(&parser, in: bytes, stoppingAt: cut)
    }

    /// The second half's elements, from ``cut`` to the array's end, as if an element started there.
    public func secondHalf(of bytes: UnsafeBufferPointer<UInt8>) -> ElementsFound? {
        var parser = StrictJSONParser(bytes)
        parser.position = cut
        return Self.elements(&parser, in: bytes, stoppingAt: nil)
    }

    /// The whole array's elements from the two halves' (nil when neither gives them).
    public func joined(_ first: ElementsFound?, _ second: ElementsFound?) -> ElementsFound? {
        guard let first else { return nil }
        guard first.reachedCut else { return first }
        guard let second, !second.reachedCut else { return nil }
        return ElementsFound(
            elements: first.elements + second.elements, ids: first.ids + second.ids, arrayEnd: second.arrayEnd,
            reachedCut: false)
    }

    /// What a reader of one half found.
    public struct ElementsFound: Sendable {
        public var elements: [Range<Int>]
        public var ids: [RecordID?]
        /// Just past the array's `]` (meaningless when `reachedCut`).
        public var arrayEnd: Int
        /// Whether the reader stopped at the cut, an element starting exactly there.
        public var reachedCut: Bool
    }

    /// Elements from `parser.position` (an element's start) to the array's end, or to `stop`.
    private static func elements(
        _ parser: inout StrictJSONParser, in bytes: UnsafeBufferPointer<UInt8>, stoppingAt stop: Int?
    ) -> ElementsFound? {
        var elements: [Range<Int>] = []
        var ids: [RecordID?] = []
        while true {
            parser.skipWhitespace()
            let start = parser.position
            if start == stop { return ElementsFound(elements: elements, ids: ids, arrayEnd: 0, reachedCut: true) }
            guard start < bytes.count, let (end, id) = parser.endOfRecord(), end > start else { return nil }
            elements.append(start..<end)
            ids.append(id)
            parser.position = end
            guard let more = try? parser.continues(closedBy: UInt8(ascii: "]")) else { return nil }
            if !more { return ElementsFound(elements: elements, ids: ids, arrayEnd: parser.position, reachedCut: false) }
        }
    }

    /// Where the top-level `records` array opens, found by structure alone; nil when the top level
    /// is not an object or `records` is not a key written without escapes.
    private static func recordsArrayOpen(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var parser = StrictJSONParser(bytes)
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { parser.position = 3 }
        parser.skipWhitespace()
        guard parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: "{") else { return nil }
        parser.position += 1
        while true {
            parser.skipWhitespace()
            let keyStart = parser.position
            guard keyStart < bytes.count, bytes[keyStart] == UInt8(ascii: "\""), let keyEnd = parser.endOfElement()
            else { return nil }
            let isRecords = UnsafeBufferPointer(rebasing: bytes[keyStart..<keyEnd]).elementsEqual("\"records\"".utf8)
            parser.position = keyEnd
            parser.skipWhitespace()
            guard parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: ":") else { return nil }
            parser.position += 1
            parser.skipWhitespace()
            if isRecords {
                return parser.position < bytes.count && bytes[parser.position] == UInt8(ascii: "[") ? parser.position : nil
            }
            guard let valueEnd = parser.endOfElement() else { return nil }
            parser.position = valueEnd
            parser.skipWhitespace()
            guard parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: ",") else { return nil }
            parser.position += 1
        }
    }

    /// The first position in `window` where the bytes of `pattern` (a range of `bytes`) start.
    private static func search(_ bytes: UnsafeBufferPointer<UInt8>, for pattern: Range<Int>, in window: Range<Int>) -> Int? {
        guard let base = bytes.baseAddress, !pattern.isEmpty else { return nil }
        let first = Int32(bytes[pattern.lowerBound])
        let last = min(window.upperBound, bytes.count - pattern.count + 1)  // past the last start
        var at = window.lowerBound
        while at < last {
            guard let hit = memchr(base + at, first, last - at) else { return nil }
            at = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if memcmp(base + at, base + pattern.lowerBound, pattern.count) == 0 { return at }
            at += 1
        }
        return nil
    }
}
