extension Settings {
    /// One entry per integer setting: its name, where it lives, what it means and its range.
    public struct Descriptor: Sendable {
        public let name: String
        public let keyPath: any WritableKeyPath<Settings, Int> & Sendable
        public let meaning: String
        public let range: ClosedRange<Int>
    }

    /// Every integer setting, in the order of the settings table (docs/operating.md,
    /// `panes settings`): each group's own file holds its entries.
    public static let descriptors: [Descriptor] = transportDescriptors + sessionsDescriptors + preferencesDescriptors
        + documentsDescriptors + securityDescriptors + requestKeysDescriptors + httpDescriptors + webhooksDescriptors
}
