import ArgumentParser
import Foundation
import Logging
import PanesCore
import PanesPostgres
import PanesServer
import PanesStorage
import PanesWebhooks

/// The webhook half of `panes serve`: the delivery engine for the configuration file's
/// `webhooks`, on the outbox of the store the server uses (its own connection to it, opened
/// after the store migrated), with its counts added to `/metrics`. Without endpoints there is
/// no engine.
extension Serve {
    /// The engine, not started; a bad endpoint or setting stops the start here, before the
    /// server listens.
    func makeWebhooks(_ configuration: ServerConfiguration, store: StoreLocation, backing: any Store, cluster: ClusterNode?,
                      logger: Logger) throws -> WebhookEngine? {
        guard !configuration.webhookEndpoints.isEmpty else { return nil }
        let outbox: any WebhookOutbox
        switch store {
        case .sqlite:
            // Its own connection, limited as the store's is (docs/operating.md: sqliteCacheKiB).
            let sqlite = try SQLiteWebhookOutbox(path: "\(data)/panes.sqlite", cacheKiB: configuration.settings.sqliteCacheKiB)
            let cacheKiB = try sqlite.cacheKiB()
            logger.info("webhook outbox opened", metadata: ["sqliteCacheKiB": "\(cacheKiB)"])
            outbox = sqlite
        case .postgres(let url): outbox = try PostgresWebhookOutbox(url: url)
        case .memory: outbox = (backing as? MemoryStore)?.webhookOutbox ?? MemoryWebhookOutbox()
        }
        // Lease owner: the node's id in a cluster, else this process's own.
        let node = cluster?.node.rawValue ?? ClusterNode.makeID().rawValue
        let engine: WebhookEngine
        do {
            engine = try WebhookEngine(outbox: outbox, configuration: .init(settings: configuration.settings,
                                                                            endpoints: configuration.webhookEndpoints, node: node),
                                       logger: logger)
        } catch let error as PanesError {
            throw ValidationError("\(config ?? "the configuration"): \(error.message)")
        }
        logger.info("webhooks", metadata: ["endpoints": "\(configuration.webhookEndpoints.map(\.id).joined(separator: ","))",
                                           "node": "\(node)"])
        return engine
    }

    /// Puts the engine's counts in the runtime's `/metrics` and wakes it when events are
    /// written; before the runtime starts. The engine is started after the runtime.
    func connectWebhooks(_ engine: WebhookEngine?, to runtime: ServerRuntime) {
        guard let engine else { return }
        runtime.webhooksWritten = { engine.wake() }
        runtime.metricsExtension = {
            var text = PrometheusText()
            engine.metrics.render(into: &text)
            return text.text
        }
    }
}
