// CLibWebSocketsLog's `_lws_log` in front of lws's: lws's own calls reach it, a line that is off
// is dropped, and a line that is on reaches lws's emitter formatted from every argument as the
// caller passed it (registers, %al, the stack); the same of its check in C (its `_lws_log` off
// x86-64 or without ELF), compiled for the tests under another name. Linux only: the check is ELF
// symbol interposition over Debian's lws 4.1.6 (built with _DEBUG).
//
// Serialized: both forwarding tests set lws's emitter and levels, which are global, and lws
// formats every line in one static buffer (`_lws_logv`).
#if os(Linux)
import CLibWebSocketsLog
import CLibWebSocketsLogTestSupport
import Testing

/// Which lws runs, and whether the check in front of it can be tested: lws_log.c interposes only
/// when compiled against lws 4.1.x, and what it copies (how lws calls `_lws_log`, what `_lws_logv`
/// takes) holds only if the lws this process runs is 4.1.x too.
enum LWSVersion {
    static let runtime = String(cString: pws_test_lws_runtime_version())
    static let headers = String(cString: pws_test_lws_header_version())
    static let checkApplies = pws_log_interposing() != 0 && runtime.hasPrefix("4.1.")
    static var skipped: Comment {
        if pws_log_interposing() == 0 {
            return Comment(rawValue: "lws_log.c was compiled against lws \(headers), not 4.1.x: nothing is interposed")
        }
        return Comment(rawValue: "lws \(runtime) runs, not the 4.1.x that lws_log.c was compiled against (\(headers)) "
                           + "and copies: how it calls _lws_log may differ")
    }
}

@Suite(.serialized) struct LWSLogTests {
    /// lws's `lwsl_hexdump_level` calls `_lws_log` through lws's PLT; the call reaches this module's
    /// definition (which notes it) and not lws's own.
    @Test(.enabled(if: LWSVersion.checkApplies, LWSVersion.skipped))
    func lwsOwnLogCallsReachTheCheck() {
        #expect(pws_log_calls_reach_here() == 1)
    }

    /// What a forwarding test saw: lines emitted for the call at a level that is off, what was
    /// emitted for the call at a level that is on, and what snprintf makes of it.
    struct Forwarded {
        var offLines: Int32
        var line: [CChar]
        var expected: [CChar]
    }

    /// A C forwarding test: writes the line and snprintf's, returns the lines emitted while off.
    typealias Capture = (UnsafeMutablePointer<CChar>, UnsafeMutablePointer<CChar>, Int) -> Int32

    /// Runs a forwarding test until the line that is on comes through whole, at most `attempts`
    /// times. lws formats every line in one static buffer (`_lws_logv`), so another thread of this
    /// process (a server of another suite, logging an error) can overwrite the line between its
    /// formatting and the emitter. A race garbles one attempt; a check that hands the arguments on
    /// wrongly garbles every one, and the last is reported.
    static func forwarded(attempts: Int = 5, _ run: Capture) -> [Forwarded] {
        var seen: [Forwarded] = []
        for _ in 0..<attempts {
            var captured = [CChar](repeating: 0, count: 512)
            var expected = [CChar](repeating: 0, count: 512)
            let offLines = run(&captured, &expected, 512)
            let attempt = Forwarded(offLines: offLines, line: Array(captured.prefix { $0 != 0 }),
                                    expected: Array(expected.prefix { $0 != 0 }))
            seen.append(attempt)
            if attempt.line == attempt.expected { break }
        }
        return seen
    }

    static func expectForwardedWhole(_ seen: [Forwarded], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(seen.allSatisfy { $0.offLines == 0 }, "a line that is off was emitted", sourceLocation: sourceLocation)
        let last = seen.last!
        #expect(!last.expected.isEmpty, sourceLocation: sourceLocation)
        let text = { (chars: [CChar]) in String(decoding: chars.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        #expect(last.line == last.expected, "\(text(last.line)) != \(text(last.expected)) (\(seen.count) attempts)",
                sourceLocation: sourceLocation)
    }

    /// Through `_lws_log`, the check that ships (the assembly here).
    @Test(.enabled(if: LWSVersion.checkApplies, LWSVersion.skipped))
    func aLineThatIsOnIsFormattedFromEveryArgumentAndALineThatIsOffIsNot() {
        Self.expectForwardedWhole(Self.forwarded { pws_test_log_forwarding($0, $1, $2) })
    }

    /// Through the check in C, which is `_lws_log` where the assembly is not.
    @Test(.enabled(if: LWSVersion.checkApplies, LWSVersion.skipped))
    func theCheckInCDropsALineThatIsOffAndFormatsOneThatIsOnAsSnprintf() {
        Self.expectForwardedWhole(Self.forwarded { pws_test_c_check_forwarding($0, $1, $2) })
    }
}
#endif
