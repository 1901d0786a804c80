/// Scene lifecycle callbacks counted by event (`Metrics.lifecycle`): one counter per event at
/// its case's place, so counting a connect's `willConnect` is an increment, not a dictionary
/// lookup that hashes a key.
public struct LifecycleCounts: Sendable {
    private var counts = [Int](repeating: 0, count: LifecycleEvent.allCases.count)

    public subscript(event: LifecycleEvent) -> Int {
        get { counts[event.index] }
        set { counts[event.index] = newValue }
    }
}

extension LifecycleEvent {
    /// The case's place in `allCases`.
    fileprivate var index: Int {
        switch self {
        case .willConnect: 0
        case .didDisconnect: 1
        case .didBecomeActive: 2
        case .willResignActive: 3
        case .willEnterForeground: 4
        case .didEnterBackground: 5
        }
    }
}
