import PanesCore
import PanesCoreTestSupport
import Testing

@Suite struct HubRequestErrorTests {
    static let badRequests: [(JSONValue, String, String?)] = [
        (JSONValue.array([]), "invalid_message", nil as String?),
        (["id": 1], "invalid_message", "type"),
        (["type": "connect"], "invalid_message", "id"),
        (["type": "teleport", "id": 1], "unknown_type", "type"),
        (["type": "setUserInfo", "id": 1], "missing_field", "userInfo"),
        (["type": "setUserInfo", "id": 1, "userInfo": "x"], "invalid_field", "userInfo"),
        (["type": "setUserInfo", "id": 1, "userInfo": [:], "mode": "mix"], "invalid_field", "mode"),
        (["type": "lifecycle", "id": 1, "visible": "yes", "focused": true], "invalid_field", "visible"),
        (["type": "updateActivity", "id": 1, "activity": ["title": "no type"]], "missing_field", "activity.activityType"),
        (["type": "requestDestruction", "id": 1, "session": "x", "animation": "explode"], "invalid_field", "animation"),
    ]

    @Test(arguments: badRequests)
    func badRequestsGetAnErrorNamingWhatWasWrong(_ json: JSONValue, code: String, field: String?) {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let reply = harness.run(.received(scene, json)).messages(to: scene).last!
        #expect(reply["ok"] == false)
        #expect(reply["error"]?["code"] == .string(code))
        #expect(reply["error"]?["field"] == field.map(JSONValue.string))
        #expect(harness.request(scene, "ping")["ok"] == true, "the connection stays usable")
    }

    @Test func malformedJSONIsReportedWithTheParsersReason() {
        var harness = HubHarness()
        let (scene, _) = harness.connect()
        let reply = harness.run(.unreadable(scene, reason: "unexpected token at line 1, column 2")).messages(to: scene)[0]
        #expect(reply["error"]?["code"] == "malformed_json")
        #expect(reply["re"] == .null)
        #expect(reply["error"]?["number"] == 1000)
        #expect(reply["error"]?["action"] == "fix")
    }

    @Test func requestsOverTheRateLimitAreRefusedWithARetryTime() {
        var settings = Settings()
        settings.rateLimitPerSecond = 10
        settings.rateLimitBurst = 3
        var harness = HubHarness(settings: settings)
        let (scene, _) = harness.connect()
        for _ in 0..<2 { #expect(harness.request(scene, "ping")["ok"] == true) }
        let limited = harness.request(scene, "ping")
        #expect(limited["error"]?["code"] == "rate_limited")
        #expect(limited["error"]?["retryAfterMs"] == 100)
        harness.clock.advance(100)
        #expect(harness.request(scene, "ping")["ok"] == true)
    }

    @Test func everyErrorCodeHasAUniqueNumberInTheRangeOfItsAction() {
        let numbers = ErrorCode.allCases.map(\.number)
        #expect(Set(numbers).count == numbers.count)
        for code in ErrorCode.allCases {
            switch code.action {
            case .fix: #expect((1000..<2000).contains(code.number))
            case .refresh: #expect((2000..<3000).contains(code.number))
            case .giveUp: #expect((3000..<4000).contains(code.number))
            case .retry: #expect((4000..<5000).contains(code.number))
            }
        }
    }
}
