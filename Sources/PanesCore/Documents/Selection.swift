/// A cursor or selection in a text document, as scalar offsets: where it started (`anchor`)
/// and where the moving end is (`head`). `anchor == head` is a caret; `head < anchor` is a
/// selection made backwards. Wire form: `{"anchor": 3, "head": 7}`.
public struct Selection: Sendable, Hashable {
    public var anchor: Int
    public var head: Int

    public init(anchor: Int, head: Int) {
        self.anchor = anchor
        self.head = head
    }

    /// A caret at `position`.
    public init(caret position: Int) {
        self.init(anchor: position, head: position)
    }

    public var isCaret: Bool { anchor == head }

    /// The selected offsets, lowest first.
    public var range: Range<Int> { min(anchor, head)..<max(anchor, head) }

    /// Both ends moved into `0...length`, for a selection from a client whose view of the
    /// document may be out of date.
    public func clamped(toLength length: Int) -> Selection {
        Selection(anchor: min(max(anchor, 0), length), head: min(max(head, 0), length))
    }

    /// The selection after `operation`, each end moved by `TextOperation.transform(position:isOwnEdit:)`:
    /// text inserted exactly at an end stays outside a remote cursor, and ends inside deleted
    /// text collapse to where it was.
    ///
    /// - Parameter isOwnEdit: true when this selection belongs to the operation's author.
    public func transformed(by operation: TextOperation, isOwnEdit: Bool = false) -> Selection {
        Selection(anchor: operation.transform(position: anchor, isOwnEdit: isOwnEdit),
                  head: operation.transform(position: head, isOwnEdit: isOwnEdit))
    }
}

extension Selection {
    /// Reads `{"anchor": n, "head": n}`, both non-negative integers.
    ///
    /// - Parameters:
    ///   - field: the request field the selection came in, for error messages.
    ///   - documentLength: when given, both ends are clamped to it.
    /// - Throws: `.missingField` or `.invalidField` naming `field.anchor` or `field.head`.
    public init(json: JSONValue, field: String = "selection", documentLength: Int? = nil) throws(PanesError) {
        guard case .object(let object) = json else {
            throw PanesError.invalid(field, "must be an object with `anchor` and `head`, not \(json.typeName)")
        }
        let reader = FieldReader(object, prefix: field)
        let limit = Int64(TextOperation.maxComponentLength)
        let selection = Selection(anchor: Int(try reader.requiredInt("anchor", in: 0...limit)),
                                  head: Int(try reader.requiredInt("head", in: 0...limit)))
        self = documentLength.map { selection.clamped(toLength: $0) } ?? selection
    }

    public var json: JSONValue {
        ["anchor": JSONValue(anchor), "head": JSONValue(head)]
    }
}
