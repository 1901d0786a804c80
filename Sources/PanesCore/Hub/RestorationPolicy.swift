/// Whether a session's stored restoration activity is handed back to the window that attaches
/// it, and if not, why: the settings it is judged by and the moment of the attach, taken
/// before the session is changed in place (`Hub.attach`).
struct RestorationPolicy {
    /// `cleanStartThreshold`: abnormal ends soon after a restore before the next start is clean.
    let cleanStartThreshold: Int
    /// `restorationMaxAgeMs`: an activity saved longer ago than this is stale.
    let maxAge: Millis
    let now: Millis

    init(_ settings: Settings, now: Millis) {
        cleanStartThreshold = settings.cleanStartThreshold
        maxAge = Millis(settings.restorationMaxAgeMs)
        self.now = now
    }

    func status(of session: SceneSession, handedOver: [Activity]) -> RestorationStatus {
        guard let restoration = session.restoration else { return .none }
        if session.failedRestores >= cleanStartThreshold { return .cleanStart }
        if !handedOver.isEmpty { return .superseded }
        if restoration.metadata.documentGone { return .documentGone }
        if restoration.metadata.protocolVersion > Hub.protocolVersion { return .incompatible }
        if now - restoration.metadata.savedAt > maxAge { return .stale }
        return .restored
    }
}
