// panes-docbench: what one edit of a document costs, by document size, old way and new.
//
//   swift build -c release --product panes-docbench
//   .build/release/panes-docbench [apply] [hub] [store] [versions] [--quick]
//
// `apply`: keystroke operations applied to a String (how documents were held before) and to
// a Rope, on a 1 KB and a 1 MB text. `hub`: keystrokes through the hub, 50 editors each a few
// revisions behind, store left out; and the heap the open document holds. `store`: one
// appended operation per SQLite commit, and one snapshot, on a 1 MB document. `versions`: what a
// kept version costs in the SQLite store and in the hub, and the diff between two versions.
// CPU is the measuring thread's; allocations are counted by interposing malloc.
// Built with -DPANES_BASELINE it compiles against a tree without the rope, for comparison.
import PanesCore
import PanesStorage

let arguments = Set(CommandLine.arguments.dropFirst())
let quick = arguments.contains("--quick")
let sections = arguments.subtracting(["--quick"])
func wants(_ section: String) -> Bool { sections.isEmpty || sections.contains(section) }
let sizes = [("1 KB", 1 << 10), ("1 MB", 1 << 20)]

func row(_ columns: [String]) {
    print(columns.enumerated().map { index, column in
        index == 0 ? column + String(repeating: " ", count: max(0, 34 - column.count))
            : String(repeating: " ", count: max(0, 12 - column.count)) + column
    }.joined())
}

func format(_ value: Double, _ digits: Int = 2) -> String {
    let scale = (0..<digits).reduce(1.0) { value, _ in value * 10 }
    let rounded = (value * scale).rounded() / scale
    return "\(rounded)"
}

#if PANES_BASELINE
print("panes-docbench (baseline build: documents held as String)")
#else
print("panes-docbench (documents held as Rope)")
#endif

if wants("apply") {
    print("\n== apply: keystroke operations applied to the text, CPU and allocations per operation")
    row(["", "µs/op", "allocs/op"])
    for (name, bytes) in sizes {
        let count = quick ? 2_000 : 20_000
        let stringCount = bytes > 4_096 ? (quick ? 200 : 2_000) : count
        for (kind, cost) in try ApplyBench.run(bytes: bytes, operations: count, stringOperations: stringCount) {
            row(["\(name), \(kind)", format(cost.microsecondsPerOperation), format(cost.allocationsPerOperation, 1)])
        }
    }
}

if wants("hub") {
    print("\n== hub: edits by 50 editors, each 10 revisions behind; service-thread CPU per edit, store left out")
    row(["", "µs/op", "allocs/op", "held KB", "held/text"])
    for (name, bytes) in sizes {
        var random = SplitMix64(seed: 4)
        let text = Typing.text(bytes: bytes, using: &random)
        var bench = HubBench(retention: 1_000, snapshotEvery: 100)
        bench.setUp(text: text, editors: 50)
        let warmup = 1_200  // past retention + snapshotEvery, so the log is as long as it gets
        bench.edit(count: warmup, lag: 10, seed: 5)
        let count = quick ? 1_000 : 5_000
        let cost = Meter.measure(operations: count) { bench.edit(count: count, lag: 10, seed: 6) }
        let open = Meter.heapInUse()
        bench.closeAll()
        let held = open - Meter.heapInUse()
        row(["\(name) document", format(cost.microsecondsPerOperation), format(cost.allocationsPerOperation, 1),
             "\(held / 1_024)", format(Double(held) / Double(text.utf8.count))])
    }
}

if wants("store") {
    print("\n== store: SQLite, synchronous=FULL; one appended operation per commit, and one snapshot")
    row(["", "CPU µs", "wall µs", "allocs"])
    for (name, bytes) in sizes {
        var random = SplitMix64(seed: 7)
        let text = Typing.text(bytes: bytes, using: &random)
        let result = try StoreBench.run(text: text, appends: quick ? 200 : 1_000, snapshots: quick ? 5 : 20,
                                        synchronous: .full)
        row(["\(name), append one operation", format(result.append.microsecondsPerOperation, 1),
             format(result.appendWallMicroseconds, 1), format(result.append.allocationsPerOperation, 1)])
        row(["\(name), write a snapshot", format(result.snapshot.microsecondsPerOperation, 1),
             format(result.snapshotWallMicroseconds, 1), format(result.snapshot.allocationsPerOperation, 1)])
    }
}

#if !PANES_BASELINE
if wants("versions") {
    print("\n== versions: SQLite (synchronous=FULL) bytes and time per kept version, hub heap left per save,")
    print("   and the diff between two versions 200 keystrokes apart")
    row(["", "KB/version", "/text", "save µs", "read µs", "diff µs", "hub B/save"])
    for (name, bytes) in sizes {
        var random = SplitMix64(seed: 9)
        let text = Typing.text(bytes: bytes, using: &random)
        let count = quick ? 10 : 50
        let result = try VersionBench.run(text: text, versions: count, keystrokes: 200)
        row(["\(name) document", format(result.bytesPerVersion / 1_024, 1), format(result.bytesPerVersion / Double(text.utf8.count)),
             format(result.saveWallMicroseconds, 0), format(result.readWallMicroseconds, 0), format(result.diffWallMicroseconds, 0),
             format(result.hubHeldBytesPerVersion, 0)])
    }
}
#endif
