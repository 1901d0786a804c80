/// Drags across nodes: a drag is shared with every node when it begins, so a window on any
/// node can drop it; how it ended goes back to the node it began on, which tells its source.
/// Two windows on two nodes dropping the same drag in the same instant could both succeed:
/// each node marks it dropped as soon as it hears, but nothing orders the two drops.
extension Hub {
    mutating func shareDrag(_ drag: DragState.Drag) {
        guard isClustered else { return }
        signal(.drag([
            "id": .string(drag.id), "workspace": .string(drag.owner.workspace), "user": .string(drag.owner.user),
            "source": .string(drag.source.rawValue), "sourceSession": .string(drag.sourceSession.rawValue),
            "items": .array(drag.items.map(\.json)), "expiresAt": .int(drag.expiresAt),
        ]), to: nil)
    }

    mutating func takeRemoteDrag(_ json: JSONValue, from origin: NodeID) {
        guard let id = json["id"]?.stringValue, let workspace = json["workspace"]?.stringValue,
              let user = json["user"]?.stringValue, let source = json["source"]?.stringValue,
              let sourceSession = json["sourceSession"]?.stringValue, let expiresAt = json["expiresAt"]?.intValue,
              drags.drags[id] == nil else { return }
        var items: [DragItem] = []
        for (index, item) in (json["items"]?.arrayValue ?? []).enumerated() {
            guard let decoded = try? DragItem(json: item, field: "items[\(index)]", settings: settings) else { return }
            items.append(decoded)
        }
        var drag = DragState.Drag(id: id, owner: OwnerKey(workspace: workspace, user: user), source: SceneID(source),
                                  sourceSession: SessionID(sourceSession), items: items, expiresAt: expiresAt)
        drag.origin = origin
        drags.drags[id] = drag
        drags.deadlines.push(id, at: expiresAt)
    }

    /// Sends `dragEnded` to the drag's source: here, or through the node it began on. Every
    /// other node marks the drag ended, so a second drop anywhere is told so.
    mutating func tellSource(of drag: DragState.Drag, _ event: ServerEvent) {
        if let source = scenes[drag.source] {
            send(.event(event), to: source.connection)
        }
        guard isClustered else { return }
        signal(.dragEnded(["drag": .string(drag.id), "event": .object(event.fields)]), to: nil)
    }

    /// A drag ended on another node: marked here, and its source told if it is here.
    mutating func remoteDragEnded(_ json: JSONValue) {
        guard let id = json["drag"]?.stringValue, let drag = drags.drags[id] else { return }
        let outcome = json["event"]?["outcome"]?.stringValue
        drags.drags[id]?.phase = outcome == "dropped" ? .dropped : .cancelled
        guard drag.origin == nil, let source = scenes[drag.source], let fields = json["event"]?.objectValue else { return }
        send(.event(ServerEvent("dragEnded", fields)), to: source.connection)
    }
}
