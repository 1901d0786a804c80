@testable import PanesStorage
import PanesCore
import PanesStorageTestSupport
import Testing

/// The thin layer over `sqlite3*`: binding, reading, errors, transactions.
@Suite struct SQLiteConnectionTests {
    let directory: TemporaryDirectory
    let connection: SQLiteConnection

    init() throws {
        directory = try TemporaryDirectory()
        connection = try SQLiteConnection(path: directory.file("test.sqlite"), mode: .readWrite(synchronous: .full))
        try connection.enableWriteAheadLog()
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT, number INTEGER, data BLOB)")
    }

    @Test func everyStorageClassReadsBackAsBound() throws {
        let rows: [(String?, Int64?, [UInt8]?)] = [
            ("", 0, []),
            ("nul\u{0}inside, 🪟 and e\u{301}", Int64.max, [0, 255, 1]),
            (nil, Int64.min, nil),
        ]
        for (index, row) in rows.enumerated() {
            try connection.run("INSERT INTO t VALUES (?1, ?2, ?3, ?4)", [
                .int(Int64(index)), .text(row.0), row.1.map(SQLiteValue.int) ?? .null, row.2.map(SQLiteValue.blob) ?? .null,
            ])
        }
        var read: [(String?, Int64, [UInt8]?)] = []
        try connection.forEachRow("SELECT text, number, data FROM t ORDER BY id") { row in
            read.append((row.text(at: 0), row.int64(at: 1), row.blob(at: 2)))
        }
        #expect(read.map(\.0) == rows.map(\.0))
        #expect(read.map(\.1) == rows.map { $0.1 ?? 0 })
        #expect(read.map(\.2) == rows.map(\.2))
        #expect(try connection.text("SELECT typeof(data) FROM t WHERE id = 0") == "blob")
        #expect(try connection.text("SELECT typeof(text) FROM t WHERE id = 0") == "text")
    }

    /// `withBound` lends an identifier's bytes to the statement for `body` only (SQLite does not
    /// copy them): they are read while `body` steps it, and the parameter is NULL afterwards, so a
    /// later step of the kept statement never reads bytes that are gone (a bind to a statement
    /// stepped and not reset is refused: without the reset the bytes stayed bound). A packed id
    /// (32 hex digits) and one held as a string take the two ways.
    @Test func anIdentifierBoundInPlaceIsReadWhileBoundAndIsNullAfterwards() throws {
        var kept: OpaquePointer?
        for text in [String(repeating: "0123456789abcdef", count: 2), "ses_not-packed \u{E9}"] {
            let id = SessionID(text)
            let read = try connection.withStatement(in: &kept, "SELECT ?1, typeof(?1)") {
                statement throws(SQLiteError) -> (rows: [Bool], during: String?, type: String?, after: String?) in
                var rows: [Bool] = []
                let (during, type) = try statement.withBound(id.bytes, at: 1) { () throws(SQLiteError) -> (String?, String?) in
                    rows.append(try statement.step())
                    return (statement.text(at: 0), statement.text(at: 1))
                }
                // `withBound` reset the statement: it runs again from the start, the parameter NULL.
                rows.append(try statement.step())
                let after = statement.text(at: 1)
                rows.append(try statement.step())
                return (rows, during, type, after)
            }
            #expect(read.rows == [true, true, false])
            #expect(read.during.map { Array($0.utf8) } == Array(text.utf8))
            #expect(read.type == "text")
            #expect(read.after == "null")
        }
    }

    @Test func errorsCarrySQLitesMessageAndTheStatement() throws {
        let error = try #require(throws: SQLiteError.self) { try connection.run("INSERT INTO missing VALUES (1)") }
        #expect(error.message.contains("no such table"))
        #expect(error.sql == "INSERT INTO missing VALUES (1)")
        #expect(error.primaryResultCode == 1) // SQLITE_ERROR
        #expect(error.description.contains("INSERT INTO missing"))
    }

    @Test func aThrowingTransactionRollsBack() throws {
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try connection.transaction {
                try connection.run("INSERT INTO t (id) VALUES (1)")
                throw Boom()
            }
        }
        #expect(!connection.isInTransaction)
        #expect(try connection.integer("SELECT count(*) FROM t") == 0)

        try connection.transaction { try connection.run("INSERT INTO t (id) VALUES (2)") }
        #expect(try connection.integer("SELECT count(*) FROM t") == 1)
    }

    @Test func aStatementIsReusableAfterAFailedStep() throws {
        try connection.run("INSERT INTO t (id) VALUES (1)")
        #expect(throws: SQLiteError.self) { try connection.run("INSERT INTO t (id) VALUES (?1)", [.int(1)]) }
        try connection.run("INSERT INTO t (id) VALUES (?1)", [.int(2)])
        #expect(try connection.integer("SELECT count(*) FROM t") == 2)
    }

    @Test func aClosedConnectionFailsCleanly() throws {
        connection.close()
        connection.close()
        #expect(throws: SQLiteError.self) { try connection.run("SELECT 1") }
    }
}
