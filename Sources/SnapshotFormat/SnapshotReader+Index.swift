/// A snapshot file's top level, and the place and id of each element of its `records`, found by
/// reading the file through a window: what a first merge of very large files needs to merge them
/// by id, reading each record only when its turn comes, without ever holding a whole file.
///
/// Only for files whose records are each an object with a plain `"id"` string:
/// ``SnapshotReader/index(windowSize:largestPiece:read:observing:)`` declines every other file,
/// which is then read the usual way.
public struct SnapshotIndex: Sendable {
    /// The top level, and each element's byte range in the file.
    public let split: SplitSnapshot
    /// Each element's record id, in the elements' order.
    public let ids: [RecordID]
    /// Whether the ids are in strictly increasing order (as ``SnapshotWriter`` writes them).
    public let isSorted: Bool
}

extension SnapshotReader {
    /// Finds the top level and the elements of `records` of the file that `read` reads, a window
    /// at a time, with each element's id.
    ///
    /// Nil when the file is not of that shape, not valid JSON at the top level, or `read` fails:
    /// the caller then reads the file as usual, which gives every message. Like ``split(_:)``,
    /// this validates only the top level; each element is validated when it is read.
    ///
    /// - Parameters:
    ///   - windowSize: bytes read at a time; the window grows (up to `largestPiece`) for a piece
    ///     of the top level or an element that does not fit.
    ///   - read: reads bytes at a file offset into a buffer; returns how many (0 at the end of
    ///     the file), or nil on an error.
    ///   - observing: called with each element's index and bytes, once, in order.
    public static func index(
        windowSize: Int = 4 << 20, largestPiece: Int = 64 << 20,
        read: (UnsafeMutableRawBufferPointer, Int) -> Int?,
        observing: (Int, UnsafeBufferPointer<UInt8>) -> Void = { _, _ in }
    ) -> SnapshotIndex? {
        withoutActuallyEscaping(read) { read in
            var window = FileWindow(size: max(16, windowSize), largest: max(windowSize, largestPiece), read: read)
            defer { window.deallocate() }
            return index(&window, observing: observing)
        }
    }

    private static func index(_ window: inout FileWindow, observing: (Int, UnsafeBufferPointer<UInt8>) -> Void)
        -> SnapshotIndex?
    {
        let quote = UInt8(ascii: "\"")
        // The opening brace, after a byte order mark and whitespace.
        guard
            var offset = window.step(at: 0, { parser throws(JSONParseError) -> Bool in
                let input = parser.input
                if input.count >= 3, input[0] == 0xEF, input[1] == 0xBB, input[2] == 0xBF { parser.position = 3 }
                parser.skipWhitespace()
                guard parser.position < input.count, input[parser.position] == UInt8(ascii: "{") else { return false }
                parser.position += 1
                parser.skipWhitespace()
                return parser.position < input.count && input[parser.position] != UInt8(ascii: "}")
            }).flatMap({ $0.value ? $0.end : nil })
        else { return nil }
        var top = JSONObject()
        var elements: [Range<Int>]?
        var ids: [RecordID] = []
        var isSorted = true
        while true {
            guard
                let (key, afterKey) = window.step(at: offset, { parser throws(JSONParseError) -> String? in
                    parser.skipWhitespace()
                    guard parser.position < parser.input.count, parser.input[parser.position] == quote else { return nil }
                    let key = try parser.parseString(isKey: true)
                    parser.skipWhitespace()
                    guard parser.position < parser.input.count, parser.input[parser.position] == UInt8(ascii: ":")
                    else { return nil }
                    parser.position += 1
                    parser.skipWhitespace()
                    return key
                }), let key
            else { return nil }
            offset = afterKey
            if key.utf8.elementsEqual("records".utf8) {
                guard elements == nil,
                    let end = indexRecords(&window, at: offset, into: &elements, ids: &ids, isSorted: &isSorted, observing: observing)
                else {
                    return nil
                }
                offset = end
            } else {
                guard top[key] == nil,
                    let (value, end) = window.step(at: offset, { parser throws(JSONParseError) in
                        parser.baseDepth = 1
                        return try parser.parseValue()
                    })
                else { return nil }
                top[key] = value
                offset = end
            }
            guard
                let (more, end) = window.step(at: offset, { parser throws(JSONParseError) in
                    try parser.continues(closedBy: UInt8(ascii: "}"))
                })
            else { return nil }
            offset = end
            if !more { break }
        }
        // Nothing but whitespace may follow (the step succeeds at the window's end only at the file's).
        guard
            let (rest, _) = window.step(at: offset, { parser throws(JSONParseError) -> Bool in
                parser.skipWhitespace()
                return parser.position == parser.input.count
            }), rest
        else { return nil }
        guard let elements else { return nil }
        return SnapshotIndex(split: SplitSnapshot(top: top, trailingSignature: nil, elements: elements), ids: ids, isSorted: isSorted)
    }

