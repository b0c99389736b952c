/// A small deterministic generator (SplitMix64), so a randomized test that fails reproduces from
/// its seed.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64

    /// A generator whose state starts at `seed`.
    public init(seed: UInt64) { state = seed }

    /// A generator seeded from a property test's input (`seed` shifted once, as the merge's
    /// property tests have always seeded it, so their reported seeds still reproduce).
    public init(propertySeed seed: Int) { state = UInt64(bitPattern: Int64(seed)) &+ 0x9E37_79B9_7F4A_7C15 }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
