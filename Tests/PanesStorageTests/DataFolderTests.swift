import Foundation
import PanesStorage
import PanesStorageTestSupport
import Testing

/// The data folder is private to the server's user (issue 13, item 2).
@Suite struct DataFolderTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func aNewFolderAndItsMissingParentsAreCreated0700() throws {
        let path = directory.file("a/b/data")
        #expect(try DataFolder.prepare(path) == .created)
        #expect(try mode(path) == 0o700)
        #expect(try mode(directory.file("a")) == 0o700)
        #expect(try mode(directory.file("a/b")) == 0o700)
    }

    @Test func anExistingFolderOpenToOthersIsTightened() throws {
        let path = directory.file("data")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o755])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        #expect(try DataFolder.prepare(path) == .tightened(from: 0o755))
        #expect(try mode(path) == 0o700)
        #expect(try DataFolder.prepare(path) == .unchanged)
    }

    @Test func aFileIsNotADataFolder() throws {
        let path = directory.file("file")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let error = try #require(throws: SQLiteError.self) { try DataFolder.prepare(path) }
        #expect(error.reason == .notPrivate && error.message.contains("not a folder"))
    }

    @Test func aFolderOwnedByAnotherUserIsRefusedAndLeftAsItIs() throws {
        // As root, make a folder that belongs to `nobody`; otherwise /usr belongs to root, not us.
        let path: String
        if geteuid() == 0 {
            path = directory.file("theirs")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o755])
            #expect(chown(path, 65_534, 65_534) == 0)
        } else {
            path = "/usr"
        }
        let before = try mode(path)
        let error = try #require(throws: SQLiteError.self) { try DataFolder.prepare(path) }
        #expect(error.reason == .notPrivate)
        #expect(error.message.contains("belongs to user id") && error.message.contains("--data"))
        #expect(try mode(path) == before)
    }
}
