// The SQLite store's side of editing one document: committing one appended operation per
// batch (as the runtime does today), and writing a snapshot of the whole text.
import Glibc
import PanesCore
import PanesStorage

enum StoreBench {
    struct Result {
        var append: Cost
        var appendWallMicroseconds: Double
        var snapshot: Cost
        var snapshotWallMicroseconds: Double
    }

    static func run(text: String, appends: Int, snapshots: Int, synchronous: SQLiteSynchronous) throws -> Result {
        let temporary = try TemporaryStore(name: "store", synchronous: synchronous)
        defer { temporary.remove() }
        let store = temporary.store
        let id = DocumentID("doc_bench")
        var length = text.unicodeScalars.count
        let around = length
        try store.apply([.createDocument(DocumentRecord(id: id, workspace: "bench", title: "Bench", createdAt: 0,
                                                        createdBy: "bench", modifiedAt: 0, length: length),
                                         text: text)])
        var random = SplitMix64(seed: 3)
        var revision: Int64 = 0
        let author = DocumentAuthor(scene: "scn_bench", user: "bench", name: "Bench")

        var wall = wallClock()
        let append = try Meter.measure(operations: appends) {
            for _ in 0..<appends {
                let key = Typing.keystroke(length: length, around: around, using: &random)
                var operation = TextOperation()
                operation.retain(key.at)
                operation.insert(key.insert)
                operation.delete(key.delete)
                operation.retain(length - key.at - key.delete)
                revision += 1
                length = operation.targetLength
                let entry = StoredOperation(revision: revision, operation: operation, opId: "b:\(revision)",
                                            author: author, createdAt: revision)
                try store.apply([.appendOperation(id, entry, length: length)])
            }
        }
        let appendWall = (wallClock() - wall) / Double(appends)

        wall = wallClock()
        #if PANES_BASELINE
        let snapshotText = text
        #else
        let snapshotText = Rope(text)
        #endif
        let snapshot = try Meter.measure(operations: snapshots) {
            for _ in 0..<snapshots {
                try store.apply([.snapshotDocument(id, revision: revision, text: snapshotText, keepFrom: revision)])
            }
        }
        let snapshotWall = (wallClock() - wall) / Double(snapshots)
        return Result(append: append, appendWallMicroseconds: appendWall, snapshot: snapshot,
                      snapshotWallMicroseconds: snapshotWall)
    }

}

/// A SQLite store in a folder of its own under /tmp, removed with it.
struct TemporaryStore {
    let path: String
    let store: SQLiteStore
    private let directory: String

    init(name: String, synchronous: SQLiteSynchronous) throws {
        directory = "/tmp/panes-docbench-\(name)-\(getpid())"
        mkdir(directory, 0o700)
        path = directory + "/panes.sqlite"
        store = try SQLiteStore(path: path, synchronous: synchronous)
    }

    func remove() {
        store.close()
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        rmdir(directory)
    }
}

/// Microseconds on the monotonic clock.
func wallClock() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) * 1_000_000 + Double(time.tv_nsec) / 1_000
}
