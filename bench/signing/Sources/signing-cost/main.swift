// Signs and verifies buffers of 1, 16 and 64 MB as SyncDevice.signAndEnd and DeviceKey.verifies
// do (Ed25519 over every byte of the file), and prints the median time of each and its cost per
// MB. The engine signs each file it publishes once and, with trust active, verifies each file it
// reads once; docs/performance.md compares this with the cold merge's own time.
import Crypto
import Foundation

func milliseconds(_ work: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    work()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

let key = Curve25519.Signing.PrivateKey()
var generator = SystemRandomNumberGenerator()
print("size_mb sign_ms verify_ms sign_ms_per_mb verify_ms_per_mb")
for megabytes in [1, 16, 64] {
    // Text-like bytes; Ed25519's cost does not depend on them, only on their count.
    let bytes = (0..<(megabytes << 20)).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) }
    var signature = Data()
    var signing: [Double] = []
    var verifying: [Double] = []
    for _ in 0..<7 {
        signing.append(milliseconds { signature = try! key.signature(for: bytes) })
        var valid = false
        verifying.append(milliseconds { valid = key.publicKey.isValidSignature(signature, for: bytes) })
        precondition(valid, "the signature must verify")
    }
    let (sign, verify) = (median(signing), median(verifying))
    print(megabytes, String(format: "%.2f %.2f %.3f %.3f", sign, verify, sign / Double(megabytes), verify / Double(megabytes)))
}
