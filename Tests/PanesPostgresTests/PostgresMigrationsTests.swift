import Foundation
@testable import PanesPostgres
import PanesPostgresTestSupport
import Testing

@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresMigrationsTests {
    @Test func twoNodesStartingAtOnceMigrateOnceAndBothStart() throws {
        let database = try TestDatabase()
        let results = ResultBox()
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    let connection = try database.connect()
                    try PostgresMigrations.migrate(connection)
                    results.append(nil)
                } catch {
                    results.append("\(error)")
                }
            }
        }
        group.wait()
        #expect(results.values == [nil, nil, nil, nil])
        let connection = try database.connect()
        #expect(try connection.integer("SELECT count(*) FROM schema_migrations") == PostgresMigrations.latest)
        #expect(try PostgresMigrations.version(connection) == PostgresMigrations.latest)
    }

    @Test func aDatabaseFromANewerBuildIsRefusedAndLeftAsItWas() throws {
        let database = try TestDatabase()
        let connection = try database.connect()
        try PostgresMigrations.migrate(connection)
        try connection.query("INSERT INTO schema_migrations (version, name) VALUES ($1, 'from the future')",
                             [.int(PostgresMigrations.latest + 1)])
        #expect(throws: PostgresError.self) { try PostgresStore(url: database.url) }
        #expect(try PostgresMigrations.version(connection) == PostgresMigrations.latest + 1)
    }
}

/// Collects results from several threads.
final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [String?] = []

    func append(_ value: String?) {
        lock.lock()
        collected.append(value)
        lock.unlock()
    }

    var values: [String?] {
        lock.lock()
        defer { lock.unlock() }
        return collected
    }
}
