// Threading: a result is read on the thread that ran the statement, before the next one.
internal import CLibPQ

/// The rows of one statement, read in binary format: `bigint` as 8 big-endian bytes, `bool`
/// as one byte, `text` and `bytea` as their bytes. Queries select only those types.
///
/// `@unchecked Sendable` is not claimed: a result never leaves the connection's thread.
final class PostgresRows {
    private let result: OpaquePointer
    let count: Int
    let columns: Int

    init(_ result: OpaquePointer) {
        self.result = result
        count = Int(PQntuples(result))
        columns = Int(PQnfields(result))
    }

    deinit { PQclear(result) }

    /// The number of rows an INSERT, UPDATE or DELETE touched.
    var affected: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(result, Int32(row), Int32(column)) == 1
    }

    func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        guard !isNull(row, column) else { return nil }
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        guard let value = PQgetvalue(result, Int32(row), Int32(column)) else { return [] }
        return value.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    func text(_ row: Int, _ column: Int) -> String? {
        guard !isNull(row, column) else { return nil }
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        guard let value = PQgetvalue(result, Int32(row), Int32(column)) else { return "" }
        return value.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// A `bigint` (or `bool`, read as 0/1); 0 for NULL.
    func int64(_ row: Int, _ column: Int) -> Int64 {
        guard !isNull(row, column), let value = PQgetvalue(result, Int32(row), Int32(column)) else { return 0 }
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        var number: UInt64 = 0
        value.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            for index in 0..<length { number = number << 8 | UInt64(bytes[index]) }
        }
        return Int64(bitPattern: number)
    }

    func optionalInt64(_ row: Int, _ column: Int) -> Int64? {
        isNull(row, column) ? nil : int64(row, column)
    }
}
