import Foundation
@testable import SyncEngine
import TestSupport
import Testing

/// A file's bytes read in several pieces at once are the bytes read in one, whether the file is
/// the size its status said, or grew or shrank since (the size expected is then wrong).
@Suite("reading a file in pieces")
struct ReadAllTests {
    @Test("pieces give the file's bytes, expected size right, too small (grew) or too large (shrank)")
    func piecesGiveTheFile() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let size = 3 * (1 << 20) + 12_345
        // No two pieces alike (a byte pattern that would repeat at a piece's length could hide a
        // piece read at the wrong offset).
        let content = (0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let path = sandbox.sharedPath("big.json")
        try Data(content).write(to: URL(fileURLWithPath: path))
        for pieces in [1, 2, 3, 7] {
            for expected in [size, size - 2 * (1 << 20), 2 * (1 << 20) + 5, size + (1 << 20), 3 * size, 0] {
                let descriptor = try SystemCalls.openForReadingNoFollow(path)
                defer { SystemCalls.close(descriptor) }
                let bytes = try SystemCalls.readAll(descriptor, expectedSize: expected, path: path, pieces: pieces)
                // Compared first: an expectation over two 3 MB arrays would print them both.
                let same = bytes == content
                #expect(same, "\(pieces) pieces, \(expected) bytes expected: \(bytes.count) read")
            }
        }
    }

    @Test("a file that grew past the maximum while it was read is read no further than one byte past it, in one piece or several")
    func grewPastMaximum() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let content = (0..<(3 * (1 << 20))).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let path = sandbox.sharedPath("growing.json")
        try Data(content).write(to: URL(fileURLWithPath: path))
        for pieces in [1, 2] {
            for (expected, maximum) in [(1 << 20, (1 << 20) + 100), (1 << 20, 2 * (1 << 20)), (10, 10), (0, 4096)] {
                let descriptor = try SystemCalls.openForReadingNoFollow(path)
                defer { SystemCalls.close(descriptor) }
                let bytes = try SystemCalls.readAll(
                    descriptor, expectedSize: expected, path: path, pieces: pieces, maximum: maximum)
                #expect(bytes.count == maximum + 1, "\(pieces) pieces, \(expected) expected, maximum \(maximum)")
                #expect(bytes.elementsEqual(content.prefix(bytes.count)))
            }
        }
    }
}
