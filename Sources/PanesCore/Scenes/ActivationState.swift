/// A scene's activation state (UIScene.ActivationState), derived from what the browser
/// reports: visibility and focus.
public enum ActivationState: String, Sendable, CaseIterable, Comparable {
    case unattached
    case background
    case foregroundInactive
    case foregroundActive

    /// Order used for a user's app state: the highest state of their scenes.
    private var rank: Int {
        switch self {
        case .unattached: 0
        case .background: 1
        case .foregroundInactive: 2
        case .foregroundActive: 3
        }
    }

    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }

    /// The state a scene is in when its window is (in)visible and (un)focused.
    public static func derived(visible: Bool, focused: Bool) -> ActivationState {
        visible ? (focused ? .foregroundActive : .foregroundInactive) : .background
    }

    /// The scene-delegate callbacks crossed when moving from `self` to `target`, in order.
    /// Foreground and background never jump over `foregroundInactive`, as in UIKit.
    public func transitions(to target: ActivationState) -> [LifecycleEvent] {
        var events: [LifecycleEvent] = []
        var state = self
        while state != target {
            switch (state, target) {
            case (.unattached, .background):
                events.append(.didEnterBackground); state = .background
            case (.unattached, _), (.background, _):
                events.append(.willEnterForeground); state = .foregroundInactive
            case (.foregroundInactive, .foregroundActive):
                events.append(.didBecomeActive); state = .foregroundActive
            case (.foregroundInactive, _):
                events.append(.didEnterBackground); state = .background
            case (.foregroundActive, _):
                events.append(.willResignActive); state = .foregroundInactive
            }
        }
        return events
    }
}

/// The scene-delegate callbacks, as the server logs and counts them.
public enum LifecycleEvent: String, Sendable, CaseIterable {
    case willConnect, didDisconnect, didBecomeActive, willResignActive, willEnterForeground, didEnterBackground
}
