import Foundation
import PanesCore
import PanesServerTestSupport
import PanesTestSupport
import Testing

/// The real binary's `/api` path: requests reach the runtime whole and get the protocol's error
/// objects with a fitting status (a path no route has gets 404; the routes are tested in
/// Tests/api), the
/// transport's limits answer with the setting that refused them, and WebSocket scenes on the
/// same port go on.
@Suite struct HTTPAPIEndToEndTests {
    static func error(_ response: HTTPClient.Response) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return try #require(object?["error"] as? [String: Any])
    }

    @Test func anAPIRequestGetsTheProtocolsErrorObjectWithAFittingStatus() throws {
        let server = try ServerProcess(config: ["settings": ["maxHTTPBodyBytes": 2_048]])
        let client = try HTTPClient(port: server.port)
        let missing = try client.send("POST", "/api/v1/documents", headers: [("Content-Type", "application/json")],
                                      body: Array("{\"title\":\"x\"}".utf8))
        #expect(missing.status == 404)
        #expect(missing.headers["content-type"] == "application/json")
        let error = try Self.error(missing)
        #expect(error["code"] as? String == "unknown_type")
        #expect(error["action"] as? String == "fix")
        #expect((error["message"] as? String)?.contains("POST /api/v1/documents") == true)
        // Kept alive: the next request on the same connection.
        #expect(try client.send("GET", "/api/v1/documents/d1").status == 404)

        let large = try HTTPClient(port: server.port)
        large.write(HTTPClient.request("PUT", "/api/v1/documents/d1", port: server.port, contentLength: .some(4_096)))
        let refused = try large.readResponse()
        #expect(refused.status == 413)
        #expect(try Self.error(refused)["code"] as? String == "too_large")
        #expect((try Self.error(refused)["message"] as? String)?.contains("maxHTTPBodyBytes") == true)

        let chunked = try HTTPClient(port: server.port)
        chunked.write(Array("POST /api/v1/x HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".utf8))
        #expect(try chunked.readResponse().status == 411)

        let foreign = try HTTPClient(port: server.port).send("GET", "/api/v1/x", headers: [("Origin", "http://evil.example")])
        #expect(foreign.status == 403)
        #expect(try Self.error(foreign)["code"] as? String == "forbidden")

        // The rest of HTTP and the WebSocket side are as they were.
        #expect(try server.http("/healthz") == (200, "ok\n"))
        let scene = try server.client()
        #expect(scene.connect()["session"] != nil)
    }
}
