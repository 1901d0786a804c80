/// The parts of a `SceneSession` its windows write (`updateActivity`, `setUserInfo`, `requestRefresh`):
/// all empty for a new window, and for many idle ones. The record keeps them out of line, in a
/// `SessionDetailsBox`, only when any is set.
struct SessionDetails: Sendable, Equatable {
    var title = ""
    var subtitle = ""
    var snapshot: JSONValue?
    var userInfo: [String: JSONValue] = [:]
    var restoration: Restoration?

    /// Nothing set: the record needs no box.
    var isEmpty: Bool {
        title.isEmpty && subtitle.isEmpty && snapshot == nil && userInfo.isEmpty && restoration == nil
    }
}

/// A `SessionDetails` on the heap, shared by copies of a session record until one of them
/// changes it (`SceneSession.details` copies a shared box before a change).
///
/// `@unchecked Sendable`: `details` is changed only through a box that is uniquely referenced
/// (`isKnownUniquelyReferenced`), so no other copy, on this thread or another, can see the
/// change, as with an array's storage; a box reachable from two records is never written.
final class SessionDetailsBox: @unchecked Sendable, Equatable {
    var details: SessionDetails

    init(_ details: SessionDetails) {
        self.details = details
    }

    static func == (a: SessionDetailsBox, b: SessionDetailsBox) -> Bool {
        a === b || a.details == b.details
    }
}

/// A record printed (logs, test failures, `"\(session)"`) shows what its box holds, as it did
/// when these parts were inline, not the box's class name.
extension SessionDetailsBox: CustomStringConvertible, CustomDebugStringConvertible {
    var description: String { String(describing: details) }
    var debugDescription: String { String(reflecting: details) }
}
