package import PanesCore

/// Sessions and values that exercise every field, shared by the store tests.
package enum Fixtures {
    package static let owner = OwnerKey(workspace: "acme", user: "ada")

    /// Every field set, with text that trips naive encoders: non-BMP characters, combining
    /// marks, quotes, backslashes, newlines and an embedded NUL.
    package static func fullSession(id: String = "a1") -> SceneSession {
        SceneSession(
            id: SessionID(id), secretHash: hash(of: id), owner: OwnerKey(workspace: "Wörkspace ☂︎", user: "zoë"),
            role: .presenter, configuration: "presenter", title: "Q3 plan — 草稿 🪟", subtitle: "Compare \"Q2\" — ✍️\nlater",
            snapshot: ["text": "Première ligne\nsecond line \"quoted\" \\ back\u{0}slash"],
            userInfo: [
                "sidebar": true, "colour": "#ff8800", "emoji": "👩🏽‍💻🇯🇵", "combining": "e\u{301}",
                "nested": ["list": [1, 2.5, "three", .null, false, ["deep": ["deeper": [.int(Int64.max), .int(Int64.min)]]]]],
                "ratio": 0.1, "empty": [:], "none": .null,
            ],
            restoration: Restoration(
                activity: Activity(activityType: "panes.document", title: "Plan ✍️",
                                   userInfo: ["scroll": 120, "selection": ["from": 3, "to": 9], "ünï": "cödé"],
                                   targetContentIdentifier: "doc-42"),
                metadata: RestorationMetadata(savedAt: 1_700_000_000_123, serverVersion: "1.2.3",
                                              protocolVersion: 2, clientVersion: "web/0.9", documentGone: true)),
            createdAt: 1_699_999_999_000, lastActiveAt: 1_700_000_000_500, failedRestores: 2)
    }

    /// A session's secret hash with no two bytes alike and none symmetric, so a store that
    /// reorders or truncates them is caught; distinct for each `id`.
    package static func hash(of id: String) -> SecretHash {
        let seed = id.utf8.reduce(UInt8(0)) { $0 &* 31 &+ $1 }
        return SecretHash(bytes: (0..<32).map { UInt8($0) &* 7 &+ seed })!
    }

    /// Every optional left out and every collection empty.
    package static func bareSession(id: String = "b2") -> SceneSession {
        SceneSession(id: SessionID(id), secretHash: .unmatchable, owner: owner, role: .window, configuration: "workspace",
                     createdAt: 0, lastActiveAt: 0)
    }

    package static let workspaceDomain = PreferenceDomain(workspace: "acme", user: nil)
    package static let adaDomain = PreferenceDomain(workspace: "acme", user: "ada")
    package static let bobDomain = PreferenceDomain(workspace: "acme", user: "bob")

    // MARK: Documents

    /// A document record with a title that trips naive encoders.
    package static func document(id: String = "doc_a1", workspace: String = "acme", revision: Int64 = 0,
                         length: Int = 0) -> DocumentRecord {
        DocumentRecord(id: DocumentID(id), workspace: workspace, title: "Plan ✍️ \"Q3\" — 草稿", createdAt: 1_700_000_000_000,
                       createdBy: "zoë", modifiedAt: 1_700_000_000_000, revision: revision, length: length)
    }

    /// An operation at `revision` inserting `text` at the end of a document of `length` scalars.
    package static func appended(_ text: String, at revision: Int64, after length: Int) -> StoredOperation {
        var operation = TextOperation()
        operation.retain(length)
        operation.insert(text)
        return StoredOperation(revision: revision, operation: operation, opId: "sess-\(revision):\(revision)",
                               author: DocumentAuthor(scene: "scn_\(revision)", user: "zoë", name: "Zoë 🦊"),
                               createdAt: 1_700_000_000_000 + revision)
    }
}
