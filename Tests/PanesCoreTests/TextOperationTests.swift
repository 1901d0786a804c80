import Foundation
import PanesCore
import Testing

/// Examples for `TextOperation`: canonical form, the wire form and its errors, apply over
/// astral and combining scalars, compose, transform, positions, and the shared vectors that
/// `web/lib/ot.js` must reproduce too.
struct TextOperationTests {
    // MARK: Canonical form

    @Test func buildersMergeNeighboursAndDropEmptyComponents() {
        let op = TextOperation([.retain(2), .retain(3), .insert(""), .retain(0), .delete(1), .delete(2), .insert("x")])
        #expect(op.components == [.retain(5), .insert("x"), .delete(3)])
        #expect(op.baseLength == 8)
        #expect(op.targetLength == 6)
    }

    @Test func insertAfterDeleteIsPlacedBeforeIt() {
        #expect(TextOperation([.delete(2), .insert("ab")]).components == [.insert("ab"), .delete(2)])
        #expect(TextOperation([.insert("a"), .delete(2), .insert("b"), .retain(1)]).components
            == [.insert("ab"), .delete(2), .retain(1)])
    }

    @Test func noopIsOnlyRetains() {
        #expect(TextOperation().isNoop)
        #expect(TextOperation([.retain(4)]).isNoop)
        #expect(!TextOperation([.retain(4), .insert("x")]).isNoop)
        #expect(!TextOperation([.delete(1)]).isNoop)
    }

    @Test func operationsCompareByScalarsNotByCanonicalEquivalence() {
        // U+00C5 and U+212B (Angstrom sign) are canonically equivalent, so `String ==` calls them
        // equal, but they are different edits.
        #expect(TextOperation([.insert("\u{C5}")]) != TextOperation([.insert("\u{212B}")]))
        #expect(TextOperation([.insert("\u{C5}")]) == TextOperation([.insert("\u{C5}")]))
    }

    @Test func descriptionIsTheWireForm() {
        #expect(TextOperation([.retain(5), .insert("hi"), .delete(3), .retain(10)]).description == #"[5, "hi", -3, 10]"#)
    }

    // MARK: JSON

    @Test func wireFormRoundTrips() throws {
        let json: JSONValue = [5, "hi", -3, 10]
        let op = try TextOperation(json: json)
        #expect(op.components == [.retain(5), .insert("hi"), .delete(3), .retain(10)])
        #expect(op.json == json)
    }

    @Test func decodingNormalisesNonCanonicalInput() throws {
        let op = try TextOperation(json: [1, 2, -1, -1, "x", "y", 3.0])
        #expect(op.json == [3, "xy", -2, 3])
    }

    @Test func decodingTheEmptyArrayGivesTheEmptyOperation() throws {
        #expect(try TextOperation(json: []) == TextOperation())
    }

    @Test(arguments: [
        (JSONValue.object(["retain": 3]), "`operation` must be an array of components, not object"),
        ("abc", "`operation` must be an array of components, not string"),
        ([1, true], "`operation[1]` must be an integer or a string, not boolean"),
        ([.null], "`operation[0]` must be an integer or a string, not null"),
        ([[1]], "`operation[0]` must be an integer or a string, not array"),
        ([1, 0], "`operation[1]` is 0; use n > 0 to retain, -n to delete, or a string to insert"),
        (["a", ""], "`operation[1]` is an empty string; an insert needs text"),
        ([1.5], "`operation[0]` is 1.5, not a whole number"),
        ([2_147_483_648], "`operation[0]` is 2147483648, beyond the largest length 2147483647"),
        ([-2_147_483_648], "`operation[0]` is -2147483648, beyond the largest length 2147483647"),
        ([1e300], "`operation[0]` is 1e+300, beyond the largest length 2147483647"),
    ] as [(JSONValue, String)])
    func decodingRejectsMalformedOperationsNamingWhatIsWrong(json: JSONValue, message: String) {
        #expect(throws: PanesError(.invalidOperation, message, field: "operation")) {
            try TextOperation(json: json)
        }
    }

    @Test func decodingAcceptsTheLargestComponent() throws {
        let op = try TextOperation(json: [2_147_483_647, -2_147_483_647])
        #expect(op.baseLength == 4_294_967_294)
    }

    @Test func decodingErrorsNameTheRequestField() {
        #expect(throws: PanesError(.invalidOperation, "`ops[0]` is 0; use n > 0 to retain, -n to delete, or a string to insert",
                                   field: "ops")) {
            try TextOperation(json: [0], field: "ops")
        }
    }

    // MARK: Apply

    @Test func applyRetainsInsertsAndDeletes() throws {
        let op = TextOperation([.retain(6), .insert("brave new "), .delete(5), .insert("world")])
        #expect(try op.apply(to: "hello there").scalars == "hello brave new world".scalars)
    }

    @Test func applyCountsAstralCharactersAsOnePosition() throws {
        // 😀 and 𝒳 are outside the Basic Multilingual Plane: two UTF-16 units, four UTF-8 bytes, one scalar.
        let doc = "a😀b𝒳c"
        #expect(doc.unicodeScalars.count == 5)
        let op = TextOperation([.retain(1), .insert("👍"), .delete(1), .retain(2), .delete(1), .insert("𝒴")])
        #expect(try op.apply(to: doc).scalars == "a👍b𝒳𝒴".scalars)
    }

    @Test func applyCountsCombiningMarksSeparately() throws {
        // "é" spelled as e + U+0301 is one character but two scalars; edits may split it.
        let doc = "cafe\u{301}!"
        #expect(doc.unicodeScalars.count == 6)
        #expect(try TextOperation([.retain(4), .delete(1), .retain(1)]).apply(to: doc).scalars == "cafe!".scalars)
        #expect(try TextOperation([.retain(3), .delete(1), .insert("o"), .retain(2)]).apply(to: doc).scalars == "cafo\u{301}!".scalars)
        #expect(try TextOperation([.retain(4), .insert("\u{300}"), .retain(2)]).apply(to: doc).scalars == "cafe\u{300}\u{301}!".scalars)
    }

    @Test func applyCountsEachScalarOfAZeroWidthJoinerSequence() throws {
        let doc = "👩\u{200D}💻"  // one grapheme, three scalars
        #expect(try TextOperation([.retain(1), .delete(2)]).apply(to: doc).scalars == "👩".scalars)
    }

    @Test func applyRejectsAnOperationShorterThanTheDocument() {
        #expect(throws: PanesError(.invalidOperation, "the operation spans 3 Unicode scalars but the document has 4",
                                   field: "operation")) {
            try TextOperation([.retain(3)]).apply(to: "a😀bc")
        }
    }

    @Test func applyRejectsAnOperationLongerThanTheDocument() {
        #expect(throws: PanesError(.invalidOperation, "the operation spans 5 Unicode scalars but the document has 4",
                                   field: "operation")) {
            try TextOperation([.retain(2), .delete(3)]).apply(to: "a😀bc")
        }
    }

    @Test func applyToAMillionScalarDocument() throws {
        let doc = String(repeating: "ab😀é", count: 250_000)
        var op = TextOperation()
        for _ in 0..<1000 {
            op.retain(997)
            op.insert("𝒳")
            op.delete(2)
        }
        op.retain(1_000_000 - op.baseLength)
        let result = try op.apply(to: doc)
        #expect(result.unicodeScalars.count == op.targetLength)
        #expect(result.unicodeScalars.count == 999_000)
        // The rope the server holds comes to the same text, a thousand edits in one operation.
        let rope = try op.apply(to: Rope(doc))
        #expect(rope.scalarCount == 999_000)
        #expect(rope.unicodeScalars.elementsEqual(result.unicodeScalars))
    }

    @Test func applyToARopeRejectsAnOperationOfAnotherLength() {
        #expect(throws: PanesError(.invalidOperation, "the operation spans 3 Unicode scalars but the document has 4",
                                   field: "operation")) {
            try TextOperation([.retain(3)]).apply(to: Rope("a😀bc"))
        }
    }

    @Test func applyToARopeCountsScalarsAsTheStringVersionDoes() throws {
        let op = TextOperation([.retain(1), .insert("👍"), .delete(1), .retain(2), .delete(1), .insert("𝒴")])
        #expect(try op.apply(to: Rope("a😀b𝒳c")) == Rope("a👍b𝒳𝒴"))
        #expect(try TextOperation([.retain(3), .delete(1), .insert("o"), .retain(2)]).apply(to: Rope("cafe\u{301}!"))
                    == Rope("cafo\u{301}!"))
    }

    // MARK: Compose

    @Test func composeAppliesBothInTurn() throws {
        let a = TextOperation([.retain(3), .insert("XY"), .delete(2), .retain(1)])  // abcdef -> abcXYf
        let b = TextOperation([.delete(1), .retain(3), .insert("😀"), .delete(1), .retain(1)])  // -> bcX😀f
        let composed = try a.compose(b)
        #expect(try composed.apply(to: "abcdef").scalars == "bcX😀f".scalars)
        #expect(composed.components == [.delete(1), .retain(2), .insert("X😀"), .delete(2), .retain(1)])
    }

    @Test func composeDropsTextInsertedThenDeleted() throws {
        let a = TextOperation([.retain(1), .insert("hello"), .retain(1)])
        let b = TextOperation([.retain(2), .delete(3), .retain(2)])
        #expect(try a.compose(b).components == [.retain(1), .insert("ho"), .retain(1)])
    }

    @Test func composeRejectsOperationsThatDoNotChain() {
        #expect(throws: PanesError(.invalidOperation,
                                   "cannot compose: the first operation produces 3 scalars but the second spans 2",
                                   field: "operation")) {
            try TextOperation([.retain(2), .insert("x")]).compose(TextOperation([.retain(2)]))
        }
    }

    // MARK: Transform

    @Test func concurrentInsertsAtOnePositionPutTheFirstArgumentFirst() throws {
        let a = TextOperation([.retain(1), .insert("A"), .retain(1)])
        let b = TextOperation([.retain(1), .insert("B"), .retain(1)])
        let (aPrime, bPrime) = try TextOperation.transform(a, b)
        #expect(aPrime.components == [.retain(1), .insert("A"), .retain(2)])
        #expect(bPrime.components == [.retain(2), .insert("B"), .retain(1)])
        #expect(try bPrime.apply(to: a.apply(to: "xy")).scalars == "xABy".scalars)
        #expect(try aPrime.apply(to: b.apply(to: "xy")).scalars == "xABy".scalars)
    }

    @Test func swappingTheArgumentOrderOnOneSideWouldDiverge() throws {
        // Why the order is fixed by role: the server computes transform(client, history) and the
        // sender must too. Were the sender to call transform(history, client), a tie would go
        // the other way there.
        let client = TextOperation([.retain(1), .insert("C"), .retain(1)])
        let history = TextOperation([.retain(1), .insert("H"), .retain(1)])
        let onServer = try TextOperation.transform(client, history).0.apply(to: history.apply(to: "xy"))
        let sender = try TextOperation.transform(client, history).1.apply(to: client.apply(to: "xy"))
        let swapped = try TextOperation.transform(history, client).0.apply(to: client.apply(to: "xy"))
        #expect(onServer == "xCHy")
        #expect(sender == onServer)
        #expect(swapped == "xHCy")
    }

    @Test func overlappingDeletesRemoveTheTextOnce() throws {
        let a = TextOperation([.retain(1), .delete(3), .retain(2)])  // a😀cdef -> aef
        let b = TextOperation([.retain(2), .delete(3), .retain(1)])  // a😀cdef -> a😀f
        let (aPrime, bPrime) = try TextOperation.transform(a, b)
        #expect(aPrime.components == [.retain(1), .delete(1), .retain(1)])
        #expect(bPrime.components == [.retain(1), .delete(1), .retain(1)])
        #expect(try bPrime.apply(to: a.apply(to: "a😀cdef")).scalars == "af".scalars)
    }

    @Test func anInsertInsideConcurrentlyDeletedTextSurvives() throws {
        let a = TextOperation([.retain(2), .insert("𝒳"), .retain(2)])
        let b = TextOperation([.retain(1), .delete(2), .retain(1)])
        let (aPrime, bPrime) = try TextOperation.transform(a, b)
        #expect(try bPrime.apply(to: a.apply(to: "abcd")).scalars == "a𝒳d".scalars)
        #expect(try aPrime.apply(to: b.apply(to: "abcd")).scalars == "a𝒳d".scalars)
    }

    @Test func transformRejectsOperationsOnDifferentDocuments() {
        #expect(throws: PanesError(.invalidOperation,
                                   "cannot transform: the operations span 2 and 3 scalars, not the same document",
                                   field: "operation")) {
            try TextOperation.transform(TextOperation([.retain(2)]), TextOperation([.retain(3)]))
        }
    }

    // MARK: Positions

    @Test func aRemoteInsertAtTheCursorLeavesItBefore() {
        let op = TextOperation([.retain(2), .insert("😀😀"), .retain(2)])
        #expect(op.transform(position: 2) == 2)
        #expect(op.transform(position: 3) == 5)
    }

    @Test func theAuthorsOwnCursorMovesPastWhatItTyped() {
        let op = TextOperation([.retain(2), .insert("😀😀"), .retain(2)])
        #expect(op.transform(position: 2, isOwnEdit: true) == 4)
        #expect(op.transform(position: 1, isOwnEdit: true) == 1)
    }

    @Test func aCursorInsideDeletedTextMovesToWhereItWas() {
        let op = TextOperation([.retain(1), .delete(3), .retain(2)])
        #expect(op.transform(position: 0) == 0)
        #expect(op.transform(position: 1) == 1)
        #expect(op.transform(position: 3) == 1)
        #expect(op.transform(position: 4) == 1)
        #expect(op.transform(position: 6) == 3)
    }

    @Test func aCursorInAReplacedRangeEndsAfterTheReplacement() {
        // "abcdef": someone selects "cde" and types "X".
        let op = TextOperation([.retain(2), .insert("X"), .delete(3), .retain(1)])
        #expect(op.transform(position: 2) == 2)
        #expect(op.transform(position: 3) == 3)
        #expect(op.transform(position: 5) == 3)
        #expect(op.transform(position: 6) == 4)
    }

    @Test func positionsOutsideTheDocumentAreClamped() {
        let op = TextOperation([.retain(2), .insert("x")])
        #expect(op.transform(position: -4) == 0)
        #expect(op.transform(position: 99) == 2)
        #expect(op.transform(position: 99, isOwnEdit: true) == 3)
    }

    // MARK: Vectors shared with web/lib/ot.js

    @Test func everySharedVectorIsReproduced() throws {
        let fixture = try OTVectorFixture.load()
        #expect(fixture.vectors.count >= 30)
        for vector in fixture.vectors {
            let name = vector["name"]?.stringValue ?? "?"
            let doc = try #require(vector["doc"]?.stringValue)
            let a = try TextOperation(json: #require(vector["a"]))
            let b = try TextOperation(json: #require(vector["b"]))
            let (aPrime, bPrime) = try TextOperation.transform(a, b)
            // JSONValue compares strings as Swift does, by canonical equivalence, so the operations
            // are also compared as operations, which is exact.
            #expect(aPrime.json == vector["aPrime"], "vector \(name): aPrime")
            #expect(try aPrime == TextOperation(json: #require(vector["aPrime"])), "vector \(name): aPrime")
            #expect(bPrime.json == vector["bPrime"], "vector \(name): bPrime")
            #expect(try bPrime == TextOperation(json: #require(vector["bPrime"])), "vector \(name): bPrime")
            let composed = try a.compose(bPrime)
            #expect(composed.json == vector["composed"], "vector \(name): composed")
            #expect(try composed == TextOperation(json: #require(vector["composed"])), "vector \(name): composed")
            #expect(try composed.apply(to: doc).scalars == vector["result"]?.stringValue?.scalars, "vector \(name): result")
            for position in vector["positions"]?.arrayValue ?? [] {
                let triple = try #require(position.arrayValue?.compactMap(\.intValue).map(Int.init))
                try #require(triple.count == 3)
                #expect(a.transform(position: triple[0]) == triple[1], "vector \(name): position \(triple[0])")
                #expect(a.transform(position: triple[0], isOwnEdit: true) == triple[2],
                        "vector \(name): own position \(triple[0])")
            }
        }
    }

    @Test func everySharedInvalidVectorIsRejectedWithTheSameMessage() throws {
        let fixture = try OTVectorFixture.load()
        #expect(!fixture.invalid.isEmpty)
        for vector in fixture.invalid {
            let json = try #require(vector["json"])
            let message = try #require(vector["message"]?.stringValue)
            #expect(throws: PanesError(.invalidOperation, message, field: "operation")) {
                try TextOperation(json: json)
            }
        }
    }
}

