/// What the backend may do through the HTTP API: the workspaces it acts in and whether it may
/// write. An API key has one (`APIKey`); so has a JWT with the service role (its
/// `panes.service` claim, `VerifiedToken.service`). Inside those workspaces the backend is not
/// held to per-document rights: it acts as a workspace owner would (PROTOCOL.md, "The HTTP
/// API").
public struct APIScope: Sendable, Equatable {
    /// Workspaces it may act in; `["*"]` for every workspace.
    public var workspaces: [String]
    public var access: APIKey.Access

    public init(workspaces: [String], access: APIKey.Access) {
        self.workspaces = workspaces
        self.access = access
    }

    /// Whether it may act in the workspace, compared by bytes.
    public func covers(_ workspace: String) -> Bool {
        workspaces.contains { $0 == "*" || Identifier.equal($0, workspace) }
    }

    /// Reads `workspaces` (a non-empty list of names or `"*"`) and `access` (`read`, the
    /// default, or `write`) from a keys-file entry or a token's `panes.service` claim.
    public init(_ fields: FieldReader) throws(PanesError) {
        let list = try fields.array("workspaces") ?? []
        guard !list.isEmpty else { throw .invalid(fields.path("workspaces"), "must name at least one workspace (or \"*\")") }
        workspaces = try list.enumerated().map { index, value throws(PanesError) in
            guard let name = value.stringValue, name == "*" || MessageDecoder.isName(name) else {
                throw .invalid("\(fields.path("workspaces"))[\(index)]", "must be a workspace name or \"*\"")
            }
            return name
        }
        access = try fields.choice("access", APIKey.Access.self) ?? .read
    }
}
