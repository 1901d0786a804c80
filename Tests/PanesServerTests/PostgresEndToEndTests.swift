import Foundation
import PanesCore
import PanesPostgres
import PanesPostgresTestSupport
import PanesServerTestSupport
import Testing

/// What only the PostgreSQL store adds to the end-to-end suites (which run on it too): the
/// banner, and a node whose database connections are cut.
@Suite(.enabled(if: !TestDatabase.isSkipped, "PANES_TEST_POSTGRES=skip")) struct PostgresEndToEndTests {
    @Test func theBannerNamesTheDatabaseWithoutItsPassword() throws {
        let database = try TestDatabase()
        defer { withExtendedLifetime(database) {} }
        let url = database.url.replacingOccurrences(of: "postgres@", with: "postgres:hunter2@")
        let server = try ServerProcess(extra: ["--store", url])
        #expect(server.banner.contains("store: postgres://postgres:***@"), "\(server.banner)")
        #expect(!server.banner.contains("hunter2"))
        #expect(!server.log.contains("hunter2"))
    }

    @Test func aNodeWhoseConnectionsAreCutReconnectsAndLosesNothingAcknowledged() throws {
        let server = try ServerProcess(store: .postgres)
        let database = try #require(server.database)
        let tab = try server.client()
        let created = tab.connect()
        #expect(tab.request("setUserInfo", ["userInfo": ["step": 0]])["ok"] == true)
        #expect(tab.request("setPreference", ["domain": "user", "keyPath": "theme", "value": "dark"])["ok"] == true)

        // Every connection the node has to its database (store, heartbeat, listener) is cut.
        let admin = try database.connect()
        try admin.execute("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
            """)
        for step in 1...20 {
            let reply = tab.request("setUserInfo", ["userInfo": ["step": .int(Int64(step))]])
            #expect(reply["ok"] == true, "step \(step): \(reply)")
        }
        let preference = tab.request("setPreference", ["domain": "user", "keyPath": "theme", "value": "light"])
        #expect(preference["ok"] == true || preference["error"]?["code"] == "storage_failed", "\(preference)")

        server.kill(SIGKILL)
        server.wait()
        let restarted = try server.restarted()
        let again = try restarted.client()
        #expect(again.connect(["session": TestClient.credentials(created)])["session"]?["userInfo"]?["step"] == 20)
    }
}