    /// Finds the elements of the `records` array whose `[` is at `offset`, with their ids; returns
    /// the offset after its `]`, or nil when the array is not a list of objects with ids.
    private static func indexRecords(
        _ window: inout FileWindow, at start: Int, into found: inout [Range<Int>]?, ids: inout [RecordID],
        isSorted: inout Bool, observing: (Int, UnsafeBufferPointer<UInt8>) -> Void
    ) -> Int? {
        var elements: [Range<Int>] = []
        guard
            let (isEmpty, first) = window.step(at: start, { parser throws(JSONParseError) -> Bool? in
                guard parser.position < parser.input.count, parser.input[parser.position] == UInt8(ascii: "[") else {
                    return nil
                }
                parser.position += 1
                parser.skipWhitespace()
                guard parser.position < parser.input.count else { throw parser.truncated() }
                if parser.input[parser.position] == UInt8(ascii: "]") {
                    parser.position += 1
                    return true
                }
                return false
            }), let isEmpty
        else { return nil }
        var offset = first
        if !isEmpty {
            while true {
                // One element: where it is, its id, and whether another follows.
                guard
                    let (element, end) = window.step(at: offset, { parser throws(JSONParseError) -> (Range<Int>, RecordID, Bool)? in
                        parser.skipWhitespace()
                        let elementStart = parser.position
                        guard let elementEnd = parser.endOfElement(), elementEnd > elementStart else {
                            throw parser.truncated()
                        }
                        let id = recordID(
                            ofElement: UnsafeBufferPointer(rebasing: parser.input[elementStart..<elementEnd]))
                        parser.position = elementEnd
                        let more = try parser.continues(closedBy: UInt8(ascii: "]"))
                        return id.map { (elementStart..<elementEnd, $0, more) }
                    }), let (relative, id, more) = element
                else { return nil }
                // The step's ranges are in the window it succeeded in, which still holds the element.
                let shift = window.start
                observing(ids.count, window.bytes(relative))
                if let last = ids.last, !(last < id) { isSorted = false }
                ids.append(id)
                elements.append((relative.lowerBound + shift)..<(relative.upperBound + shift))
                offset = end
                if !more { break }
            }
        }
        found = elements
        return offset
    }

    /// The id of an element of `records`: the value of its `"id"` member when the element is an
    /// object and that value a string without escapes holding a UUID; nil otherwise.
    static func recordID(ofElement bytes: UnsafeBufferPointer<UInt8>) -> RecordID? {
        guard bytes.first == UInt8(ascii: "{") else { return nil }
        var parser = StrictJSONParser(bytes)
        parser.position = 1
        do throws(JSONParseError) {
            parser.skipWhitespace()
            guard parser.position < bytes.count, bytes[parser.position] != UInt8(ascii: "}") else { return nil }
            while true {
                parser.skipWhitespace()
                guard parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: "\"") else { return nil }
                let key = try parser.parseString(isKey: true)
                parser.skipWhitespace()
                guard parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: ":") else { return nil }
                parser.position += 1
                parser.skipWhitespace()
                if key == "id" {
                    guard parser.position < bytes.count, bytes[parser.position] == UInt8(ascii: "\"") else { return nil }
                    let textStart = parser.position + 1
                    var at = textStart
                    while at < bytes.count, bytes[at] != UInt8(ascii: "\""), bytes[at] != UInt8(ascii: "\\") { at += 1 }
                    guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { return nil }
                    return RecordID(utf8: UnsafeBufferPointer(rebasing: bytes[textStart..<at]))
                }
                guard let end = parser.endOfElement(), end > parser.position else { return nil }
                parser.position = end
                guard try parser.continues(closedBy: UInt8(ascii: "}")) else { return nil }
            }
        } catch {
            return nil
        }
    }
}

