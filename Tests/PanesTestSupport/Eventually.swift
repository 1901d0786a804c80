import Foundation

/// Checks `condition` until it holds (true) or `timeout` seconds pass (false): for state another
/// thread or process reaches in its own time.
public func eventually(timeout: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.02) // between checks of a condition, not a wait for time to pass
    }
    return try condition()
}
