extension JSONValue {
    /// Whether the two encode to the same text: strings (keys too) by their bytes, numbers by
    /// their kind and bits. `==` compares strings as Swift does, by canonical equivalence, so a
    /// name changed from NFC `é` to NFD `e` + U+0301 would read as unchanged and the change
    /// would never be told.
    public func isIdentical(to other: JSONValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): return Identifier.equal(a, b)
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        case (.object(let a), .object(let b)):
            // Both in key byte order, so members pair up in place.
            return a.count == b.count
                && zip(a, b).allSatisfy { Identifier.equal($0.key, $1.key) && $0.value.isIdentical(to: $1.value) }
        default: return false
        }
    }
}
