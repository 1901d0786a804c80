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

    init(json: JSONValue, field: String, settings: Settings) throws(PanesError) {
        guard case .object(let object) = json else { throw .invalid(field, "must be an object") }
        let fields = FieldReader(object, prefix: field)
        guard let activity = try MessageDecoder.checkedActivity(fields, "activity", settings: settings) else {
            throw .missing("\(field).activity")
        }
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
