extension Settings {
    /// Preference observations and domains.
    static let preferencesDescriptors: [Descriptor] = [
        .init(name: "maxObservationsPerScene", keyPath: \.maxObservationsPerScene,
              meaning: "Preference observations one scene may hold.", range: 1...100_000),
        .init(name: "maxPreferenceValueBytes", keyPath: \.maxPreferenceValueBytes,
              meaning: "Encoded size of one preference value.", range: 16...(16 << 20)),
        .init(name: "maxPreferenceKeys", keyPath: \.maxPreferenceKeys,
              meaning: "Keys one preference domain (a user's, or a workspace's) may hold; more gets `too_many`.",
              range: 1...10_000_000),
        .init(name: "maxPreferenceBytes", keyPath: \.maxPreferenceBytes,
              meaning: "Encoded bytes of every key and value in one preference domain; more gets `too_large`.",
              range: 1_024...(1 << 30)),
    ]
}
