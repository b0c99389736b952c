import Foundation
import SnapshotFormat
import Testing
import TestSupport

/// ``RecordID``'s parsing (eight digits at a time) against Foundation's UUID and a plain reading.
@Suite("record ids")
struct RecordIDTests {
    @Test("every UUID text, in either case, reads as Foundation reads it and writes back in upper case")
    func validIDs() {
        var random = SplitMix64(seed: 41)
        for _ in 0..<5000 {
            let uuid = UUID()
            var text = uuid.uuidString
            if Bool.random(using: &random) { text = text.lowercased() }
            if Bool.random(using: &random) {
                text = String(text.map { Bool.random(using: &random) ? Character($0.lowercased()) : $0 })
            }
            let id = RecordID(text)
            #expect(id?.rawValue == uuid.uuidString, "\(text)")
        }
        #expect(RecordID("00000000-0000-0000-0000-000000000000")?.rawValue == "00000000-0000-0000-0000-000000000000")
        #expect(RecordID("FFFFFFFF-ffff-FFFF-ffff-FFFFFFFFFFFF")?.rawValue == "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")
    }

    @Test("any character that is not a hexadecimal digit (or a dash out of place) is refused, at every position")
    func invalidIDs() {
        let valid = Array("3F2504E0-4F89-41D3-9A0C-0305E82C3301".utf8)
        // Neighbours of the digit and letter ranges, the other case's neighbours, and bytes beyond ASCII.
        let wrong: [UInt8] = [0x2F, 0x3A, 0x40, 0x47, 0x60, 0x67, 0x20, 0x00, 0x7F, 0x80, 0xB0, 0xC6, 0xE6, 0xFF, 0x2D, 0x30]
        for position in valid.indices {
            for byte in wrong where byte != valid[position] {
                var bytes = valid
                bytes[position] = byte
                let isDash = [8, 13, 18, 23].contains(position)
                let expected = isDash ? false : (byte >= 0x30 && byte <= 0x39)
                let parsed = bytes.withUnsafeBufferPointer { RecordID(utf8: $0) }
                #expect((parsed != nil) == expected, "byte \(byte) at \(position)")
            }
        }
        #expect(RecordID("3F2504E0-4F89-41D3-9A0C-0305E82C330") == nil)
        #expect(RecordID("3F2504E0-4F89-41D3-9A0C-0305E82C33011") == nil)
        #expect(RecordID("3F2504E04F89-41D3-9A0C-0305E82C33011") == nil)
    }

    @Test("ids order as their values, as the digits read")
    func order() {
        #expect(RecordID("00000000-0000-0000-0000-000000000001")! < RecordID("00000000-0000-0000-0000-000000000010")!)
        #expect(RecordID("0FFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")! < RecordID("10000000-0000-0000-0000-000000000000")!)
        #expect(RecordID("00000000-0000-0001-0000-000000000000")! > RecordID("00000000-0000-0000-FFFF-FFFFFFFFFFFF")!)
    }
}
