/// A value bound to a statement parameter: the four storage classes the store uses.
enum SQLiteValue: Sendable, Equatable {
    case null
    case int(Int64)
    case text(String)
    case blob([UInt8])

    /// NULL for nil, so optional columns read as they were written.
    static func text(_ text: String?) -> SQLiteValue { text.map(SQLiteValue.text) ?? .null }
}
