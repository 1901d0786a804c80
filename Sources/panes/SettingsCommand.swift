import ArgumentParser
import PanesCore

/// `panes settings`: every setting with its default and meaning, as docs/operating.md lists them.
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "List every setting (limits and timings) with its default.")

    func run() {
        print(Settings.markdownTable)
    }
}
