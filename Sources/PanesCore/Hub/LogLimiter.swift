public import Logging

/// Rate-limits log lines that repeat while something stays broken (an unreachable database
/// fails every read, every retry, every heartbeat): the first line of a kind is logged, then at
/// most one per `intervalMs`, carrying `suppressed`, the count of lines of that kind left out
/// since the last one logged. A kind is its message text, unless the caller names one. One limiter per thread that logs
/// (the hub's on the service thread, the store thread's, the heartbeat's, the listener's): it
/// is a value without locks.
public struct LogLimiter: Sendable {
    public let intervalMs: Millis
    private var kinds: [String: (loggedAt: Millis, suppressed: Int)] = [:]

    public init(intervalMs: Millis = 5_000) {
        self.intervalMs = intervalMs
    }

    /// Whether a line of this kind is logged now: nil to leave it out (counted), else how many
    /// were left out before it.
    public mutating func admit(_ kind: String, now: Millis) -> Int? {
        if let seen = kinds[kind], now - seen.loggedAt < intervalMs {
            kinds[kind]?.suppressed += 1
            return nil
        }
        let suppressed = kinds[kind]?.suppressed ?? 0
        kinds[kind] = (now, 0)
        return suppressed
    }

    /// Logs `message` unless a line of its kind (`kind`, the message's text by default) was
    /// logged less than `intervalMs` ago; a line logged after some were left out says how many
    /// (`suppressed`). A kind of its own per subject (the message's text and a node's id) keeps
    /// one subject's lines from hiding another's.
    public mutating func log(_ logger: Logger, _ level: Logger.Level, _ message: Logger.Message,
                             metadata: Logger.Metadata = [:], kind: String? = nil, now: Millis) {
        guard let suppressed = admit(kind ?? message.description, now: now) else { return }
        var metadata = metadata
        if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
        logger.log(level: level, message, metadata: metadata)
    }

    /// Forgets a kind once what it reported is over (the store answered again), returning how
    /// many of its lines were left out since the last one logged, for the line saying so.
    public mutating func reset(_ message: Logger.Message) -> Int {
        kinds.removeValue(forKey: message.description)?.suppressed ?? 0
    }
}
