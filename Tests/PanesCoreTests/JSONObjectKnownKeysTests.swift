@testable import PanesCore
import Testing

/// The protocol's field names are found by their bytes, and nothing else is.
@Suite struct JSONObjectKnownKeysTests {
    static func known(_ key: String) -> String? {
        var key = key
        return key.withUTF8 { JSONObject.knownKey(UnsafeRawBufferPointer($0), prefix: JSONObject.prefix(UnsafeRawBufferPointer($0))) }
    }

    @Test func everyListedKeyIsFoundAndNearMissesAreNot() {
        let table = JSONObject.knownKeys
        #expect(table.entries.count > 100)
        #expect(table.starts.count == 257 && table.starts.last == table.entries.count)
        // Buckets stay small, so a lookup compares few entries.
        #expect(zip(table.starts, table.starts.dropFirst()).allSatisfy { $1 - $0 <= 4 })
        for entry in table.entries {
            let found = Self.known(entry.key)
            #expect(found.map { Array($0.utf8) } == Array(entry.key.utf8))
            for miss in [entry.key + "s", String(entry.key.dropLast()), entry.key.uppercased(), "x" + entry.key]
            where !table.entries.contains(where: { Array($0.key.utf8) == Array(miss.utf8) }) {
                #expect(Self.known(miss) == nil, "\(miss)")
            }
        }
        #expect(Self.known("\u{212A}ind") == nil && Self.known("kind") == "kind")
        #expect(Self.known("") == nil)
    }
}
