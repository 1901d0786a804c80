/// A statement parameter, sent in PostgreSQL's binary format with its type, so no value is
/// ever spliced into SQL text.
public enum PostgresValue: Sendable, Equatable {
    case null
    /// `bigint` (int8).
    case int(Int64)
    /// `text`. PostgreSQL's text cannot hold U+0000; a NUL is sent as U+FFFD (see
    /// `PostgresStore` for the columns where that can happen).
    case text(String)
    /// `bytea`: bytes as they are, for text that must keep every scalar, NUL included.
    case bytes([UInt8])

    /// The parameter's type OID (pg_type.oid).
    var typeOID: UInt32 {
        switch self {
        case .null: 0
        case .int: 20
        case .text: 25
        case .bytes: 17
        }
    }

    /// The binary wire form, nil for NULL.
    var wireBytes: [UInt8]? {
        switch self {
        case .null:
            return nil
        case .int(let value):
            return withUnsafeBytes(of: value.bigEndian) { Array($0) }
        case .text(let text):
            var bytes = Array(text.utf8)
            guard bytes.contains(0) else { return bytes }
            // U+FFFD in UTF-8.
            bytes = bytes.flatMap { $0 == 0 ? [0xEF, 0xBF, 0xBD] : [$0] }
            return bytes
        case .bytes(let bytes):
            return bytes
        }
    }
}

extension Optional where Wrapped == String {
    /// `.text` or `.null`.
    var postgres: PostgresValue { map { .text($0) } ?? .null }
}
