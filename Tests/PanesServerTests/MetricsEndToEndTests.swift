import Foundation
import PanesCore
import PanesServerTestSupport
import Testing

/// `/metrics` is valid Prometheus text, with latency histograms that count what happened.
@Suite struct MetricsEndToEndTests {
    @Test func metricsParseAndTheHistogramsCountRequestsConnectsAndCommits() throws {
        let server = try ServerProcess()
        let client = try server.client()
        _ = client.connect()
        for index in 0..<5 {
            #expect(client.request("setPreference", ["domain": "user", "keyPath": .string("k\(index)"), "value": .int(Int64(index))])["ok"] == true)
        }
        #expect(client.request("ping")["ok"] == true)
        let (status, body) = try server.http("/metrics")
        #expect(status == 200)
        let metrics = try PrometheusParser(body)
        #expect(metrics.values("panes_request_duration_seconds_count", ["type": "setPreference"]) == [5])
        #expect(metrics.values("panes_request_duration_seconds_count", ["type": "ping"]) == [1])
        #expect(metrics.values("panes_connect_duration_seconds_count") == [1])
        #expect((metrics.values("panes_store_commit_duration_seconds_count").first ?? 0) >= 1)
        #expect((metrics.values("panes_fanout_duration_seconds_count").first ?? 0) >= 1)
        #expect((metrics.values("panes_loop_turn_duration_seconds_count").first ?? 0) >= 7)
        #expect((metrics.values("process_cpu_seconds_total").first ?? 0) > 0)
        #expect((metrics.values("process_resident_memory_bytes").first ?? 0) > 1_000_000)
        #expect(metrics.types["panes_request_duration_seconds"] == "histogram")
    }

    @Test func theParserRefusesWhatPrometheusWould() {
        #expect(throws: (any Error).self) { try PrometheusParser("panes_x 1\n") }
        #expect(throws: (any Error).self) { try PrometheusParser("# TYPE a gauge\na{b=c} 1\n") }
        #expect(throws: (any Error).self) { try PrometheusParser("# TYPE a gauge\na one\n") }
        let notCumulative = """
            # TYPE h histogram
            h_bucket{le="1"} 3
            h_bucket{le="+Inf"} 2
            h_sum 1
            h_count 2
            """
        #expect(throws: (any Error).self) { try PrometheusParser(notCumulative) }
    }
}