/// `Tests/Fixtures/ot-vectors.json`, written by `Tests/web/ot-vectors.test.mjs` from the
/// JavaScript implementation and read here so both languages are held to one answer.
struct OTVectorFixture {
    var vectors: [JSONValue]
    var invalid: [JSONValue]

    static func load() throws -> OTVectorFixture {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/ot-vectors.json")
        let root = try JSONDecoder().decode(AnyJSON.self, from: Data(contentsOf: url)).value
        return OTVectorFixture(vectors: root["vectors"]?.arrayValue ?? [], invalid: root["invalid"]?.arrayValue ?? [])
    }
}

/// Any JSON document as a `JSONValue`, through Foundation's decoder (the core has no parser of
/// its own, and the tests of the core should not need jansson).
private struct AnyJSON: Decodable {
    var value: JSONValue

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            value = .null
        } else if let bool = try? container.decode(Bool.self) {
            value = .bool(bool)
        } else if let int = try? container.decode(Int64.self) {
            value = .int(int)
        } else if let double = try? container.decode(Double.self) {
            value = .double(double)
        } else if let string = try? container.decode(String.self) {
            value = .string(string)
        } else if let array = try? container.decode([AnyJSON].self) {
            value = .array(array.map(\.value))
        } else {
            value = .object(JSONObject(try container.decode([String: AnyJSON].self).mapValues(\.value)))
        }
    }
}
