/// A message from one node to another (or to all), for what only the node holding a session
/// can do: answer whether its scene is alive, bring its window forward, take a refresh in.
/// Signals travel with the store's writes (PostgreSQL: NOTIFY in the same transaction), so a
/// signal is never seen before the writes made before it.
public struct NodeSignal: Sendable, Equatable {
    public var from: NodeID
    /// Nil: every node.
    public var to: NodeID?
    public var kind: Kind

    public enum Kind: Sendable, Equatable {
        /// Is the session's scene alive? Answered with `live` if it answers a ping; if it does
        /// not, the holder closes it and lets the session go.
        case probe(SessionID)
        case live(SessionID)
        /// The answer to a probe from a node holding no scene of the session (the claim outlived
        /// its scene: its release could not be written): the asker may claim it.
        case notLive(SessionID)
        /// Bring the session's window forward with this activity (`activate` event).
        case activate(SessionID, activity: JSONValue, requestedBy: JSONValue)
        /// Take in a refresh made on another node (`requestSceneSessionRefresh` fields).
        case refresh(SessionID, fields: JSONValue)
        /// A window ticket, for whichever node the new window's connect reaches.
        case ticket(JSONValue)
        case ticketUsed(String)
        /// A drag began (its id, owner, source, items, expiry), so a window on any node can
        /// drop it.
        case drag(JSONValue)
        /// A drag ended on some node (dropped or cancelled): `{"drag", "event"}`, the
        /// `dragEnded` event for its source, which the drag's origin node delivers.
        case dragEnded(JSONValue)
        /// A scene's presence in a document changed (a `presence` event's fields, `left` true
        /// when it left), for the document's scenes on other nodes.
        case presence(JSONValue)
        /// The sender's scenes' presence as it is now, whole, for a node that asked
        /// (`scenesWanted`) or for every node (after the sender's listener was back), in as few
        /// signals as stay under `maxInlineBytes`: `{"retold": [presence…], "part", "parts"}`.
        /// A receiver that has every part drops what it held of the sender's and was not told
        /// again (`Hub+RemotePresence.swift`). On the wire it is a `presence` whose value has
        /// `retold`. Nodes of different builds never share a database (docs/operating.md: stop
        /// every node of the older build before one of the newer starts); should an older node
        /// stray in, it reads a `presence` without `document` and ignores it, where an unknown
        /// signal would read as `resubscribed` and make it ask, and be answered, over and over.
        /// It would not show the newer nodes' cursors after its own blips, which is one reason
        /// mixed builds are not supported.
        case presenceRetold(JSONValue)
        /// The sending node's people in a document (`{"document", "people": [PersonTally]}`),
        /// whole each time, for the document's summaries on other nodes.
        case people(JSONValue)
        /// The sending node's live scenes of one user (`RemoteScene.json`), for switchers on
        /// other nodes; the whole list each time, so the last one received is the truth.
        case scenes(JSONValue)
        /// Asks every node for its live scenes, its people and its scenes' presence (`scenes`,
        /// `people`, `presenceRetold`, sent back to the asker alone).
        case scenesWanted
        /// A drop onto a scene live on the receiving node, whose drag's ending the sender has
        /// stored: `{"drag", "scene", "workspace", "user", "event", "ended", "record"?,
        /// "returnEnded", "returnRecord"?}` (the dropper's user, the `itemsDropped` event's
        /// fields, the source's `dragEnded` fields, and the drop's key record for a keyed drop;
        /// then the same two for the items going back to the dropper). The receiver settles it
        /// in the store, delivers it or gives it back (`Hub+RemoteDrops.swift`), and answers
        /// `dropReceived`.
        case dropOffered(JSONValue)
        /// The answer to `dropOffered`, to its sender: `{"drag", "scene", "delivered",
        /// "returned"?}` (`returned`: settled there as given back to the dropper).
        case dropReceived(JSONValue)
        /// A drop delivered to a scene live on the receiving node, unconfirmed: the
        /// `itemsDropped` event's fields, for that scene. Only nodes from before `dropOffered`
        /// (issue 27) send it; it is still read and delivered so that during a rolling upgrade
        /// a drop made on a node of that release onto a window here is not lost. Never sent:
        /// remove it once no node of the release before `dropOffered` can be in a cluster
        /// (the release after the one that brings `dropOffered`).
        case itemsDropped(scene: String, event: JSONValue)
    }

