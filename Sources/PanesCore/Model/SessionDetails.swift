/// The parts of a `SceneSession` its windows write (`updateActivity`, `setUserInfo`, `requestRefresh`):
/// all empty for a new window, and for many idle ones. The record keeps them out of line, in a
/// `SessionDetailsBox`, only when any is set.
struct SessionDetails: Sendable, Equatable {
    var title = ""
    var subtitle = ""
    var snapshot: JSONValue?
    var userInfo: JSONObject = [:]
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
/// Only this file can write it (`SceneSession.details` below), so no other code can change a
/// box without that check.
final class SessionDetailsBox: @unchecked Sendable, Equatable {
    fileprivate(set) var details: SessionDetails

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

extension SceneSession {
    /// The client's parts of the record, changed in place (each is read from the box directly):
    /// the box is made when the first is set, copied first when another copy of the record
    /// shares it (copy on write, as an array's storage), and dropped when everything in it is
    /// empty again.
    var details: SessionDetails {
        get { detailsBox?.details ?? SessionDetails() }
        _modify {
            if detailsBox == nil {
                detailsBox = SessionDetailsBox(SessionDetails())
            } else if !isKnownUniquelyReferenced(&detailsBox) {
                detailsBox = SessionDetailsBox(detailsBox!.details)
            }
            defer { if detailsBox!.details.isEmpty { detailsBox = nil } }
            yield &detailsBox!.details
        }
    }
}
