import PanesCore
import PanesCoreTestSupport
import Testing

/// Session secrets are kept only as hashes (issue 13, item 2): the store and the hub's memory
/// hold `SecretHasher.hash(secret)`, the client gets the secret itself once, in its `connect`
/// reply, and resuming compares hashes.
@Suite struct SessionSecretTests {
    func stored(_ harness: HubHarness, _ result: JSONValue) throws -> SceneSession {
        let id = try #require(result["session"]?["persistentIdentifier"]?.stringValue)
        return try #require(try harness.store.loadState().sessions.first { $0.id.rawValue == id })
    }

    @Test func theStoreKeepsOnlyTheHashOfTheSecretTheClientIsGiven() throws {
        var harness = HubHarness()
        let (_, result) = harness.connect()
        let secret = try #require(result["session"]?["secret"]?.stringValue)
        let session = try stored(harness, result)
        #expect(session.secretHash == SecretHasher.reversed.digest(secret))
        #expect(!session.secretHash.hex.contains(secret))
        for case .putSession(let put) in harness.effects.persisted {
            #expect(put.secretHash != SecretHash(stored: secret) && !put.secretHash.hex.contains(secret))
        }
    }

    @Test func resumingEchoesTheSecretItProvedAndTheStoredHashIsNotACredential() throws {
        var harness = HubHarness()
        let (first, result) = harness.connect()
        harness.run(.closed(first, abnormal: false))
        let secret = result["session"]!["secret"]!
        let hash = try stored(harness, result).secretHash.hex

        let (_, resumed) = harness.connect(["session": HubHarness.credentials(result)])
        #expect(resumed["session"]?["secret"] == secret)
        #expect(resumed["created"] == false)

        let withHash = harness.request(harness.open(), "connect", [
            "protocol": 1, "auth": ["name": "alice"],
            "session": ["id": result["session"]!["persistentIdentifier"]!, "secret": .string(hash)]])
        #expect(withHash.errorCode == "session_not_found")
    }

    @Test func aRestartedHubResumesFromTheStoredHash() throws {
        var harness = HubHarness()
        let (first, result) = harness.connect()
        harness.run(.closed(first, abnormal: false))
        var restarted = try harness.restarted()
        let (_, resumed) = restarted.connect(["session": HubHarness.credentials(result)])
        #expect(resumed["session"]?["persistentIdentifier"] == result["session"]?["persistentIdentifier"])
        #expect(resumed["created"] == false)
    }

    @Test func aTicketGivesTheSessionANewSecretAndTheOldOneStopsWorking() throws {
        var harness = HubHarness()
        let document: JSONValue = ["activityType": "panes.document", "title": "Plan", "targetContentIdentifier": "doc_1"]
        let (first, original) = harness.connect()
        _ = harness.request(first, "updateActivity", ["activity": document])
        harness.run(.closed(first, abnormal: false))

        // Another window asks for doc_1: the closed session showing it is reopened by ticket.
        let (other, _) = harness.connect()
        let activation = harness.request(other, "requestActivation", ["activity": document])["result"]!
        #expect(activation["session"] == original["session"]?["persistentIdentifier"])
        let (reopened, viaTicket) = harness.connect(["ticket": activation["ticket"]!])
        let newSecret = try #require(viaTicket["session"]?["secret"]?.stringValue)
        #expect(viaTicket["session"]?["persistentIdentifier"] == original["session"]?["persistentIdentifier"])
        #expect(.string(newSecret) != original["session"]?["secret"])
        #expect(try stored(harness, original).secretHash == SecretHasher.reversed.digest(newSecret))
        harness.run(.closed(reopened, abnormal: false))

        let old = harness.request(harness.open(), "connect", [
            "protocol": 1, "auth": ["name": "alice"], "session": HubHarness.credentials(original)])
        #expect(old.errorCode == "session_not_found")
        let (_, resumed) = harness.connect(["session": HubHarness.credentials(viaTicket)])
        #expect(resumed["session"]?["secret"] == .string(newSecret))
    }

    @Test func aForkedSessionGetsASecretOfItsOwn() throws {
        var harness = HubHarness()
        let (_, original) = harness.connect()
        let duplicate = harness.open()
        let probing = harness.send(duplicate, "connect", ["protocol": 1, "auth": ["name": "alice"],
                                                          "session": HubHarness.credentials(original)])
        let live = try #require(probing.probes.first)
        let forked = harness.run(.pong(live)).messages(to: duplicate).last?["result"]
        #expect(forked?["forkedFrom"] == original["session"]?["persistentIdentifier"])
        let secret = try #require(forked?["session"]?["secret"]?.stringValue)
        #expect(.string(secret) != original["session"]?["secret"])
        #expect(try stored(harness, forked!).secretHash == SecretHasher.reversed.digest(secret))
    }
}
