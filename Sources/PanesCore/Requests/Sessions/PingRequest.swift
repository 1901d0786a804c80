/// `ping`: a round trip that touches no state. Its reply is never held behind a commit, so a
/// slow disk cannot make a live client look dead.
struct PingRequest: Request {
    static let type = "ping"

    init(_ fields: FieldReader, settings: Settings) throws(PanesError) {}

    func handle(_ hub: inout Hub, _ context: RequestContext) throws(PanesError) -> JSONValue? {
        hub.sendUnheld(.reply(context.id, result: ["now": .int(hub.now())]), to: context.connection)
        return nil
    }
}
