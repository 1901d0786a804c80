/// Preference domains as channels of the generic writer (`Hub+ChannelWriting.swift`): a
/// domain's version is its channel's, and its writes are `PreferenceWrite`s.
enum PreferenceChannel: WrittenChannel {
    static var writers: WritableKeyPath<CommitState, ChannelWriters<PreferenceDomain, PreferenceWrite>> {
        \.preferenceWriters
    }

    static func held(_ domain: PreferenceDomain, in hub: Hub) -> Int64? {
        hub.preferences.version(of: domain)
    }

    static func catchUpRead(_ domain: PreferenceDomain, afterConflict: Bool, in hub: inout Hub) -> LoadRequest {
        hub.sharesStore ? .preferenceChanges(domain, after: held(domain, in: hub) ?? 0) : .preferences(domain)
    }

    static func startBatch(_ domain: PreferenceDomain, in hub: inout Hub) {
        hub.startPreferenceBatch(domain)
    }

    static func fail(_ writes: [PreferenceWrite], _ error: PanesError, on domain: PreferenceDomain, in hub: inout Hub) {
        hub.answer(writes, writes.map { _ in .failed(error) }, in: domain, applying: false)
    }

    static var stuckError: PanesError {
        PanesError(.internalError, "the preferences could not be stored; retry later", retryAfterMs: 5_000)
    }
}
