import ArgumentParser

/// `panes`: the server and its tools.
@main
struct Panes: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        abstract: "A multi-window document workspace server over WebSockets.",
        version: version,
        subcommands: [Serve.self, Inspect.self, SettingsCommand.self, APIKeyCommand.self],
        defaultSubcommand: Serve.self)
}
