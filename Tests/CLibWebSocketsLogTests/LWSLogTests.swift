// CLibWebSocketsLog's `_lws_log` in front of lws's: lws's own calls reach it, a line that is off
// is dropped, and a line that is on reaches lws's emitter formatted from every argument as the
// caller passed it (registers, %al, the stack). Linux only: the check is ELF symbol interposition
// over Debian's lws 4.1.6 (built with _DEBUG).
#if os(Linux)
import CLibWebSocketsLog
import CLibWebSocketsLogTestSupport
import Testing

@Suite struct LWSLogTests {
    /// lws's `lwsl_hexdump_level` calls `_lws_log` through lws's PLT; the call reaches this module's
    /// definition (which notes it) and not lws's own. Skipped when lws is not 4.1.x and nothing is
    /// interposed (lws_log.c), with the speed it is there for.
    @Test(.enabled(if: pws_log_interposing() != 0, "lws is not 4.1.x: lws logs through its own _lws_log"))
    func lwsOwnLogCallsReachTheCheck() {
        #expect(pws_log_calls_reach_here() == 1)
    }

    @Test func aLineThatIsOnIsFormattedFromEveryArgumentAndALineThatIsOffIsNot() {
        var captured = [CChar](repeating: 0, count: 512)
        var expected = [CChar](repeating: 0, count: 512)
        let offLines = pws_test_log_forwarding(&captured, &expected, 512)
        #expect(offLines == 0)
        let line = Array(captured.prefix { $0 != 0 }), wanted = Array(expected.prefix { $0 != 0 })
        #expect(!wanted.isEmpty)
        #expect(line == wanted, "\(String(cString: captured)) != \(String(cString: expected))")
    }
}
#endif
