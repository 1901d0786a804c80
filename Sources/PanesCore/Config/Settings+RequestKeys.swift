extension Settings {
    /// Request keys (`idempotencyKey`).
    static let requestKeysDescriptors: [Descriptor] = [
        .init(name: "idempotencyRetentionMs", keyPath: \.idempotencyRetentionMs,
              meaning: "How long the outcome of a request sent with an `idempotencyKey` is kept, so that a retry with the same key is answered with it instead of applied again; a retry later than this is a new request.",
              range: 1_000...(7 * 86_400_000)),
        .init(name: "maxIdempotencyKeysPerUser", keyPath: \.maxIdempotencyKeysPerUser,
              meaning: "Outcomes of keyed requests kept per user and workspace; beyond it the oldest are forgotten first, and a retry with a forgotten key is a new request.",
              range: 1...1_000_000),
    ]
}
