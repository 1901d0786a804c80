/// A user's role in a workspace. Higher roles include everything lower ones may do.
public enum Role: String, Sendable, CaseIterable, Comparable {
    case viewer, editor, owner

    private var rank: Int {
        switch self {
        case .viewer: 0
        case .editor: 1
        case .owner: 2
        }
    }

    public static func < (a: Role, b: Role) -> Bool { a.rank < b.rank }
}
