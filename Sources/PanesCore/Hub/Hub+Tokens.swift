import Logging

/// Scenes whose credential expires (`--auth jwt`): each is closed with 4010 `token_expired`
/// when its token stops being accepted, unless a `refreshToken` replaced the token first.
/// A refresh keeps the scene, its session and everything open; the new token must be valid,
/// for the same user, and still grant the scene's workspace.
extension Hub {
    /// `refreshToken`: replaces the scene's token. Role and display name follow the new token,
    /// so a role the application lowered applies from now on.
    mutating func refreshToken(_ token: String, scene sceneID: SceneID) throws(PanesError) -> JSONValue {
        let scene = scene(sceneID)
        let identity: Authenticator.Identity
        do {
            identity = try authenticate(.token(token), workspace: scene.owner.workspace, on: scene.connection)
        } catch {
            var error = error
            if error.field == nil || error.field == "auth.token" { error.field = "token" }
            throw error
        }
        guard Identifier.equal(identity.user, scene.owner.user) else {
            throw PanesError(.forbidden, "the token is for another user than this scene's (`\(scene.owner.user)`)",
                             field: "token")
        }
        if scene.role != identity.role { rights.workspaceRoleChanged() }
        scenes.update(sceneID) { scene in
            scene.userName = identity.name
            scene.role = identity.role
            scene.tokenExpiresAt = identity.expiresAt
        }
        logger.info("tokenRefreshed", metadata: [
            "scene": "\(sceneID)", "role": "\(identity.role.rawValue)", "expiresAt": "\(identity.expiresAt.map(String.init) ?? "-")",
        ])
        return [
            "user": ["id": .string(identity.user), "name": .string(identity.name), "role": .string(identity.role.rawValue)],
            "auth": ["expiresAt": identity.expiresAt.map(JSONValue.int) ?? .null],
        ]
    }

    /// Closes the scenes whose token has expired. Runs from `tick`; costs only what expired.
    mutating func expireTokens(now: Millis) {
        for sceneID in scenes.expiredTokens(now: now) {
            guard let scene = scenes[sceneID], let expiresAt = scene.tokenExpiresAt,
                  case .scene? = connections[scene.connection]?.phase
            else { continue }
            logger.info("token expired; closing the scene", metadata: ["scene": "\(sceneID)", "expiresAt": "\(expiresAt)"])
            close(scene.connection, .tokenExpired, reason: "the token expired; get a new one and reconnect")
        }
    }
}
