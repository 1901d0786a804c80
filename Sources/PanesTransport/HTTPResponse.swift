/// A small dynamic HTTP response (`/healthz`, `/metrics`); files are served by lws itself.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]

    public init(status: Int = 200, contentType: String = "text/plain; charset=utf-8", body: String) {
        self.status = status
        self.contentType = contentType
        self.body = Array(body.utf8)
    }
}
