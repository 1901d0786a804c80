// Threading: the service thread's: `/metrics` is answered by the transport's loop.
import Logging
import PanesCore
import PanesTransport

extension ServerRuntime {
    /// `/metrics`: the runtime's and the store thread's figures, the process's, the hub's, and
    /// any `metricsExtension`'s.
    func metricsText() -> String {
        var text = PrometheusText()
        text.gauge("panes_connections", "Open WebSocket connections.", [([:], transport.connectionCount)])
        text.gauge("panes_connections_in_headers", "Connections in the header stage: accepted or kept alive, not yet handed to a WebSocket or to Panes' HTTP handling (files lws serves included).",
                   [([:], transport.connectionsInHeaders)])
        let refusedInHeaders = transport.connectionsRefusedInHeaders
        text.counter("panes_connections_refused_in_headers_total",
                     "Connections closed at accept because maxConnectionsInHeaders (total: every new connection is refused while it lasts) or maxConnectionsInHeadersPerAddress (per_address) were in the header stage.",
                     [(["reason": "total"], refusedInHeaders.total), (["reason": "per_address"], refusedInHeaders.perAddress)])
        let store = worker.statistics
        text.counter("panes_store_commits_total", "Store transactions committed (group commits).", [([:], store.commits)])
        text.counter("panes_store_writes_total", "Persists and channel commits applied.", [([:], store.writes)])
        text.gauge("panes_store_pending_batches", "Batches waiting for the store thread.", [([:], store.pending)])
        text.gauge("panes_store_held_writes", "Persists kept for retry while a shared store is unavailable.",
                   [([:], worker.stalledWrites)])
        text.gauge("panes_held_messages", "Outbound messages waiting for durability.", [([:], gate.heldCount)])
        text.gauge("panes_connections_paused", "Connections not read from until their held messages drain (maxHeldPerConnection).",
                   [([:], pausedConnections.count)])
        let documents = hub.documentCounts
        text.gauge("panes_documents", "Workspace documents stored.", [([:], documents.stored)])
        text.gauge("panes_documents_loaded", "Documents held in memory (some scene has them open).",
                   [([:], documents.loaded)])
        text.gauge("panes_documents_loading", "Documents being read from the store to be opened.",
                   [([:], documents.loading)])
        text.histogram("panes_request_duration_seconds",
                       "From a request's receipt to its reply leaving (durability included), by type.",
                       metrics.acks.sorted { $0.key < $1.key }.map { (["type": $0.key], $0.value) })
        text.histogram("panes_connect_duration_seconds", "From a socket opening to its `connect` reply leaving.",
                       [([:], metrics.connects)])
        text.histogram("panes_store_commit_duration_seconds", "Time to apply and make durable one store transaction.",
                       [([:], worker.commitDurations)])
        text.histogram("panes_store_conflict_wait_seconds",
                       "Cluster: how long the store thread, holding a document's lock after a conflict, waited for the retry.",
                       [([:], worker.conflictWaits)])
        text.histogram("panes_fanout_duration_seconds",
                       "From a store transaction being durable to the last message it caused being queued.",
                       [([:], metrics.fanOut)])
        text.histogram("panes_loop_turn_duration_seconds",
                       "Time the service thread spends on Panes' work per event (a frame, an open, a commit).",
                       [([:], metrics.turns)])
        ProcessMetrics.render(into: &text)
        return text.text + hub.metricsText() + (metricsExtension?() ?? "")
    }
}
