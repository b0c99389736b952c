import Foundation
@testable import SnapshotFormat
import Testing
import TestSupport

/// ``SnapshotReader/index(windowSize:largestPiece:read:observing:)``, which reads a file through a
/// small window, against ``SnapshotReader/split(_:)`` on the whole file: the same top level and
/// elements whenever every element is an object with an id, nil otherwise.
@Suite("indexing a file through a window")
struct SnapshotIndexTests {
    static let windows = [16, 23, 61, 256, 4096]

    @Test("every vector input file: the split's elements and ids, or declined", arguments: windows)
    func vectorFiles(window: Int) throws {
        var files = 0
        var indexed = 0
        for (_, bytes) in Vectors.inputFiles() {
            if expectIndexAgrees(bytes, window: window) { indexed += 1 }
            files += 1
        }
        #expect(files > 20)
        #expect(indexed > 10)
    }

    @Test("generated files, sorted or not, with odd spacing and records of every kind", arguments: windows)
    func generatedFiles(window: Int) throws {
        var random = SplitMix64(seed: 29)
        var indexed = 0
        for round in 0..<300 {
            var ids = (0..<Int.random(in: 0...12, using: &random)).map { _ in RecordID.random(using: &random) }
            if round % 4 != 0 { ids.sort() }
            if round % 9 == 0, let first = ids.first { ids.append(first) }
            var records = ids.map { id in
                #"{"fields":{"name":"Bananas 🍌","n":[1,{"a":"\"}"}]},"id":"\#(id)","lastModified":"2026-11-22T10:00:00.000Z","modifiedBy":"laptop","type":"Item","vector":{"laptop":1}}"#
            }
            if round % 7 == 0 { records.append(RandomRecord.text(using: &random)) }
            var text = #"{"format":1,"device":"laptop","generation":3,"records":[\#(records.joined(separator: ","))]}"#
            switch round % 5 {
            case 0: text = text.replacingOccurrences(of: ",", with: " ,\n ")
            case 1: text = #"{"records":[\#(records.joined(separator: ",\n"))],"device":"laptop","generation":3,"format":1}"# + "\n"
            case 2: text = "\u{FEFF} " + text + " \n\t"
            case 3 where !records.isEmpty: text.removeLast(Int.random(in: 1...3, using: &random))
            default: break
            }
            if expectIndexAgrees(Array(text.utf8), window: window) { indexed += 1 }
        }
        #expect(indexed > 100)
    }

    @Test("an element larger than the window grows it; one larger than the largest piece is declined")
    func largeElements() {
        let id = RecordID.random()
        let big = String(repeating: "x", count: 5000)
        let bytes = Array(
            #"{"format":1,"device":"laptop","generation":3,"records":[{"fields":{"t":"\#(big)"},"id":"\#(id)"}]}"#.utf8)
        #expect(index(bytes, window: 64, largest: 16384)?.ids == [id])
        #expect(index(bytes, window: 64, largest: 4096) == nil)
    }

    @Test("a read error declines the file")
    func readError() {
        let bytes = Array(#"{"format":1,"device":"laptop","generation":3,"records":[]}"#.utf8)
        #expect(index(bytes, window: 16, largest: 64) != nil)
        let failing = SnapshotReader.index(windowSize: 16, largestPiece: 64) { buffer, offset in
            offset >= 16 ? nil : copy(bytes, into: buffer, at: offset)
        }
        #expect(failing == nil)
    }

    @Test("an element's id is its record's, for every element that reads cleanly")
    func idsMatchReadings() {
        var random = SplitMix64(seed: 31)
        var compared = 0
        for _ in 0..<800 {
            let bytes = Array(RandomRecord.text(using: &random).utf8)
            let reading = bytes.withUnsafeBufferPointer { SnapshotReader.readElement(of: $0, at: 0) }
            let id = bytes.withUnsafeBufferPointer { SnapshotReader.recordID(ofElement: $0) }
            guard reading.isClean, let version = reading.versions.first else { continue }
            #expect(id == version.id, "\(String(decoding: bytes, as: UTF8.self))")
            compared += 1
        }
        #expect(compared > 50)
    }

    /// Checks the index against the split; true when the file was indexed.
    private func expectIndexAgrees(_ bytes: [UInt8], window: Int) -> Bool {
        var observed: [(Int, [UInt8])] = []
        let indexed = SnapshotReader.index(
            windowSize: window, largestPiece: 1 << 20, read: { copy(bytes, into: $0, at: $1) },
            observing: { observed.append(($0, Array($1))) })
        guard let split = SnapshotReader.split(bytes) else {
            #expect(indexed == nil, "\(String(decoding: bytes, as: UTF8.self))")
            return false
        }
        let ids = bytes.withUnsafeBufferPointer { input in
            split.elements.map { SnapshotReader.recordID(ofElement: UnsafeBufferPointer(rebasing: input[$0])) }
        }
        guard !ids.contains(nil) else {
            #expect(indexed == nil, "\(String(decoding: bytes, as: UTF8.self))")
            return false
        }
        #expect(indexed?.split.elements == split.elements, "\(String(decoding: bytes, as: UTF8.self))")
        #expect(indexed?.split.top == split.top)
        #expect(indexed?.ids == ids.map { $0! })
        #expect(indexed?.isSorted == zip(ids, ids.dropFirst()).allSatisfy { $0! < $1! })
        #expect(observed.map(\.0) == Array(split.elements.indices))
        #expect(observed.map(\.1) == split.elements.map { Array(bytes[$0]) })
        return indexed != nil
    }

    private func index(_ bytes: [UInt8], window: Int, largest: Int) -> SnapshotIndex? {
        SnapshotReader.index(windowSize: window, largestPiece: largest) { buffer, offset in
            copy(bytes, into: buffer, at: offset)
        }
    }
}

/// Reads `bytes` from `offset` into `buffer`, a few at a time (as a short read would).
private func copy(_ bytes: [UInt8], into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
    let count = min(buffer.count, bytes.count - offset, 37)
    guard count > 0 else { return 0 }
    bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
    return count
}

extension SnapshotIndex: Equatable {
    public static func == (lhs: SnapshotIndex, rhs: SnapshotIndex) -> Bool {
        lhs.ids == rhs.ids && lhs.isSorted == rhs.isSorted && lhs.split.elements == rhs.split.elements
            && lhs.split.top == rhs.split.top
    }
}
