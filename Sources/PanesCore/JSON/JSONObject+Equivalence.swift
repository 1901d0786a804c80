/// Keys that are the same Unicode text in different bytes (NFC `é` and NFD `e` + U+0301,
/// KELVIN SIGN and `K`). A client's JSON text may not hold two such keys in one object:
/// `JSONCodec` refuses it ("canonically equivalent … send one of them"). So an object the
/// server builds never holds two either: a key added to an object (`subscript` set,
/// `updateValue`, `merging`) replaces a member whose key is equivalent in other bytes, as a
/// `[String: …]` did; lookups and removals stay by bytes. (The stores read their own text
/// accepting such keys, only so that a hand-edited row is not lost.) Of such a pair at
/// least one key has a byte outside ASCII, so adding an ASCII key (nearly every key) costs a
/// look at its own bytes, and a merge of ASCII keys one look at each key.
extension JSONObject {
    @inlinable static func isASCII(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { bytes in !bytes.contains { $0 >= 0x80 } }
    }

    @usableFromInline static func isASCII(_ member: Member) -> Bool {
        // The first eight bytes are in the prefix already.
        member.prefix & 0x8080_8080_8080_8080 == 0 && (member.key.utf8.count <= 8 || isASCII(member.key))
    }

    /// Whether an ASCII key can have a twin: only through KELVIN SIGN, GREEK QUESTION MARK and
    /// GREEK VARIA, which decompose to `K`, `;` and `` ` ``; every other character outside ASCII
    /// decomposes to something outside ASCII (JSONObjectTests checks it over all of Unicode's
    /// first two planes), so a key without those bytes is added without looking at the others.
    @inlinable static func asciiMayHaveTwin(_ key: String) -> Bool {
        key.utf8.contains { $0 == UInt8(ascii: "K") || $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: "`") }
    }

    /// Removes the member whose key is canonically equivalent to `key` in other bytes (at most
    /// one: the object holds no two); whether there was one.
    @usableFromInline mutating func removeEquivalent(of key: String) -> Bool {
        let keyIsASCII = Self.isASCII(key)
        if keyIsASCII, !Self.asciiMayHaveTwin(key) { return false }
        guard let index = members.firstIndex(where: { member in
            // Two ASCII keys are equivalent only if they are the same bytes.
            !(keyIsASCII && Self.isASCII(member)) && member.key == key && !Identifier.equal(member.key, key)
        }) else { return false }
        members.remove(at: index)
        return true
    }

    /// After a merge: each member `other` added (`arrivals`, indexes into `merged` of keys this
    /// object had not in the same bytes) replaces a member this object brought whose key is
    /// canonically equivalent. Linear: one `[String: Int]`, keyed canonically, of this object's
    /// keys, only when some key is outside ASCII.
    static func replaceEquivalents(in merged: inout [Member], arrivals: [Int]) {
        guard !arrivals.isEmpty else { return }
        let anyArrivalOutsideASCII = arrivals.contains { !isASCII(merged[$0]) }
        guard anyArrivalOutsideASCII || merged.contains(where: { !isASCII($0) }) else { return }
        let arrived = Set(arrivals)
        var older: [String: Int] = [:]
        for (index, member) in merged.enumerated() where !arrived.contains(index) {
            // An ASCII arrival can only have a twin outside ASCII.
            if anyArrivalOutsideASCII || !isASCII(member) { older[member.key] = index }
        }
        guard !older.isEmpty else { return }
        var replaced = Set<Int>()
        for index in arrivals {
            if let twin = older[merged[index].key] { replaced.insert(twin) }
        }
        guard !replaced.isEmpty else { return }
        merged = merged.enumerated().filter { !replaced.contains($0.offset) }.map(\.element)
    }
}
