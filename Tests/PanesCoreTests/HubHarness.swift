import PanesCore
import Synchronization

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let value = Mutex<Millis>(1_700_000_000_000)
    var now: Millis { value.withLock { $0 } }
    func advance(_ milliseconds: Millis) { value.withLock { $0 += milliseconds } }
}

/// Drives a hub the way the runtime does, with exact time and identifiers, and reads the
/// effects back as JSON.
struct HubHarness {
    var hub: Hub
    let clock = TestClock()
    private var nextConnection: UInt64 = 0
    private var nextRequest: Int64 = 0
    /// Every effect so far, for assertions about persistence.
    var effects: [Effect] = []

    init(settings: Settings = Settings(), configurations: [SceneConfiguration] = SceneConfiguration.defaults,
         authenticator: Authenticator = .open(), stored: StoredState = StoredState()) {
        let clock = clock
        hub = Hub(settings: settings, configurations: configurations, authenticator: authenticator, stored: stored,
                  serverVersion: "test", now: { clock.now }, ids: .sequential())
    }

    mutating func open() -> ConnectionID {
        nextConnection += 1
        let connection = ConnectionID(nextConnection)
        run(.opened(connection))
        return connection
    }

    @discardableResult
    mutating func run(_ event: HubEvent) -> [Effect] {
        let produced = hub.handle(event)
        effects += produced
        return produced
    }

    /// Sends a request (adding an `id` if missing) and returns everything the hub produced.
    @discardableResult
    mutating func send(_ connection: ConnectionID, _ type: String, _ fields: [String: JSONValue] = [:]) -> [Effect] {
        nextRequest += 1
        var object = fields
        object["type"] = .string(type)
        if object["id"] == nil { object["id"] = .int(nextRequest) }
        return run(.received(connection, .object(object)))
    }

    /// Sends a request and returns its reply (`ok`, `result` / `error`).
    mutating func request(_ connection: ConnectionID, _ type: String, _ fields: [String: JSONValue] = [:]) -> JSONValue {
        let produced = send(connection, type, fields)
        guard let reply = produced.messages(to: connection).last(where: { $0["type"] == "reply" }) else {
            Issue.record("no reply to \(type)")
            return .null
        }
        return reply
    }

    /// Opens a connection and connects it as a scene; returns the connection and the result.
    mutating func connect(_ fields: [String: JSONValue] = [:], name: String = "alice") -> (ConnectionID, JSONValue) {
        let connection = open()
        var object: [String: JSONValue] = ["protocol": 1, "auth": ["name": .string(name)]]
        object.merge(fields) { _, new in new }
        let reply = request(connection, "connect", object)
        #expect(reply["ok"] == true, "connect failed: \(reply)")
        return (connection, reply["result"] ?? .null)
    }

    static func credentials(_ result: JSONValue) -> JSONValue {
        ["id": result["session"]?["persistentIdentifier"] ?? .null, "secret": result["session"]?["secret"] ?? .null]
    }
}

import Testing

extension Array where Element == Effect {
    /// Messages (replies and events) sent to one connection, in order, as JSON.
    func messages(to connection: ConnectionID) -> [JSONValue] {
        compactMap { effect in
            switch effect {
            case .send(let message, let target) where target == connection: message.json
            case .broadcast(let message, let targets) where targets.contains(connection): message.json
            default: nil
            }
        }
    }

    func events(to connection: ConnectionID, named name: String) -> [JSONValue] {
        messages(to: connection).filter { $0["type"] == .string(name) }
    }

    var persisted: [StoreCommand] {
        flatMap { effect -> [StoreCommand] in
            if case .persist(let commands) = effect { commands } else { [] }
        }
    }

    func closes(_ connection: ConnectionID) -> [CloseCode] {
        compactMap { effect in
            if case .close(let target, let code, _) = effect, target == connection { code } else { nil }
        }
    }

    var probes: [ConnectionID] {
        compactMap { effect in if case .probe(let target) = effect { target } else { nil } }
    }
}
