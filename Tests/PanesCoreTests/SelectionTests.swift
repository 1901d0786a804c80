import PanesCore
import Testing

struct SelectionTests {
    @Test func wireFormRoundTrips() throws {
        let selection = Selection(anchor: 7, head: 3)
        #expect(selection.json == ["anchor": 7, "head": 3])
        #expect(try Selection(json: ["anchor": 7, "head": 3]) == selection)
    }

    @Test func aBackwardSelectionKeepsItsDirectionButHasAnOrderedRange() {
        let selection = Selection(anchor: 7, head: 3)
        #expect(selection.range == 3..<7)
        #expect(!selection.isCaret)
        #expect(Selection(caret: 4).isCaret)
    }

    @Test func decodingClampsToTheDocumentLengthWhenGiven() throws {
        #expect(try Selection(json: ["anchor": 2, "head": 40], documentLength: 10) == Selection(anchor: 2, head: 10))
    }

    @Test func clampingMovesBothEndsIntoTheDocument() {
        #expect(Selection(anchor: -3, head: 12).clamped(toLength: 5) == Selection(anchor: 0, head: 5))
    }

    @Test(arguments: [
        (JSONValue.int(3), PanesError(.invalidField, "`selection` must be an object with `anchor` and `head`, not integer",
                                      field: "selection")),
        (["head": 1] as JSONValue, PanesError(.missingField, "`selection.anchor` is required", field: "selection.anchor")),
        (["anchor": 1, "head": -1] as JSONValue,
         PanesError(.invalidField, "`selection.head` must be between 0 and 2147483647", field: "selection.head")),
        (["anchor": "1", "head": 1] as JSONValue,
         PanesError(.invalidField, "`selection.anchor` must be an integer, not string", field: "selection.anchor")),
    ] as [(JSONValue, PanesError)])
    func decodingRejectsMalformedSelectionsNamingTheField(json: JSONValue, error: PanesError) {
        #expect(throws: error) { try Selection(json: json) }
    }

    @Test func aRemoteInsertAtACaretLeavesTheCaretBeforeIt() {
        let op = TextOperation([.retain(3), .insert("😀"), .retain(2)])
        #expect(Selection(caret: 3).transformed(by: op) == Selection(caret: 3))
        #expect(Selection(caret: 3).transformed(by: op, isOwnEdit: true) == Selection(caret: 4))
    }

    @Test func aSelectionMovesWithTextInsertedBeforeIt() {
        let op = TextOperation([.insert("𝒳𝒴"), .retain(5)])
        #expect(Selection(anchor: 4, head: 1).transformed(by: op) == Selection(anchor: 6, head: 3))
    }

    @Test func aSelectionShrinksWhenPartOfItIsDeleted() {
        let op = TextOperation([.retain(2), .delete(4), .retain(2)])
        #expect(Selection(anchor: 1, head: 4).transformed(by: op) == Selection(anchor: 1, head: 2))
        #expect(Selection(anchor: 3, head: 5).transformed(by: op) == Selection(caret: 2))
        #expect(Selection(anchor: 7, head: 3).transformed(by: op) == Selection(anchor: 3, head: 2))
    }
}
