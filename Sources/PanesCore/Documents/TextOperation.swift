/// An edit to a text document: a run of components that walks the whole document once.
///
/// A text document is a sequence of Unicode scalar values, and every position and length here
/// counts scalars: not UTF-16 units, not grapheme clusters, not bytes. An emoji such as 👍 is one
/// position, and `e` followed by a combining acute accent is two. The browser side
/// (`web/lib/ot.js`) counts code points, which is the same thing.
///
/// On the wire an operation is a JSON array: a positive integer `n` retains `n` scalars, a
/// non-empty string inserts it, a negative integer `-n` deletes `n` scalars, e.g.
/// `[5, "hi", -3, 10]`. It must span the document it applies to: `baseLength` (retains plus
/// deletes) equals the document's length, and `targetLength` (retains plus inserted scalars) is
/// the length afterwards.
///
/// The builders keep the operation canonical, as ot.js does, so equal edits compare equal: no
/// empty components, neighbours of the same kind merged, and an insert next to a delete always
/// placed before it.
public struct TextOperation: Sendable, Equatable {
    /// One step of an operation.
    public enum Component: Sendable, Equatable {
        /// Keep this many scalars.
        case retain(Int)
        /// Insert this text.
        case insert(String)
        /// Remove this many scalars.
        case delete(Int)
    }

    /// The components, canonical and never empty ones.
    public private(set) var components: [Component] = []
    /// The length, in scalars, of the document this operation applies to.
    public private(set) var baseLength = 0
    /// The length, in scalars, of the document this operation produces.
    public private(set) var targetLength = 0

    /// The operation with no components: the identity on the empty document.
    public init() {}

    /// An operation built from components in any form: empty ones are dropped and the rest are
    /// merged and reordered into canonical form.
    public init(_ components: some Sequence<Component>) {
        for component in components {
            switch component {
            case .retain(let count): retain(count)
            case .insert(let text): insert(text)
            case .delete(let count): delete(count)
            }
        }
    }

    /// True when applying the operation changes nothing.
    public var isNoop: Bool {
        components.allSatisfy { if case .retain = $0 { true } else { false } }
    }

    /// Keeps the next `count` scalars.
    public mutating func retain(_ count: Int) {
        precondition(count >= 0, "retain count must not be negative")
        guard count > 0 else { return }
        baseLength += count
        targetLength += count
        if case .retain(let last)? = components.last {
            components[components.count - 1] = .retain(last + count)
        } else {
            components.append(.retain(count))
        }
    }

    /// Inserts `text` at the current position.
    public mutating func insert(_ text: String) {
        insert(Substring(text), scalarCount: text.unicodeScalars.count)
    }

    /// Removes the next `count` scalars.
    public mutating func delete(_ count: Int) {
        precondition(count >= 0, "delete count must not be negative")
        guard count > 0 else { return }
        baseLength += count
        if case .delete(let last)? = components.last {
            components[components.count - 1] = .delete(last + count)
        } else {
            components.append(.delete(count))
        }
    }

    /// The insert builder for callers that already know the scalar count, so transform and
    /// compose never count a piece twice.
    mutating func insert(_ text: Substring, scalarCount: Int) {
        guard scalarCount > 0 else { return }
        targetLength += scalarCount
        // Canonical order puts an insert before a neighbouring delete: "delete then insert" and
        // "insert then delete" do the same thing, and one spelling keeps operations comparable.
        var at = components.count
        if case .delete? = components.last { at -= 1 }
        if at > 0, case .insert(var existing) = components[at - 1] {
            // Take the string out of the array first so appending does not copy it.
            components[at - 1] = .retain(0)
            existing += text
            components[at - 1] = .insert(existing)
        } else {
            components.insert(.insert(String(text)), at: at)
        }
    }
}

extension TextOperation.Component {
    /// Exact equality: inserts are equal when they hold the same scalars. Swift's `String ==`
    /// would call a precomposed "é" equal to "e" plus a combining accent, but they are different
    /// edits with different lengths, so operations compare by scalars.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.retain(let a), .retain(let b)), (.delete(let a), .delete(let b)): a == b
        case (.insert(let a), .insert(let b)): a.unicodeScalars.elementsEqual(b.unicodeScalars)
        default: false
        }
    }

    /// How many scalars the component retains, inserts or deletes. Counts an insert's scalars,
    /// so it is linear in the inserted text.
    public var length: Int {
        switch self {
        case .retain(let count), .delete(let count): count
        case .insert(let text): text.unicodeScalars.count
        }
    }
}

extension TextOperation: CustomStringConvertible {
    /// The wire form, e.g. `[5, "hi", -3, 10]`, for test failures and logs.
    public var description: String {
        let parts = components.map { component -> String in
            switch component {
            case .retain(let count): "\(count)"
            case .insert(let text): text.debugDescription
            case .delete(let count): "-\(count)"
            }
        }
        return "[" + parts.joined(separator: ", ") + "]"
    }
}
