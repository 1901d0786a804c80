import PanesPostgres
import Testing

@Suite struct PostgresURLTests {
    @Test func theBannerNeverShowsThePassword() {
        #expect(PostgresURL.redacted("postgres://ada:s3cr3t@db.example:5432/panes") == "postgres://ada:***@db.example:5432/panes")
        #expect(PostgresURL.redacted("postgresql://ada@db/panes?sslmode=require&password=x")
            == "postgresql://ada@db/panes?sslmode=require&password=***")
        #expect(PostgresURL.redacted("postgres://db/panes") == "postgres://db/panes")
    }

    @Test func onlyPostgresURLsSelectThePostgresStore() {
        #expect(PostgresURL.matches("postgres://x/y"))
        #expect(PostgresURL.matches("postgresql://x/y"))
        #expect(!PostgresURL.matches("sqlite"))
    }

    @Test func panesSettingsAreTakenOutOfTheURLBeforeLibpqSeesIt() throws {
        let (url, settings) = try PostgresSettings.split("postgres://db/p?sslmode=disable&panes_preference_log_min_entries=5&connect_timeout=9")
        #expect(url.hasPrefix("postgres://db/p?sslmode=disable&connect_timeout=9&keepalives=1&"))
        #expect(!url.contains("connect_timeout=5"), "the URL's own value wins")
        #expect(url.contains("tcp_user_timeout=5000"))
        #expect(try PostgresSettings.split("postgres://db/p").url.hasPrefix("postgres://db/p?connect_timeout=5&"))
        #expect(settings.preferenceLogMinEntries == 5)
        #expect(throws: PostgresError.self) { try PostgresSettings.split("postgres://db/p?panes_nope=1") }
    }
}
