import PanesCore
import Testing

@Suite struct JSONValueTests {
    static let samples: [(JSONValue, String)] = [
        (JSONValue.null, "null"), (true, "true"), (false, "false"), (-12, "-12"), ("a\"b\n", "\"a\\\"b\\n\""),
        ("\u{1}", "\"\\u0001\""), ("é", "\"é\""), ([1, "x"], "[1,\"x\"]"), (["k": [true]], "{\"k\":[true]}"),
    ]

    @Test(arguments: samples)
    func encodedSizeCountsTheCompactJSONBytes(_ value: JSONValue, text: String) {
        #expect(value.encodedSize == text.utf8.count)
    }

    @Test func integersAndEqualRealsAreTheSameValue() {
        #expect(JSONValue.int(3).sameValue(as: .double(3)))
        #expect(!JSONValue.int(3).sameValue(as: .double(3.5)))
        #expect(JSONValue.object(["a": .int(1)]).sameValue(as: .object(["a": .double(1)])))
        #expect(JSONValue.double(2).intValue == 2)
        #expect(JSONValue.double(2.5).intValue == nil)
    }
}
