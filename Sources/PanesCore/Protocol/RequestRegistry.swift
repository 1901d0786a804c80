/// Every request type the server handles: the one table a new request is added to.
enum RequestRegistry {
    static let all: [any Request.Type] = [
        // Scenes and sessions
        ConnectRequest.self, LifecycleRequest.self, UpdateTraitsRequest.self, UpdateActivityRequest.self,
        SetUserInfoRequest.self, ListSessionsRequest.self, DestructionRequest.self, PingRequest.self,
        RefreshTokenRequest.self,
        // Preferences
        ObserveRequest.self, UnobserveRequest.self, SetPreferenceRequest.self, RemovePreferenceRequest.self,
        // Windows, drag and drop
        ActivationRequest.self, RefreshRequest.self, BeginDragRequest.self, DropRequest.self, CancelDragRequest.self,
        // Documents
        ObserveDocumentsRequest.self, UnobserveDocumentsRequest.self, CreateDocumentRequest.self,
        RenameDocumentRequest.self, DeleteDocumentRequest.self, OpenDocumentRequest.self, CloseDocumentRequest.self,
        EditRequest.self, SetPresenceRequest.self,
        // Versions
        SaveVersionRequest.self, ListVersionsRequest.self, ReadVersionRequest.self, CompareVersionsRequest.self,
        RestoreVersionRequest.self,
        // Rights per document
        ShareDocumentRequest.self, UnshareDocumentRequest.self, CreateDocumentLinkRequest.self,
        RevokeDocumentLinkRequest.self, ListDocumentSharesRequest.self,
    ]

    /// Each type's position in `all`, by its wire name: a decoded request carries it
    /// (`ClientRequest.typeIndex`), so what counts and times requests by type indexes an array
    /// instead of hashing the name again (issue 27).
    static let indexes: [String: Int] = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($1.type, $0) })
}

extension Hub {
    /// The wire names of every request, for the schema and documentation tests; a request's
    /// `typeIndex` is its type's position here.
    public static let requestTypes: [String] = RequestRegistry.all.map { $0.type }

    /// The requests whose `idempotencyKey` keeps their outcome for a retry.
    public static var keyedRequestTypes: [String] { RequestRegistry.all.filter { $0.idempotency != .none }.map { $0.type } }
}
