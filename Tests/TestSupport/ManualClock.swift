import Foundation
import SnapshotFormat

/// A clock a test moves by hand, for code that takes a `() -> Timestamp`.
public final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var milliseconds: Int64

    /// A clock starting at `start` milliseconds since the epoch.
    public init(_ start: Int64 = 1_795_860_000_000) { milliseconds = start }

    /// The time now.
    public var now: Timestamp { lock.withLock { Timestamp(milliseconds: milliseconds) } }

    /// Sets the time.
    public func set(_ value: Int64) { lock.withLock { milliseconds = value } }

    /// Moves the time on.
    public func advance(by delta: Int64 = 1_000) { lock.withLock { milliseconds += delta } }
}
