import PanesCore
import Testing

/// Folding a document's changes into one event (`webhookCoalesceMs`): pure, so every edge is
/// exact here; the outboxes apply it in their claim transactions.
@Suite struct WebhookCoalescingTests {
    static func delivery(_ seq: Int64, _ type: WebhookEventType = .documentChanged, revision: Int64? = nil, at time: Millis,
                         attempts: Int = 0, changes: Int = 1) -> WebhookDelivery {
        let event = WebhookEvent(id: "evt_\(seq)", type: type, workspace: "team", orderingKey: "doc",
                                 revisions: revision.map { $0...$0 } ?? (type == .documentChanged ? seq...seq : nil),
                                 data: ["seq": .int(seq)], createdAt: time)
        return WebhookDelivery(seq: seq, endpoint: "crm", event: event, attempts: attempts, nextAttemptAt: time, changes: changes)
    }

    @Test func changesWithinTheWindowFoldIntoTheFirstWithTheirRangeAndTheLatestFields() {
        let head = Self.delivery(1, at: 1_000)
        let following = [Self.delivery(2, at: 1_100), Self.delivery(3, at: 1_500), Self.delivery(4, at: 1_501)]
        let (merged, absorbed) = WebhookCoalescing.fold(head, following, coalesceMs: 500)
        #expect(absorbed == [2, 3], "1 500 is within 500 ms of 1 000; 1 501 is not")
        #expect(merged.event.revisions == 1...3)
        #expect(merged.changes == 3)
        #expect(merged.event.id == "evt_1")
        #expect(merged.event.createdAt == 1_000, "the event happened when its first change did")
        #expect(merged.event.data == ["seq": 3])
    }

    @Test func anEventOfAnotherTypeInBetweenStopsTheRun() {
        let head = Self.delivery(1, at: 0)
        let following = [Self.delivery(2, at: 10), Self.delivery(3, .documentRenamed, at: 20), Self.delivery(4, at: 30)]
        let (merged, absorbed) = WebhookCoalescing.fold(head, following, coalesceMs: 1_000)
        #expect(absorbed == [2])
        #expect(merged.event.revisions == 1...2)
    }

    @Test func nothingFoldsIntoAnAttemptedDeliveryOrWithTheWindowOff() {
        let following = [Self.delivery(2, at: 10)]
        #expect(WebhookCoalescing.fold(Self.delivery(1, at: 0, attempts: 1), following, coalesceMs: 1_000).absorbed.isEmpty,
                "its id already went out with its range")
        #expect(WebhookCoalescing.fold(Self.delivery(1, at: 0), following, coalesceMs: 0).absorbed.isEmpty)
        #expect(WebhookCoalescing.fold(Self.delivery(1, .documentRenamed, at: 0), following, coalesceMs: 1_000).absorbed.isEmpty,
                "only document changes fold")
        #expect(WebhookCoalescing.fold(Self.delivery(1, at: 0), [Self.delivery(2, at: 10, attempts: 1)], coalesceMs: 1_000)
            .absorbed.isEmpty, "nor an attempted one into another")
    }

    @Test func foldedDeliveriesAddTheirChanges() {
        let (merged, absorbed) = WebhookCoalescing.fold(Self.delivery(1, at: 0, changes: 2),
                                                        [Self.delivery(3, revision: 3, at: 5, changes: 4)], coalesceMs: 100)
        #expect(absorbed == [3])
        #expect(merged.changes == 6)
        #expect(merged.event.revisions == 1...3)
    }

    @Test func theBodyCarriesTypeTimestampWorkspaceAndRange() {
        var delivery = Self.delivery(1, at: 1_764_176_400_123)
        delivery.event.revisions = 4...9
        delivery.changes = 6
        let payload = delivery.payload
        #expect(payload["type"] == "document.changed")
        #expect(payload["timestamp"] == "2025-11-26T17:00:00.123Z")
        #expect(payload["data"]?["workspace"] == "team")
        #expect(payload["data"]?["revisions"] == ["from": 4, "to": 9])
        #expect(payload["data"]?["changes"] == 6)
        #expect(payload["data"]?["seq"] == 1, "the event's own fields")
    }

    @Test(arguments: [(Millis(0), "1970-01-01T00:00:00.000Z"), (951_782_400_000, "2000-02-29T00:00:00.000Z"),
                      (4_107_542_399_999, "2100-02-28T23:59:59.999Z"), (-1, "1969-12-31T23:59:59.999Z")])
    func timestampsAreISO8601InUTC(_ millis: Millis, _ text: String) {
        var delivery = Self.delivery(1, .sessionCreated, at: millis)
        delivery.event.createdAt = millis
        #expect(delivery.payload["timestamp"] == .string(text))
    }
}
