/// One person's windows in a document on one node, as a summary's `people` lists them:
/// `{user, name, windows, active}`. Nodes tell each other theirs (`NodeSignal.Kind.people`), so
/// a summary counts a person's windows on every node.
struct PersonTally: Sendable, Equatable {
    let user: String
    var name: String
    var windows: Int
    /// Of `windows`, those whose scene is `foregroundActive`.
    var active: Int

    var json: JSONValue {
        ["user": .string(user), "name": .string(name), "windows": JSONValue(windows), "active": JSONValue(active)]
    }

    /// Nil for an entry that does not read (it is then left out), or counts that make no sense.
    init?(json: JSONValue) {
        guard let user = json["user"]?.stringValue, let name = json["name"]?.stringValue,
              let windows = json["windows"]?.intValue, let active = json["active"]?.intValue,
              windows > 0, (0...windows).contains(active), windows <= Int64(Int32.max) else { return nil }
        self.init(user: user, name: name, windows: Int(windows), active: Int(active))
    }

    init(user: String, name: String, windows: Int, active: Int) {
        self.user = user
        self.name = name
        self.windows = windows
        self.active = active
    }

    /// Tallies merged per person (compared by bytes), in the order each first appears; a
    /// person's name is the first one seen. At most `limit` people.
    static func merged(_ tallies: some Sequence<PersonTally>, limit: Int) -> [PersonTally] {
        var order: [Identifier] = []
        var merged: [Identifier: PersonTally] = [:]
        for tally in tallies {
            let user = Identifier(tally.user)
            if merged[user] == nil {
                guard order.count < limit else { continue }
                order.append(user)
                merged[user] = PersonTally(user: tally.user, name: tally.name, windows: 0, active: 0)
            }
            merged[user]!.windows += tally.windows
            merged[user]!.active += tally.active
        }
        return order.map { merged[$0]! }
    }
}