/// A window onto a file being read in order: the bytes from ``start`` on, as many as fit.
///
/// Written by hand: the splitter must resume a piece (a top-level member, an element) that the
/// window's end cuts, which no JSON library here does over a file it does not hold whole.
private struct FileWindow {
    private var buffer: UnsafeMutableRawBufferPointer
    private let largest: Int
    private let read: (UnsafeMutableRawBufferPointer, Int) -> Int?
    /// The file offset of the window's first byte.
    private(set) var start = 0
    /// How many bytes the window holds.
    private var count = 0
    /// Whether the window reaches the end of the file.
    private var atEnd = false

    init(size: Int, largest: Int, read: @escaping (UnsafeMutableRawBufferPointer, Int) -> Int?) {
        buffer = .allocate(byteCount: size, alignment: 16)
        self.largest = largest
        self.read = read
    }

    mutating func deallocate() { buffer.deallocate() }

    /// Bytes of the window, by their offsets in it.
    func bytes(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        precondition(range.upperBound <= count, "bytes within the window")
        return UnsafeBufferPointer(start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + range.lowerBound, count: range.count)
    }

    /// Runs `body` with a parser at file offset `offset`, and returns its value and the file
    /// offset it stopped at. A piece the window's end cuts (the parser reaches the end, by an
    /// error or not, before the end of the file) is parsed again over a window moved to start at
    /// `offset`, and grown while the piece fills it. Nil when the piece is not valid even with
    /// the whole rest of the file, when it is larger than the largest window, or on a read error.
    mutating func step<Value>(at offset: Int, _ body: (inout StrictJSONParser) throws(JSONParseError) -> Value)
        -> (value: Value, end: Int)?
    {
        guard offset >= start else { return nil }
        while true {
            if offset <= start + count {
                let outcome: (Value, Int)? = withExtendedLifetime(buffer) {
                    let bytes = UnsafeBufferPointer(start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)
                    var parser = StrictJSONParser(bytes)
                    parser.position = offset - start
                    do throws(JSONParseError) {
                        let value = try body(&parser)
                        // Reaching the window's end may mean the piece goes on past it.
                        return parser.position < count || atEnd ? (value, start + parser.position) : nil
                    } catch {
                        return nil
                    }
                }
                if let outcome { return outcome }
                if atEnd { return nil }
            }
            guard refill(from: offset) else { return nil }
        }
    }

    /// Moves the window to start at `offset` and fills it, growing it when it already started
    /// there and was full. False when it cannot grow further or a read fails.
    private mutating func refill(from offset: Int) -> Bool {
        if offset > start {
            let kept = max(0, start + count - offset)
            if kept > 0 { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + (offset - start), byteCount: kept) }
            start = offset
            count = kept
        } else if count == buffer.count {
            guard buffer.count < largest else { return false }
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: min(largest, buffer.count * 2), alignment: 16)
            grown.baseAddress!.copyMemory(from: buffer.baseAddress!, byteCount: count)
            buffer.deallocate()
            buffer = grown
        }
        while count < buffer.count, !atEnd {
            guard let got = read(UnsafeMutableRawBufferPointer(rebasing: buffer[count...]), start + count) else {
                return false
            }
            if got == 0 { atEnd = true }
            count += got
        }
        return true
    }
}
