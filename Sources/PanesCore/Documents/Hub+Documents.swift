extension Hub {
    mutating func handle(_ request: DocumentRequest, from sceneID: SceneID) throws(PanesError) -> JSONValue? { nil }
    mutating func documentsSceneWillEnd(_ scene: Scene) {}
    mutating func documentsTick(now: Millis) {}
    mutating func loaded(_ result: LoadResult) {}
}
