import ArgumentParser
import Foundation
import PanesCore
import PanesJSON
import PanesSecurity

/// `panes apikey create`: makes an API key's secret (256 random bits) and prints it once, with
/// the entry to add to the keys file (`--api-keys`), which holds only its SHA-256. Send the
/// running server SIGHUP to take the file's changes; revoking a key is removing its entry.
struct APIKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apikey", abstract: "Make HTTP API keys (the keys file holds their hashes).",
        subcommands: [Create.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new key's secret and the keys-file entry that accepts it (only its SHA-256).")

        @Option(help: "The key's id: letters, digits, _ or -.") var id: String
        @Option(help: "A workspace it may act in (repeatable); * for every workspace.") var workspace: [String]
        @Option(help: "read (GET only) or write.") var access = "read"
        @Option(help: "The author name of its edits (default: its id).") var name: String?

        func run() throws {
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let secret = "pk_" + bytes.map { String(format: "%02x", $0) }.joined()
            var entry: JSONObject = [
                "id": .string(id), "sha256": .string(Digest.sha256Hex(secret)),
                "workspaces": .array(workspace.map(JSONValue.string)), "access": .string(access),
            ]
            if let name { entry["name"] = .string(name) }
            if let problem = Self.problem(with: .object(entry)) { throw ValidationError(problem) }
            print("secret (shown once; send it as `Authorization: Bearer <secret>`):")
            print(secret)
            print("keys file entry (add it to the \"keys\" array, then send the server SIGHUP):")
            print(JSONCodec.encodeString(.object(entry)))
        }

        /// What is wrong with the entry, if anything: the server reads it with the same code.
        static func problem(with entry: JSONValue) -> String? {
            do throws(PanesError) {
                _ = try APIKey(json: entry, field: "key")
                return nil
            } catch {
                return error.message
            }
        }
    }
}
