import Foundation
import PanesCore
import PanesSecurity
import PanesServerTestSupport
import PanesTransport
import Testing

/// What the real server leaves on disk (issue 13, item 2): a private folder and private files,
/// and nothing of a destroyed session or a deleted document after a clean shutdown.
@Suite struct DataAtRestEndToEndTests {
    func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    /// Whether `text` occurs, as UTF-8, in any file of the data folder.
    func dataFolder(_ folder: URL, contains text: String) throws -> Bool {
        let needle = Data(text.utf8)
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            if try Data(contentsOf: folder.appendingPathComponent(name)).range(of: needle) != nil { return true }
        }
        return false
    }

    @Test func theDataFolderIsMadePrivateAndTheDatabaseFilesAreTheOwnersOnly() throws {
        let folder = ServerProcess.tempFolder()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        let server = try ServerProcess(data: folder)
        let tab = try server.client()
        _ = tab.connect()
        #expect(tab.request("setUserInfo", ["userInfo": ["written": true]])["ok"] == true)

        #expect(try mode(folder.path) == 0o700)
        for name in ["panes.sqlite", "panes.sqlite-wal", "panes.sqlite-shm"] {
            #expect(try mode(folder.appendingPathComponent(name).path) == 0o600, "\(name)")
        }
    }

    @Test func aDataFolderOfAnotherUserIsRefusedWithAReason() throws {
        let folder = ServerProcess.tempFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = geteuid() == 0 ? folder.path : "/usr"
        if geteuid() == 0 { #expect(chown(path, 65_534, 65_534) == 0) }
        let (status, errors) = try ServerProcess.runToExit(["serve", "--port", "0", "--data", path])
        #expect(status != 0)
        #expect(errors.contains("belongs to user id"), "\(errors)")
        #expect(!FileManager.default.fileExists(atPath: path + "/panes.sqlite"))
    }

    @Test func aDestroyedSessionAndADeletedDocumentLeaveNothingOnDiskAfterACleanShutdown() throws {
        let server = try ServerProcess()
        let doomed = try server.client()
        let created = doomed.connect()
        let secret = try #require(created["session"]?["secret"]?.stringValue)
        #expect(doomed.request("setUserInfo", ["userInfo": ["note": "doomed-userinfo-4f2a91"]])["ok"] == true)
        let document = doomed.request("createDocument", ["title": "Doomed", "text": "doomed-document-text-77c3e0"])
        let documentID = try #require(document["result"]?["document"]?["id"])
        let revision = try #require(doomed.request("openDocument", ["document": documentID])["result"]?["revision"])
        #expect(doomed.request("edit", ["document": documentID, "revision": revision, "opId": "o1",
                                        "operation": [27, "doomed-edit-9a1b55"]])["ok"] == true)

        // Another window of the same user keeps its own note: the search must find that one.
        let keeper = try server.client()
        _ = keeper.connect()
        #expect(keeper.request("setUserInfo", ["userInfo": ["note": "kept-userinfo-3c8d21"]])["ok"] == true)
        #expect(keeper.request("requestDestruction", ["session": created["session"]!["persistentIdentifier"]!])["ok"] == true)
        #expect(doomed.waitForClose() == CloseCode.sessionDestroyed.rawValue)
        #expect(keeper.request("deleteDocument", ["document": documentID])["ok"] == true)

        server.kill(SIGTERM)
        #expect(server.wait() == 0)
        #expect(try dataFolder(server.data, contains: "kept-userinfo-3c8d21"), "the search finds what was kept")
        for gone in [secret, Digest.sha256Hex(secret), "doomed-userinfo-4f2a91", "doomed-document-text-77c3e0",
                     "doomed-edit-9a1b55"] {
            #expect(try !dataFolder(server.data, contains: gone), "\(gone) is still on disk")
        }
    }
}

extension ServerProcess {
    /// Runs `panes` with `arguments` until it exits; its status and what it wrote to stderr.
    static func runToExit(_ arguments: [String]) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
