import PanesCore
import Testing

/// HTTP API requests read into routes: writes become the protocol's own requests, reads their
/// own operations, and anything else a clear error.
@Suite struct APIRouteTests {
    static func route(_ method: String, _ path: String, query: [(name: String, value: String)] = [],
                      body: JSONValue? = nil, key: String? = nil) throws(PanesError) -> APIRoute {
        try APIRoute(method: method, path: "/api/v1/workspaces/acme" + path, query: query, body: body,
                     idempotencyKey: key, newOpId: "fresh")
    }

    @Test func writesBecomeTheProtocolsRequestsWithTheKey() throws {
        let create = try Self.route("POST", "/documents", body: ["title": "Plan"], key: "k1")
        #expect(create.writes && create.successStatus == 201 && create.workspace == "acme")
        #expect(create.operation == .request(["title": "Plan", "type": "createDocument", "id": 1, "idempotencyKey": "k1"]))
        let edit = try Self.route("POST", "/documents/doc_1/operations", body: ["revision": 0, "operation": ["x"]], key: "k2")
        guard case .request(let json) = edit.operation else { Issue.record("not a request"); return }
        #expect(json["type"] == "edit" && json["document"] == "doc_1" && json["opId"] == "http.k2")
        let unkeyed = try Self.route("POST", "/documents/doc_1/operations", body: ["revision": 0, "operation": ["x"]])
        guard case .request(let fresh) = unkeyed.operation else { Issue.record("not a request"); return }
        #expect(fresh["opId"] == "fresh")
        let destroy = try Self.route("DELETE", "/users/bob/sessions/s1", query: [("animation", "decline")])
        #expect(destroy.user == "bob" && destroy.writes)
        guard case .request(let json2) = destroy.operation else { Issue.record("not a request"); return }
        #expect(json2["type"] == "requestDestruction" && json2["animation"] == "decline")
        let preference = try Self.route("PUT", "/preferences/editor.size", query: [("user", "bob")], body: ["value": 3])
        guard case .request(let json3) = preference.operation else { Issue.record("not a request"); return }
        #expect(json3["domain"] == "user" && json3["keyPath"] == "editor.size" && preference.user == "bob")
    }

    @Test func readsAreTheirOwnOperations() throws {
        #expect(try !Self.route("GET", "/documents").writes)
        #expect(try Self.route("GET", "/documents/doc_1", query: [("revision", "4")]).operation
                    == .readDocument(DocumentID("doc_1"), revision: 4))
        #expect(try Self.route("GET", "/preferences").operation == .readPreferences)
    }

    @Test func whatNoRouteHasIsAClearError() {
        #expect(throws: PanesError.self) { try Self.route("PUT", "/documents") }
        #expect(throws: PanesError.self) { try Self.route("GET", "/documents/doc_1", query: [("revision", "-1")]) }
        #expect(throws: PanesError.self) { try Self.route("POST", "/documents", body: ["title": "x", "type": "deleteDocument"]) }
        #expect(throws: PanesError.self) { try Self.route("POST", "/documents", body: [1]) }
        #expect(throws: PanesError.self) {
            try APIRoute(method: "GET", path: "/api/v2/x", query: [], body: nil, idempotencyKey: nil, newOpId: "")
        }
        do {
            _ = try APIRoute(method: "GET", path: "/api/v1/workspaces/a b/documents", query: [], body: nil,
                             idempotencyKey: nil, newOpId: "")
            Issue.record("a bad workspace name was accepted")
        } catch {
            #expect(error.code == .invalidField && error.field == "workspace" && error.httpStatus == 400)
        }
    }
}
