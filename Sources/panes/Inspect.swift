import ArgumentParser
import Foundation
import PanesCore
import PanesJSON
import PanesStorage

/// `panes inspect`: prints what is stored, session by session, like the restoration-archive
/// tools UIKit developers use. Opens the database read-only, so it is safe on a live server.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print stored sessions and preferences.")

    @Option(help: "The server's data folder.") var data = "data"
    @Flag(help: "Print JSON instead of text.") var json = false

    func run() throws {
        let store = try SQLiteStore.openReadOnly(path: "\(data)/panes.sqlite")
        let state = try store.loadState()
        let report = InspectionReport(state: state)
        print(json ? JSONCodec.encodeString(report.json, pretty: true) : report.text)
    }
}

/// What `panes inspect` shows, as JSON and as text.
struct InspectionReport {
    let state: StoredState

    var json: JSONValue {
        [
            "sessions": .array(state.sessions.map { session in
                var object = session.json(secret: nil, handBack: true).objectValue ?? [:]
                object["workspace"] = .string(session.owner.workspace)
                object["user"] = .string(session.owner.user)
                object["failedRestores"] = JSONValue(session.failedRestores)
                return .object(object)
            }),
            "preferences": .array(state.preferences.sorted { $0.key < $1.key }.map { domain, stored in
                [
                    "domain": .string(domain.kind), "workspace": .string(domain.workspace), "user": JSONValue(domain.user),
                    "version": .int(stored.version),
                    "values": .object(JSONObject(stored.values.mapValues { ["value": $0.value, "version": .int($0.version)] })),
                ]
            }),
        ]
    }

    var text: String {
        var lines: [String] = ["\(state.sessions.count) session(s)"]
        for session in state.sessions {
            lines.append("")
            lines.append("session \(session.id)  \(session.owner.user)@\(session.owner.workspace)")
            lines.append("  configuration: \(session.configuration) (\(session.role.rawValue))")
            if !session.title.isEmpty { lines.append("  title: \(session.title)") }
            if !session.subtitle.isEmpty { lines.append("  subtitle: \(session.subtitle)") }
            lines.append("  created: \(Self.date(session.createdAt))  last active: \(Self.date(session.lastActiveAt))")
            lines.append("  userInfo: \(JSONCodec.encodeString(.object(session.userInfo)))")
            if let restoration = session.restoration {
                let activity = restoration.activity
                lines.append("  restoration activity: \(activity.activityType)"
                    + (activity.title.map { " \"\($0)\"" } ?? "")
                    + (activity.targetContentIdentifier.map { " → \($0)" } ?? ""))
                lines.append("    userInfo: \(JSONCodec.encodeString(.object(activity.userInfo)))")
                let metadata = restoration.metadata
                lines.append("    saved \(Self.date(metadata.savedAt)) by server \(metadata.serverVersion), protocol \(metadata.protocolVersion), client \(metadata.clientVersion)")
                if metadata.documentGone { lines.append("    its document was deleted: not handed back") }
            } else {
                lines.append("  restoration activity: none")
            }
            if session.failedRestores > 0 { lines.append("  failed restores in a row: \(session.failedRestores)") }
        }
        for (domain, stored) in state.preferences.sorted(by: { $0.key < $1.key }) {
            lines.append("")
            lines.append("preferences \(domain)  version \(stored.version)")
            for (key, value) in stored.values.sorted(by: { $0.key < $1.key }) {
                lines.append("  \(key) = \(JSONCodec.encodeString(value.value))  (v\(value.version))")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func date(_ millis: Millis) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }
}
