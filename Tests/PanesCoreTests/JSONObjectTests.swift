import Foundation
import PanesCore
import Testing

/// `JSONObject` compares keys by their bytes, keeps them in byte order, and behaves as a
/// dictionary keyed by byte arrays would.
@Suite struct JSONObjectTests {
    /// A reference model: a dictionary keyed by the keys' bytes, which cannot merge keys.
    typealias Model = [[UInt8]: JSONValue]

    static func check(_ object: JSONObject, against model: Model, _ comment: Comment? = nil) {
        #expect(object.count == model.count, comment)
        #expect(object.map { Array($0.key.utf8) } == model.keys.sorted { $0.lexicographicallyPrecedes($1) }, comment)
        for (key, value) in model {
            #expect(object[String(decoding: key, as: UTF8.self)] == value, comment)
        }
    }

    /// Keys that share long prefixes, differ past the first eight bytes, differ only in length,
    /// hold NUL, and are canonically equivalent in different bytes.
    static let keyPool: [String] = {
        var keys = ["", "a", "b", "ab", "a\u{0}", "a\u{0}\u{0}", "abcdefgh", "abcdefgh\u{0}", "abcdefghi", "abcdefghj",
                    "abcdefgha", "abcdefg", "abcdefgz", "idempotencyKey", "idempotencyKez", "\u{7F}", "\u{80}", "\u{FFFF}"]
        for (a, b) in IdentifierTests.equivalentPairs { keys += [a, b] }
        keys += (0..<40).map { "key-\($0)" } + (0..<10).map { "a-long-shared-prefix-\($0)" }
        return keys
    }()

    /// The model's set: by bytes, and a key added in place of its canonically equivalent twin
    /// in other bytes (JSONObject+Equivalence.swift).
    @discardableResult
    static func put(_ value: JSONValue, _ key: String, in model: inout Model) -> JSONValue? {
        let bytes = Array(key.utf8)
        if model[bytes] == nil, let twin = model.keys.first(where: { $0 != bytes && String(decoding: $0, as: UTF8.self) == key }) {
            model[twin] = nil
        }
        return model.updateValue(value, forKey: bytes)
    }

    @Test func randomEditsAgreeWithADictionaryKeyedByBytes() {
        var random = SplitMix64(seed: 27)
        for round in 0..<200 {
            var object = JSONObject()
            var model = Model()
            for step in 0..<Int(random.next() % 120) {
                let key = Self.keyPool[Int(random.next() % UInt64(Self.keyPool.count))]
                switch random.next() % 6 {
                case 0:
                    #expect(object.removeValue(forKey: key) == model.removeValue(forKey: Array(key.utf8)))
                case 1:
                    object[key] = nil
                    model[Array(key.utf8)] = nil
                case 2:
                    let value = JSONValue.int(Int64(step))
                    #expect(object.updateValue(value, forKey: key) == Self.put(value, key, in: &model))
                default:
                    object[key] = .int(Int64(step))
                    Self.put(.int(Int64(step)), key, in: &model)
                }
                #expect(object.keys.contains(key) == (model[Array(key.utf8)] != nil))
                #expect(object.index(forKey: key).map { object[$0].key.utf8.elementsEqual(key.utf8) } ?? true)
            }
            Self.check(object, against: model, "round \(round)")
            // Built at once, in a shuffled order, it is the same object.
            var pairs = model.map { (String(decoding: $0.key, as: UTF8.self), $0.value) }
            pairs.shuffle(using: &random)
            #expect(JSONObject(uniqueKeysWithValues: pairs) == object)
            var builder = JSONObject.Builder(capacity: pairs.count)
            for (key, value) in pairs { builder.append(key, value) }
            #expect(builder.object() == object)
        }
    }

    @Test func canonicallyEquivalentKeysInDifferentBytesAreLookedUpByBytesAndAnAddedOneReplacesItsTwin() {
        for (a, b) in IdentifierTests.equivalentPairs {
            var object: JSONObject = [a: 1, "z": 0]
            #expect(object[b] == nil)
            #expect(!object.keys.contains(b))
            #expect(object.removeValue(forKey: b) == nil && object.count == 2)
            object[b] = 2
            #expect(object.count == 2 && object[a] == nil && object[b] == 2)
            #expect(object.map { Array($0.key.utf8) }.contains(Array(b.utf8)))
            #expect(object.removeValue(forKey: b) == 2)
            #expect(object == ["z": 0])
            // A merge: the other object's spelling replaces this one's; its value by `combine`'s
            // rule does not apply (they are two keys by bytes), the newer member wins.
            let merged = JSONObject([a: 1, "z": 0]).merging([b: 2, "y": 3]) { old, _ in old }
            #expect(merged.count == 3 && merged[a] == nil && merged[b] == 2 && merged["z"] == 0 && merged["y"] == 3)
            #expect(JSONObject([a: 1]).merging([a: 2]) { old, _ in old } == [a: 1])
            #expect(JSONObject([a: 1]) != JSONObject([b: 1]))
            #expect(JSONValue.object([a: 1]) != .object([b: 1]))
            #expect(!JSONValue.object([a: 1]).sameValue(as: .object([b: 1])))
            #expect(Set([JSONValue.object([a: 1]), .object([b: 1])]).count == 2)
        }
    }

