// Applying keystroke operations to a document held as a String (how documents were held
// before the rope) and as a Rope.
import PanesCore

enum ApplyBench {
    /// Keystroke operations, each spanning the document the ones before it produce.
    static func operations(count: Int, startLength: Int, seed: UInt64) -> [TextOperation] {
        var random = SplitMix64(seed: seed)
        var length = startLength
        return (0..<count).map { _ in
            let key = Typing.keystroke(length: length, around: startLength, using: &random)
            var operation = TextOperation()
            operation.retain(key.at)
            operation.insert(key.insert)
            operation.delete(key.delete)
            operation.retain(length - key.at - key.delete)
            length = operation.targetLength
            return operation
        }
    }

    static func run(bytes: Int, operations count: Int, stringOperations: Int) throws -> [(String, Cost)] {
        var random = SplitMix64(seed: 1)
        let text = Typing.text(bytes: bytes, using: &random)
        let operations = Self.operations(count: count, startLength: text.unicodeScalars.count, seed: 2)
        var results: [(String, Cost)] = []

        var string = text
        let stringCount = min(stringOperations, count)
        results.append(("String", try Meter.measure(operations: stringCount) {
            for operation in operations.prefix(stringCount) { string = try operation.apply(to: string) }
        }))
        #if !PANES_BASELINE
        var rope = Rope(text)
        results.append(("Rope", try Meter.measure(operations: count) {
            for operation in operations { rope = try operation.apply(to: rope) }
        }))
        // The text both came to, compared over the operations both applied.
        var check = Rope(text)
        for operation in operations.prefix(stringCount) { check = try operation.apply(to: check) }
        precondition(String(check) == string, "the rope and the string disagree")
        #endif
        return results
    }
}
