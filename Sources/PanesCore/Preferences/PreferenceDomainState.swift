/// One domain's committed values, indexed so that a write costs O(size of the change), never
/// O(keys in the domain): nesting is checked through `below` (how many stored keys lie under
/// each prefix), and the domain's size is kept up to date instead of recounted.
struct PreferenceDomainState: Sendable {
    private(set) var version: Int64 = 0
    private(set) var values: [String: VersionedValue] = [:]
    /// For each proper prefix of a stored key (`editor` for `editor.fontSize`), the number of
    /// stored keys below it.
    private(set) var below: [String: Int] = [:]
    /// Encoded bytes of every key and value, for `maxPreferenceBytes`.
    private(set) var bytes = 0

    init() {}

    init(_ stored: StoredPreferences) {
        version = stored.version
        for (key, value) in stored.values { set(key, value) }
    }

    var count: Int { values.count }

    /// What a key and its value count towards `maxPreferenceBytes`.
    static func size(of key: String, _ value: JSONValue) -> Int { key.utf8.count + value.encodedSize }

    /// Sets or removes a key at `version`, which becomes the domain's version.
    mutating func apply(_ key: String, _ value: JSONValue?, version: Int64) {
        if let value {
            set(key, VersionedValue(value: value, version: version))
        } else {
            remove(key)
        }
        self.version = max(self.version, version)
    }

    /// Moves the version on without a change (a removal of an absent key elsewhere).
    mutating func apply(version: Int64) {
        self.version = max(self.version, version)
    }

    private mutating func set(_ key: String, _ value: VersionedValue) {
        if let old = values.updateValue(value, forKey: key) {
            bytes -= Self.size(of: key, old.value)
        } else {
            for prefix in Self.prefixes(of: key) { below[prefix, default: 0] += 1 }
        }
        bytes += Self.size(of: key, value.value)
    }

    private mutating func remove(_ key: String) {
        guard let old = values.removeValue(forKey: key) else { return }
        bytes -= Self.size(of: key, old.value)
        for prefix in Self.prefixes(of: key) {
            let left = below[prefix, default: 1] - 1
            below[prefix] = left == 0 ? nil : left
        }
    }

    /// The proper prefixes of a key path, shortest first: `a`, `a.b` for `a.b.c`.
    static func prefixes(of key: String) -> [String] {
        var prefixes: [String] = []
        var index = key.startIndex
        while let dot = key[index...].firstIndex(of: ".") {
            prefixes.append(String(key[..<dot]))
            index = key.index(after: dot)
        }
        return prefixes
    }
}