    /// `JSONObject.asciiMayHaveTwin`'s premise: the only characters outside ASCII that decompose
    /// to ASCII are KELVIN SIGN, GREEK QUESTION MARK and GREEK VARIA (Unicode's first two planes,
    /// where every such character is).
    @Test func onlyThreeCharactersOutsideASCIIAreCanonicallyEquivalentToASCIIText() {
        var found: [UInt32] = []
        for value in UInt32(0x80)..<0x2_0000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(scalar)
            if text.decomposedStringWithCanonicalMapping.utf8.allSatisfy({ $0 < 0x80 }) { found.append(value) }
        }
        #expect(found == [0x37E, 0x1FEF, 0x212A])
        var object: JSONObject = ["\u{212A}elvin": 1, "a\u{37E}": 2, "\u{1FEF}x": 3]
        object["Kelvin"] = 4
        object["a;"] = 5
        object["`x"] = 6
        #expect(object == ["Kelvin": 4, "a;": 5, "`x": 6])
    }

    @Test func equalityAndHashingDoNotDependOnTheOrderKeysCameIn() {
        // (Not two spellings of one text: of those, the later added replaces the other.)
        let keys = (0..<50).map { "k\($0 * 7919 % 50)" } + ["\u{E9}", "e\u{300}", "z", ""]
        var forward = JSONObject(), backward = JSONObject()
        for (index, key) in keys.enumerated() { forward[key] = .int(Int64(index)) }
        for (index, key) in keys.enumerated().reversed() { backward[key] = .int(Int64(index)) }
        #expect(forward == backward)
        #expect(forward.hashValue == backward.hashValue)
        #expect(JSONValue.object(forward).hashValue == JSONValue.object(backward).hashValue)
        let literal: JSONValue = ["b": 1, "a": ["y": 2, "x": 3]], other: JSONValue = ["a": ["x": 3, "y": 2], "b": 1]
        #expect(literal == other && literal.hashValue == other.hashValue)
        backward["k3"] = 0
        #expect(forward != backward)
    }

    @Test func largeObjectsStayInOrderAndAreBuiltInOnePass() {
        let count = 30_000
        var random = SplitMix64(seed: 7)
        let pairs = (0..<count).map { ("member-\($0)", JSONValue.int(Int64($0))) }.shuffled(using: &random)
        let object = JSONObject(uniqueKeysWithValues: pairs)
        #expect(object.count == count)
        #expect(zip(object.keys, object.keys.dropFirst()).allSatisfy { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        for index in stride(from: 0, to: count, by: 997) { #expect(object["member-\(index)"] == .int(Int64(index))) }
        #expect(object["member-\(count)"] == nil)
        // Whole-object operations keep the order instead of re-inserting key by key.
        let doubled = object.mapValues { .int(($0.intValue ?? 0) * 2) }
        #expect(doubled["member-21"] == 42 && doubled.count == count)
        let evens = object.filter { ($0.value.intValue ?? 1) % 2 == 0 }
        #expect(evens.count == count / 2 && evens["member-4"] == 4 && evens["member-5"] == nil)
        let merged = evens.merging(object.filter { ($0.value.intValue ?? 0) % 3 == 0 }) { _, later in later }
        #expect(merged.count == count / 2 + (count / 3 + 1) - (count / 6 + 1))
        #expect(merged == object.filter { ($0.value.intValue ?? 1) % 2 == 0 || ($0.value.intValue ?? 1) % 3 == 0 })
        // Appending in key order is an append; the encoded size counts every member.
        var appended = JSONObject()
        for (key, value) in object { appended[key] = value }
        #expect(appended == object)
        #expect(JSONValue.object(object).encodedSize == 2 + (count - 1) + object.reduce(0) { $0 + $1.key.utf8.count + 3 + $1.value.encodedSize })
    }

    @Test func literalsAndTheObjectBuilderKeepTheLaterOfARepeatedKeyAndLeaveNilsOut() {
        let repeated: JSONObject = ["a": 1, "b": 2, "a": 3]
        #expect(repeated == ["a": 3, "b": 2])
        let optional = JSONValue.object(["a": 1, "gone": nil, "c": .null])
        #expect(optional == ["a": 1, "c": .null])
    }

    @Test func mergingCombinesTheValuesOfSharedKeysInTheGivenOrder() {
        let base: JSONObject = ["a": 1, "b": 2, "c": 3]
        #expect(base.merging(["b": 20, "d": 4]) { old, _ in old } == ["a": 1, "b": 2, "c": 3, "d": 4])
        #expect(base.merging(["b": 20, "d": 4]) { _, new in new } == ["a": 1, "b": 20, "c": 3, "d": 4])
        #expect(base.compactMapValues { $0 == 2 ? nil : $0 } == ["a": 1, "c": 3])
        #expect(Array(base.values) == [1, 2, 3] && Array(base.keys) == ["a", "b", "c"])
    }
}

