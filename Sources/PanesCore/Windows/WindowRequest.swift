/// Requests that make, bring forward and refresh windows, and drags between them.
/// See PROTOCOL.md, "Windows" and "Drag and drop".
public enum WindowRequest: Sendable, Equatable {
    case requestActivation(Activity, session: SessionID?)
    case requestRefresh(SessionID, title: String?, snapshot: JSONValue?, activity: Activity?)
    case beginDrag([DragItem])
    case drop(drag: String, target: DropTarget, operation: DragOperation, scene: SceneID?)
    case cancelDrag(String)

    public var type: String {
        switch self {
        case .requestActivation: "requestActivation"
        case .requestRefresh: "requestRefresh"
        case .beginDrag: "beginDrag"
        case .drop: "drop"
        case .cancelDrag: "cancelDrag"
        }
    }

    static func decode(type: String, _ fields: FieldReader, _ decoder: MessageDecoder) throws(PanesError) -> WindowRequest? {
        switch type {
        case "requestActivation":
            guard let activity = try decoder.checkedActivity(fields, "activity") else { throw .missing("activity") }
            return .requestActivation(activity, session: try fields.string("session", maxLength: 64).map(SessionID.init))
        case "requestRefresh":
            let session = SessionID(try fields.requiredString("session", maxLength: 64))
            let title = try fields.string("title", maxLength: 256)
            var snapshot: JSONValue?
            if let value = fields.value("snapshot") {
                guard case .object(let object) = value, object.count == 1,
                      object["text"]?.stringValue != nil || object["image"]?.stringValue?.hasPrefix("data:image/") == true
                else {
                    throw .invalid("snapshot", "must be {\"text\": string} or {\"image\": \"data:image/…\"}")
                }
                let size = value.encodedSize
                guard size <= decoder.settings.maxSnapshotBytes else {
                    throw .tooLarge("snapshot", size: size, limit: decoder.settings.maxSnapshotBytes, setting: "maxSnapshotBytes")
                }
                snapshot = value
            }
            return .requestRefresh(session, title: title, snapshot: snapshot, activity: try decoder.checkedActivity(fields, "activity"))
        case "beginDrag":
            guard let list = try fields.array("items") else { throw .missing("items") }
            guard !list.isEmpty else { throw .invalid("items", "must hold at least one item") }
            guard list.count <= decoder.settings.maxDragItems else {
                throw PanesError(.tooMany, "a drag carries at most \(decoder.settings.maxDragItems) items (setting `maxDragItems`)",
                                 field: "items")
            }
            return .beginDrag(try list.enumerated().map { index, entry throws(PanesError) in
                try DragItem(json: entry, field: "items[\(index)]", decoder: decoder)
            })
        case "drop":
            let drag = try fields.requiredString("drag", maxLength: 64)
            guard let target = try fields.choice("target", DropTarget.self) else { throw .missing("target") }
            let operation = try fields.choice("operation", DragOperation.self) ?? .copy
            return .drop(drag: drag, target: target, operation: operation,
                         scene: try fields.string("scene", maxLength: 64).map(SceneID.init))
        case "cancelDrag":
            return .cancelDrag(try fields.requiredString("drag", maxLength: 64))
        default:
            return nil
        }
    }
}

public enum DragOperation: String, Sendable, CaseIterable {
    case copy, move
}

public enum DropTarget: String, Sendable, CaseIterable {
    /// Onto a scene: the items are delivered to it.
    case scene
    /// Onto the "new window" zone, or outside every window: a new scene per item.
    case newWindow
}

/// One dragged thing: an activity and the operations it allows.
public struct DragItem: Sendable, Equatable {
    public var activity: Activity
    public var operations: Set<DragOperation>

    init(json: JSONValue, field: String, decoder: MessageDecoder) throws(PanesError) {
        guard case .object(let object) = json else { throw .invalid(field, "must be an object") }
        let fields = FieldReader(object, prefix: field)
        guard let activity = try decoder.checkedActivity(fields, "activity") else { throw .missing("\(field).activity") }
        self.activity = activity
        var operations: Set<DragOperation> = [.copy]
        if let list = try fields.array("operations") {
            operations = []
            for (index, entry) in list.enumerated() {
                guard let operation = entry.stringValue.flatMap(DragOperation.init(rawValue:)) else {
                    throw .invalid("\(field).operations[\(index)]", "must be `copy` or `move`")
                }
                operations.insert(operation)
            }
            guard !operations.isEmpty else { throw .invalid("\(field).operations", "must allow at least one operation") }
        }
        self.operations = operations
    }

    public var json: JSONValue {
        ["activity": activity.json, "operations": .array(DragOperation.allCases.filter(operations.contains).map { .string($0.rawValue) })]
    }
}