    /// The largest signal a store carries in its notification (PostgreSQL: inside a NOTIFY
    /// payload, which must stay under 8000 bytes and is shared with other notices); a larger
    /// one is stored and read back by every listener with a query of its own. What a node
    /// can split (`presenceRetold`) is split to stay under it.
    public static let maxInlineBytes = 4_000

    public init(from: NodeID, to: NodeID?, kind: Kind) {
        self.from = from
        self.to = to
        self.kind = kind
    }

    /// Whether the sender tells this again, whole, to any node that asks (`scenesWanted`): a
    /// broadcast of its live scenes of one user or of its people in one document. Every node
    /// asks once its lease is registered (at start, after a rejoin, after its listening
    /// connection was back), so a store may leave such a signal unwritten while no other node's
    /// lease runs: a node registered after that asks, and is told what is true then.
    public var isRetoldWhenAsked: Bool {
        guard to == nil else { return false }
        switch kind {
        case .scenes, .people: return true
        default: return false
        }
    }

    /// The wire form between nodes.
    public var json: JSONValue {
        var object: JSONObject = ["from": .string(from.rawValue)]
        if let to { object["to"] = .string(to.rawValue) }
        switch kind {
        case .probe(let session): object["probe"] = .string(session.rawValue)
        case .live(let session): object["live"] = .string(session.rawValue)
        case .notLive(let session): object["notLive"] = .string(session.rawValue)
        case .activate(let session, let activity, let requestedBy):
            object["activate"] = ["session": .string(session.rawValue), "activity": activity, "requestedBy": requestedBy]
        case .refresh(let session, let fields):
            object["refresh"] = ["session": .string(session.rawValue), "fields": fields]
        case .ticket(let ticket): object["ticket"] = ticket
        case .ticketUsed(let id): object["ticketUsed"] = .string(id)
        case .presence(let presence), .presenceRetold(let presence): object["presence"] = presence
        case .people(let people): object["people"] = people
        case .drag(let drag): object["drag"] = drag
        case .dragEnded(let ended): object["dragEnded"] = ended
        case .scenes(let scenes): object["scenes"] = scenes
        case .scenesWanted: object["scenesWanted"] = true
        case .dropOffered(let offer): object["dropOffered"] = offer
        case .dropReceived(let answer): object["dropReceived"] = answer
        case .itemsDropped(let scene, let event): object["itemsDropped"] = ["scene": .string(scene), "event": event]
        }
        return .object(object)
    }

    public init?(json: JSONValue) {
        guard let from = json["from"]?.stringValue else { return nil }
        self.from = NodeID(from)
        to = json["to"]?.stringValue.map(NodeID.init)
        if let session = json["probe"]?.stringValue {
            kind = .probe(SessionID(session))
        } else if let session = json["live"]?.stringValue {
            kind = .live(SessionID(session))
        } else if let session = json["notLive"]?.stringValue {
            kind = .notLive(SessionID(session))
        } else if let activate = json["activate"], let session = activate["session"]?.stringValue {
            kind = .activate(SessionID(session), activity: activate["activity"] ?? .null,
                             requestedBy: activate["requestedBy"] ?? .null)
        } else if let refresh = json["refresh"], let session = refresh["session"]?.stringValue {
            kind = .refresh(SessionID(session), fields: refresh["fields"] ?? .null)
        } else if let ticket = json["ticket"] {
            kind = .ticket(ticket)
        } else if let id = json["ticketUsed"]?.stringValue {
            kind = .ticketUsed(id)
        } else if let presence = json["presence"] {
            kind = presence["retold"] != nil ? .presenceRetold(presence) : .presence(presence)
        } else if let people = json["people"] {
            kind = .people(people)
        } else if let drag = json["drag"] {
            kind = .drag(drag)
        } else if let ended = json["dragEnded"] {
            kind = .dragEnded(ended)
        } else if let scenes = json["scenes"] {
            kind = .scenes(scenes)
        } else if json["scenesWanted"] == true {
            kind = .scenesWanted
        } else if let offer = json["dropOffered"] {
            kind = .dropOffered(offer)
        } else if let answer = json["dropReceived"] {
            kind = .dropReceived(answer)
        } else if let dropped = json["itemsDropped"], let scene = dropped["scene"]?.stringValue {
            kind = .itemsDropped(scene: scene, event: dropped["event"] ?? .null)
        } else {
            return nil
        }
    }
}
