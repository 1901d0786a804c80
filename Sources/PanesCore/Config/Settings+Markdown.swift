extension Settings {
    /// The settings table for docs/operating.md and `panes settings`: name, default and meaning of
    /// every limit, from the same descriptors the configuration file is read with.
    public static var markdownTable: String {
        let defaults = Settings()
        var rows = ["| setting | default | meaning |", "|---|---|---|"]
        for descriptor in descriptors {
            rows.append("| `\(descriptor.name)` | \(defaults[keyPath: descriptor.keyPath]) | \(descriptor.meaning) |")
        }
        rows.append("| `workspacePreferenceWriters` | \(defaults.workspacePreferenceWriters.rawValue) | Lowest role that may write the `workspace` preference domain: `owner`, `editor` or `viewer`. |")
        return rows.joined(separator: "\n")
    }
}
