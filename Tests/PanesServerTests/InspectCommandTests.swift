import Foundation
import PanesCore
import PanesServerTestSupport
import PanesTestSupport
import PanesJSON
import PanesSecurity
import Testing

@Suite struct InspectCommandTests {
    func inspect(_ data: URL, json: Bool) throws -> String {
        let process = Process()
        process.executableURL = ServerProcess.binary
        process.arguments = ["inspect", "--data", data.path] + (json ? ["--json"] : [])
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(data: pipe.fileHandleForReading.readDataToEndOfFile(), encoding: .utf8) ?? ""
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return output
    }

    @Test func inspectPrintsEachSessionsActivityUserInfoAndMetadata() throws {
        let server = try ServerProcess()
        let tab = try server.client()
        let created = tab.connect()
        _ = tab.request("updateActivity", ["activity": ["activityType": "panes.document", "title": "Quarterly",
                                                        "targetContentIdentifier": "doc-7"]])
        _ = tab.request("setUserInfo", ["userInfo": ["sidebar": true]])
        let id = created["session"]!["persistentIdentifier"]!.stringValue!

        let text = try inspect(server.data, json: false)
        #expect(text.contains("session \(id)"))
        #expect(text.contains("panes.document \"Quarterly\" → doc-7"))
        #expect(text.contains(#"userInfo: {"sidebar":true}"#))
        #expect(text.contains("client swift-tests"))

        guard case .success(let json) = JSONCodec.decode(try inspect(server.data, json: true)) else {
            Issue.record("inspect --json did not print JSON")
            return
        }
        let session = json["sessions"]?.arrayValue?.first
        #expect(session?["persistentIdentifier"] == .string(id))
        #expect(session?["secret"] == nil, "secrets are never printed")
        #expect(session?["restorationMetadata"]?["protocolVersion"] == 1)
    }

    @Test func inspectShowsNeitherSecretsNorTheirHashes() throws {
        let server = try ServerProcess()
        let tab = try server.client()
        let created = tab.connect()
        _ = tab.request("setUserInfo", ["userInfo": ["sidebar": true]])
        let secret = try #require(created["session"]?["secret"]?.stringValue)
        let id = try #require(created["session"]?["persistentIdentifier"]?.stringValue)

        for json in [false, true] {
            let output = try inspect(server.data, json: json)
            #expect(output.contains(id), "the session is listed")
            #expect(!output.contains(secret))
            #expect(!output.contains(Digest.sha256Hex(secret)))
            #expect(!output.lowercased().contains("secret"))
        }
    }
}
