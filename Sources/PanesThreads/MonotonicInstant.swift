// Threading: a value; `now()` may be called from any thread.
import Glibc

/// A point on the system's monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds: for deadlines,
/// timeouts and intervals, which must not jump when the wall clock is set. Never stored and
/// never sent: timestamps use the wall clock.
public struct MonotonicInstant: Comparable, Hashable, Sendable {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    public static func now() -> MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec))
    }

    /// Milliseconds since an arbitrary start (the clock's), for APIs that count in `Millis`.
    public var milliseconds: Int64 { Int64(nanoseconds / 1_000_000) }

    public static let distantPast = MonotonicInstant(nanoseconds: 0)
    public static let distantFuture = MonotonicInstant(nanoseconds: UInt64.max / 2)

    /// `milliseconds` from now.
    public static func after(milliseconds: Int) -> MonotonicInstant {
        now().adding(milliseconds: milliseconds)
    }

    public func adding(milliseconds: Int) -> MonotonicInstant {
        let delta = UInt64(max(0, milliseconds)) * 1_000_000
        return MonotonicInstant(nanoseconds: min(nanoseconds &+ delta, MonotonicInstant.distantFuture.nanoseconds))
    }

    /// Milliseconds from `earlier` to this instant (0 when it is not later).
    public func milliseconds(since earlier: MonotonicInstant) -> Int {
        nanoseconds > earlier.nanoseconds ? Int((nanoseconds - earlier.nanoseconds) / 1_000_000) : 0
    }

    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }
}
