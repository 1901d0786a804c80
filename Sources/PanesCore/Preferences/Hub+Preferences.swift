extension Hub {
    mutating func handle(_ request: PreferenceRequest, from sceneID: SceneID) throws(PanesError) -> JSONValue? { nil }
    mutating func preferencesSceneWillEnd(_ scene: Scene) {}
}
