extension Hub {
    mutating func handle(_ request: WindowRequest, from sceneID: SceneID) throws(PanesError) -> JSONValue? { nil }
    mutating func dragsSceneWillEnd(_ scene: Scene) {}
    mutating func expireDrags(now: Millis) {}
}
