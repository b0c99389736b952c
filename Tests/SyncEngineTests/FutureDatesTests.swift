import SnapshotFormat
@testable import SyncEngine
import Testing

@Suite("versions dated in this device's future")
struct FutureDatesTests {
    @Test("the warnings name the first 5 devices one by one and sum up the others in one line, however many there are")
    func warningsBounded() throws {
        let now = Timestamp(milliseconds: 1_800_000_000_000)
        var dates = FutureDates(now: now, margin: 60_000)
        // Versions by 1,000 devices, a day ahead; and one within the margin, which is not ahead
        for n in 0..<1_000 {
            for copy in 0..<2 {
                dates.add(
                    ReadOnly.Version(
                        id: RecordID(String(format: "00000000-0000-4000-8000-%012d", n * 2 + copy))!, type: "Note",
                        lastModified: Timestamp(milliseconds: now.milliseconds + 86_400_000 + Int64(n)),
                        modifiedBy: DeviceID(String(format: "device-%04d", n))!))
            }
        }
        dates.add(
            ReadOnly.Version(
                id: RecordID("00000000-0000-4000-8000-999999999999")!, type: "Note",
                lastModified: Timestamp(milliseconds: now.milliseconds + 1_000), modifiedBy: DeviceID("close")!))
        let warnings = dates.warnings()
        #expect(warnings.count == FutureDates.devicesNamed + 1)
        #expect(warnings[0].hasPrefix("2 version(s) by device-0000 are dated in this device's future"))
        #expect(warnings[4].hasPrefix("2 version(s) by device-0004 "))
        #expect(
            warnings[5].hasPrefix(
                "1990 version(s) by 995 other device(s) are dated in this device's future too, up to \(Timestamp(milliseconds: now.milliseconds + 86_400_000 + 999).written)"
            ), "\(warnings[5])")
        // A few devices: each named
        var few = FutureDates(now: now, margin: 60_000)
        few.add(
            ReadOnly.Version(
                id: RecordID("00000000-0000-4000-8000-000000000001")!, type: "Note",
                lastModified: Timestamp(milliseconds: now.milliseconds + 86_400_000), modifiedBy: DeviceID("phone")!))
        #expect(few.warnings().count == 1 && few.warnings()[0].hasPrefix("1 version(s) by phone "))
    }
}
