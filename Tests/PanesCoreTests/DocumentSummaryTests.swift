import PanesCore
import PanesCoreTestSupport
import Testing

/// Summaries stay the same size however many scenes have a document open.
@Suite struct DocumentSummaryTests {
    @Test func summariesListTheFirstParticipantsAndCountThemAll() {
        var settings = Settings()
        settings.maxListedParticipants = 2
        var harness = HubHarness(settings: settings)
        let (watcher, _) = harness.connect(name: "watcher")
        _ = harness.request(watcher, "observeDocuments")
        let (first, _) = harness.connect(name: "ann")
        let id = harness.createDocument(first)
        var sizes: [Int] = []
        for name in ["ann", "ben", "cy", "dee", "eve"] {
            let (scene, _) = harness.connect(name: name)
            let effects = harness.send(scene, "openDocument", ["document": .string(id)])
            let change = effects.events(to: watcher, named: "documentsChanged").last
            #expect(change?["document"]?["participants"]?.arrayValue?.count ?? 0 <= 2)
            sizes.append(change.map { "\($0)".utf8.count } ?? 0)
        }
        let listed = harness.request(watcher, "observeDocuments")["result"]?["documents"]?.arrayValue?.first
        #expect(listed?["participantCount"] == 5)
        #expect(listed?["participants"]?.arrayValue?.map { $0["user"] } == ["ann", "ben"])
        #expect(Set(sizes.dropFirst(2)).count == 1, "each later opening costs the watcher the same bytes: \(sizes)")
    }
}
