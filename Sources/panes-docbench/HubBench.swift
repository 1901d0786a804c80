// Edits through the hub, as the service thread handles them: E editors in one document, each
// operation made on a revision `lag` behind (so it is transformed past `lag` others), the
// store left out (it runs on its own thread). Also the heap the open document holds.
import Logging
@_spi(Testing) import PanesCore
import PanesSecurity

struct HubBench {
    var hub: Hub
    var nextConnection: UInt64 = 0
    var nextRequest: Int64 = 0
    let clock = Clock()
    var document = ""
    var record: DocumentRecord?
    var text = ""
    var editors: [ConnectionID] = []
    /// The document's length at each revision, so an operation can be made on an older one.
    var lengths: [Int] = []

    final class Clock: Sendable {
        var now: Millis { 1_700_000_000_000 }
    }

    init(retention: Int, snapshotEvery: Int) {
        var settings = Settings()
        settings.rateLimitPerSecond = 1_000_000_000
        settings.rateLimitBurst = 1_000_000_000
        settings.maxDocumentScalars = 64 << 20
        settings.operationLogRetention = retention
        settings.snapshotEvery = snapshotEvery
        var logger = Logger(label: "panes.hub")
        logger.logLevel = .error
        let clock = clock
        hub = Hub(settings: settings, secretHasher: .sha256,
                  logger: logger, now: { clock.now }, ids: .sequential())
    }

    /// Handles an event the way the runtime would, answering loads at once.
    @discardableResult
    mutating func run(_ event: HubEvent) -> [Effect] {
        var effects = hub.handle(event)
        var index = 0
        while index < effects.count {
            switch effects[index] {
            case .persist(let commands):
                for case .createDocument(let created, _) in commands { record = created }
            case .commit(let commit):
                // A store that is never slow and never conflicts: the commit comes back at once.
                effects += hub.handle(.committed(commit.id, .committed))
            case .load(.document(let id, _)):
                let stored = StoredDocument(record: record!, snapshotRevision: 0, snapshotText: text, operations: [])
                effects += hub.handle(.loaded(.document(id, stored)))
            #if !PANES_BASELINE
            case .load(.versions(let read)) where read.query == .countNamed:
                // `saveVersion` asks how many named versions there are: none, as far as the hub knows.
                effects += hub.handle(.loaded(.versions(read, .countNamed(0))))
            #endif
            default:
                break
            }
            index += 1
        }
        return effects
    }

    /// Sends a request; returns its reply and everything the hub produced.
    @discardableResult
    mutating func request(_ connection: ConnectionID, _ type: String,
                          _ fields: JSONObject) -> (reply: JSONValue, effects: [Effect]) {
        nextRequest += 1
        var object = fields
        object["type"] = .string(type)
        object["id"] = .int(nextRequest)
        let effects = run(.received(connection, .object(object)))
        for effect in effects {
            if case .send(let message, let target) = effect, target == connection, message.json["type"] == "reply" {
                return (message.json, effects)
            }
        }
        return (.null, effects)
    }

    mutating func connect(_ name: String) -> ConnectionID {
        nextConnection += 1
        let connection = ConnectionID(nextConnection)
        run(.opened(connection))
        request(connection, "connect", ["protocol": 1, "auth": ["name": .string(name)]])
        return connection
    }

    /// A document of `text`, opened by `count` editors.
    mutating func setUp(text: String, editors count: Int) {
        self.text = text
        editors = (0..<count).map { connect("editor\($0)") }
        let created = request(editors[0], "createDocument", ["title": "Bench", "text": .string(text)]).reply
        document = created["result"]?["document"]?["id"]?.stringValue ?? ""
        for editor in editors { request(editor, "openDocument", ["document": .string(document)]) }
        lengths = [text.unicodeScalars.count]
    }

    /// `count` keystrokes, round-robin over the editors, each made `lag` revisions back.
    mutating func edit(count: Int, lag: Int, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for index in 0..<count {
            let base = max(lengths.count - 1 - lag, 0)
            let length = lengths[base]
            let key = Typing.keystroke(length: length, around: lengths[0], using: &random)
            var operation = TextOperation()
            operation.retain(key.at)
            operation.insert(key.insert)
            operation.delete(key.delete)
            operation.retain(length - key.at - key.delete)
            let editor = editors[index % editors.count]
            let (reply, effects) = request(editor, "edit", [
                "document": .string(document), "revision": .int(Int64(base)), "operation": operation.json,
                "opId": .string("e\(index)"),
            ])
            // The length the server's text came to, from the store command it emitted.
            var appended: Int?
            for case .commit(let commit) in effects {
                for case .appendOperation(_, _, let length) in commit.commands { appended = length }
            }
            guard let appended, reply["result"]?["revision"]?.intValue == Int64(lengths.count) else {
                fatalError("edit \(index) failed: \(reply)")
            }
            lengths.append(appended)
        }
    }

    /// Every editor closes the document, so the hub evicts it.
    mutating func closeAll() {
        for editor in editors { request(editor, "closeDocument", ["document": .string(document)]) }
    }
}
