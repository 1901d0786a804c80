import PanesCore
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// `sqliteCacheKiB` reaches every connection `panes serve` opens to the SQLite file: the
/// store's and the webhook outbox's (which once kept SQLite's default 2,000 KiB). Each logs the
/// limit SQLite holds as it opens.
@Suite struct SQLiteCacheEndToEndTests {
    @Test func theSettingLimitsTheStoresAndTheWebhookOutboxsConnections() throws {
        let server = try ServerProcess(store: .sqlite, config: [
            "settings": ["sqliteCacheKiB": 300],
            "webhooks": [["id": "crm", "url": "http://127.0.0.1:9/hooks", "secret": "whsec_0123456789abcdef0123456789abcdef"]],
        ], extra: ["--log-level", "info"])  // the last --log-level given counts
        #expect(server.waitForLog("sqliteCacheKiB=300 [panes] webhook outbox opened"), "\(server.log)")
        #expect(server.log.contains("sqliteCacheKiB=300 [panes] SQLite store opened"), "\(server.log)")
    }

    @Test func withoutTheSettingTheDefaultIsUsed() throws {
        let server = try ServerProcess(store: .sqlite, extra: ["--log-level", "info"])
        #expect(server.waitForLog("sqliteCacheKiB=\(Settings().sqliteCacheKiB) [panes] SQLite store opened"), "\(server.log)")
    }
}
