// What versions cost (issue 25 §4): in the SQLite store, the bytes each kept version takes and
// the time to save and read one; in the hub, the heap a saved version leaves behind (none is
// meant to: records and texts stay in the store); and the diff `compareVersions` and
// `restoreVersion` compute, between versions some keystrokes apart.
// Not in a PANES_BASELINE build: the tree it compiles against has no versions.
#if !PANES_BASELINE
import Glibc
import PanesCore
import PanesStorage

enum VersionBench {
    struct Result {
        var bytesPerVersion: Double
        var saveWallMicroseconds: Double
        var readWallMicroseconds: Double
        var diffWallMicroseconds: Double
        var hubHeldBytesPerVersion: Double
    }

    /// - Parameters:
    ///   - versions: how many checkpoints to keep (none is pruned)
    ///   - keystrokes: the edits between two versions
    static func run(text: String, versions: Int, keystrokes: Int) throws -> Result {
        let temporary = try TemporaryStore(name: "versions", synchronous: .full)
        defer { temporary.remove() }
        let store = temporary.store
        let path = temporary.path
        let id = DocumentID("doc_bench")
        try store.apply([.createDocument(DocumentRecord(id: id, workspace: "bench", title: "Bench", createdAt: 0,
                                                        createdBy: "bench", modifiedAt: 0,
                                                        length: text.unicodeScalars.count), text: text)])
        try store.checkpoint()
        let before = fileSize(path)
        var random = SplitMix64(seed: 11)
        var rope = Rope(text)
        var saveWall = 0.0
        var texts: [String] = []
        for index in 0..<versions {
            for _ in 0..<keystrokes {
                let length = rope.scalarCount
                let key = Typing.keystroke(length: length, around: text.unicodeScalars.count, using: &random)
                var operation = TextOperation()
                operation.retain(key.at)
                operation.insert(key.insert)
                operation.delete(key.delete)
                operation.retain(length - key.at - key.delete)
                rope = try operation.apply(to: rope)
            }
            let record = VersionRecord(id: "ver_\(index)", document: id, kind: .checkpoint, revision: Int64(index),
                                       name: nil, createdAt: Millis(index), createdBy: "bench", length: rope.scalarCount)
            let start = wallClock()
            try store.apply([.saveVersion(record, text: rope, keepCheckpoints: versions)])
            saveWall += wallClock() - start
            if index < 2 { texts.append(String(rope)) }
        }
        try store.checkpoint()
        let bytes = Double(fileSize(path) - before) / Double(versions)

        var start = wallClock()
        let reads = min(versions, 20)
        for index in 0..<reads { _ = try store.loadVersion(id, id: "ver_\(index)") }
        let readWall = (wallClock() - start) / Double(reads)

        start = wallClock()
        let diffs = 5
        for _ in 0..<diffs { _ = TextDiff.operation(from: texts[0], to: texts[1]) }
        let diffWall = (wallClock() - start) / Double(diffs)

        return Result(bytesPerVersion: bytes, saveWallMicroseconds: saveWall / Double(versions), readWallMicroseconds: readWall,
                      diffWallMicroseconds: diffWall, hubHeldBytesPerVersion: hubHeld(text: text, versions: versions))
    }

    /// The heap the hub holds after `versions` saves of the open document (their persists
    /// dropped, as the store thread would have written and let go of them).
    static func hubHeld(text: String, versions: Int) -> Double {
        var bench = HubBench(retention: 1_000, snapshotEvery: 100)
        bench.setUp(text: text, editors: 1)
        let before = Meter.heapInUse()
        for index in 0..<versions {
            let reply = bench.request(bench.editors[0], "saveVersion", ["document": .string(bench.document),
                                                                        "name": .string("v\(index)")]).reply
            guard reply["ok"] == true else { fatalError("saveVersion failed: \(reply)") }
        }
        return Double(Meter.heapInUse() - before) / Double(versions)
    }

    private static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }
}
#endif
