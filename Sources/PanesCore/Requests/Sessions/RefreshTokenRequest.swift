/// `refreshToken`: replaces the scene's token before it expires, without reconnecting
/// (`Hub+Tokens.swift`).
struct RefreshTokenRequest: Request {
    static let type = "refreshToken"
    let token: String

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {
        guard let token = try fields.token("token", settings: settings) else { throw .missing("token") }
        self.token = token
    }

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        try hub.refreshToken(token, scene: context.scene)
    }
}
