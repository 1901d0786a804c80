/// Every preference domain's values and every scene's observations.
struct PreferenceState: Sendable {
    init(stored: [PreferenceDomain: StoredPreferences]) {}
}
