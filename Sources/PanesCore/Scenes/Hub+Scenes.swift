/// What request handlers ask of live scenes and their sessions, through the tables' own APIs
/// (`Scenes`, `Sessions`).
extension Hub {
    /// The session a live scene shows: it exists for as long as the scene does (a session is
    /// discarded only after its scene is closed).
    func session(of scene: Scene) -> SceneSession {
        sessions[scene.session]!
    }

    /// The scene's new size class and pointer (`updateTraits`).
    mutating func setTraits(_ traits: Traits, of sceneID: SceneID) {
        scenes.update(sceneID) { $0.traits = traits }
    }
}
