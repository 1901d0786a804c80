/// Walks an operation's components, handing out pieces of at most a given length, so compose
/// and transform can zip two operations together the way ot.js does.
///
/// Insert text is kept as a `Substring` with its scalar count, and splitting it only walks the
/// part taken, so a whole walk is linear in the operation's size.
struct ComponentReader {
    /// A component, or what is left of one.
    enum Piece {
        case retain(Int)
        case insert(Substring, scalarCount: Int)
        case delete(Int)

        var length: Int {
            switch self {
            case .retain(let count), .delete(let count), .insert(_, let count): count
            }
        }
    }

    private let components: [TextOperation.Component]
    private var next = 0
    /// The piece at the front, or nil when the operation is used up.
    private(set) var head: Piece?

    init(_ operation: TextOperation) {
        components = operation.components
        advance()
    }

    /// Takes the whole head piece.
    mutating func take() -> Piece? {
        defer { advance() }
        return head
    }

    /// Takes the first `count` scalars of the head piece; `count` is at most its length.
    mutating func take(_ count: Int) -> Piece {
        guard let piece = head else { preconditionFailure("take(\(count)) past the end of an operation") }
        precondition(count > 0 && count <= piece.length, "take(\(count)) of a piece of \(piece.length)")
        guard count < piece.length else {
            advance()
            return piece
        }
        switch piece {
        case .retain(let total):
            head = .retain(total - count)
            return .retain(count)
        case .delete(let total):
            head = .delete(total - count)
            return .delete(count)
        case .insert(let text, let total):
            let scalars = text.unicodeScalars
            let split = scalars.index(scalars.startIndex, offsetBy: count)
            head = .insert(Substring(scalars[split...]), scalarCount: total - count)
            return .insert(Substring(scalars[..<split]), scalarCount: count)
        }
    }

    private mutating func advance() {
        guard next < components.count else {
            head = nil
            return
        }
        head = switch components[next] {
        case .retain(let count): .retain(count)
        case .delete(let count): .delete(count)
        case .insert(let text): .insert(Substring(text), scalarCount: text.unicodeScalars.count)
        }
        next += 1
    }
}

extension TextOperation {
    /// Appends a piece, keeping canonical form.
    mutating func append(_ piece: ComponentReader.Piece) {
        switch piece {
        case .retain(let count): retain(count)
        case .delete(let count): delete(count)
        case .insert(let text, let count): insert(text, scalarCount: count)
        }
    }
}
