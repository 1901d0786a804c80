// CLibWebSocketsAlloc's pool, on pools of the tests' own (the process's, installed in lws, is
// shared with every server the tests start): which allocations it serves, that a slot keeps its
// bytes, that an emptied block's pages go back to the kernel unless kept, and that threads never
// get one slot twice.
#if os(Linux)
import CLibWebSocketsAlloc
import Foundation
import Glibc
import Testing

@Suite struct LWSAllocTests {
    static let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    static let blockBytes = pws_pool_block_bytes()

    /// A pool of `blocks` blocks keeping `keep`, destroyed after `body`.
    func withPool(blocks: Int = 64, keep: Int = 2, _ body: (OpaquePointer) throws -> Void) throws {
        let pool = try #require(pws_pool_create(blocks, keep))
        defer { pws_pool_destroy(pool) }
        try body(pool)
    }

    func allocate(_ pool: OpaquePointer, _ size: Int, _ reason: String) -> UnsafeMutableRawPointer? {
        pws_pool_realloc(pool, nil, size, reason)
    }

    func free(_ pool: OpaquePointer, _ pointer: UnsafeMutableRawPointer?) {
        #expect(pws_pool_realloc(pool, pointer, 0, "lws_free") == nil)
    }

    /// Pages of the pool's region the kernel holds in memory (mincore).
    func residentPages(_ pool: OpaquePointer) -> Int {
        var bytes = 0
        let base = pws_pool_region(pool, &bytes)
        var vector = [UInt8](repeating: 0, count: bytes / Self.page)
        #expect(mincore(base, bytes, &vector) == 0)
        return vector.reduce(0) { $0 + Int($1 & 1) }
    }

    func fill(_ pointer: UnsafeMutableRawPointer, _ count: Int, with byte: UInt8) {
        pointer.initializeMemory(as: UInt8.self, repeating: byte, count: count)
    }

    func holds(_ pointer: UnsafeMutableRawPointer, _ count: Int, _ byte: UInt8) -> Bool {
        UnsafeRawBufferPointer(start: pointer, count: count).allSatisfy { $0 == byte }
    }

    @Test func headerTablesComeFromThePoolAndEverythingElseFromMalloc() throws {
        try withPool { pool in
            let table = try #require(allocate(pool, 976, "ah struct"))
            let data = try #require(allocate(pool, 4_096, "ah data"))
            let buffer = try #require(allocate(pool, 2_068, "rx_ubuf"))
            let near = try #require(allocate(pool, 976, "ah structure"))
            #expect(pws_pool_owns(pool, table) == 1 && pws_pool_owns(pool, data) == 1)
            #expect(pws_pool_owns(pool, buffer) == 0 && pws_pool_owns(pool, near) == 0)
            // Each size has its own slots: 1 KiB and 4 KiB, page-aligned for the data.
            #expect(Int(bitPattern: data) % Self.page == 0 && Int(bitPattern: table) % 1_024 == 0)
            let counts = pws_pool_counts(pool)
            #expect(counts.slots_in_use == 2 && counts.blocks_in_use == 2 && counts.pooled == 2)
            for pointer in [table, data, buffer, near] { free(pool, pointer) }
            #expect(pws_pool_counts(pool).slots_in_use == 0)
        }
    }

    /// lws resizes with its allocator too: a size that still fits the slot stays, a larger one
    /// moves to malloc with the slot's bytes and frees the slot.
    @Test func aSlotKeepsItsBytesWithinItAndMovesToMallocWhenItGrows() throws {
        try withPool { pool in
            let table = try #require(allocate(pool, 900, "ah struct"))
            fill(table, 900, with: 0x5a)
            let same = try #require(pws_pool_realloc(pool, table, 1_024, "ah struct"))
            #expect(same == table)
            let moved = try #require(pws_pool_realloc(pool, same, 3_000, "ah struct"))
            #expect(pws_pool_owns(pool, moved) == 0)
            #expect(holds(moved, 900, 0x5a))
            #expect(pws_pool_counts(pool).slots_in_use == 0)
            free(pool, moved)
        }
    }

    /// A block holding a slot in use is never given back: its neighbour's free leaves the slot's
    /// bytes and pages as they were.
    @Test func freeingASlotLeavesItsNeighboursBytes() throws {
        try withPool(keep: 0) { pool in
            let first = try #require(allocate(pool, 4_096, "ah data"))
            let second = try #require(allocate(pool, 4_096, "ah data"))
            fill(first, 4_096, with: 1)
            fill(second, 4_096, with: 2)
            free(pool, first)
            #expect(holds(second, 4_096, 2))
            let counts = pws_pool_counts(pool)
            #expect(counts.blocks_in_use == 1 && counts.blocks_given_back == 0)
            // The freed slot is the next one handed out, and its bytes are the caller's to set.
            #expect(allocate(pool, 4_000, "ah data") == first)
            free(pool, first)
            free(pool, second)
            #expect(pws_pool_counts(pool).blocks_given_back == 1)
        }
    }

    /// A connect burst's empty blocks keep their pages while as many are in use; once all its
    /// tables are freed, only the two kept blocks' pages are resident.
    @Test func aSettledBurstGivesBackAllButTheKeptBlocks() throws {
        try withPool(blocks: 64, keep: 2) { pool in
            var pointers: [UnsafeMutableRawPointer] = []
            for index in 0..<600 {
                let table = try #require(allocate(pool, 976, "ah struct"))
                let data = try #require(allocate(pool, 4_096, "ah data"))
                fill(table, 976, with: UInt8(index % 251))
                fill(data, 4_096, with: UInt8((index + 1) % 251))
                pointers += [table, data]
            }
            // 600 tables: 10 blocks of 64 1 KiB slots, 38 of 16 4 KiB ones; the pages written are
            // resident: 600 of data and 150 of structs (4 KiB pages).
            let written = 600 * 4_096 / Self.page + 600 * 1_024 / Self.page
            #expect(pws_pool_counts(pool).blocks_in_use == 48)
            #expect(residentPages(pool) == written)
            for index in 0..<600 {
                #expect(holds(pointers[2 * index], 976, UInt8(index % 251)))
                #expect(holds(pointers[2 * index + 1], 4_096, UInt8((index + 1) % 251)))
            }
            // Half the burst done (the first 300 requests' tables, in order): 18 blocks of 4 KiB
            // slots and 4 of 1 KiB ones are empty, fewer than the 26 in use, so all keep their pages.
            for pointer in pointers[..<600] { free(pool, pointer) }
            let halfway = pws_pool_counts(pool)
            #expect(halfway.blocks_in_use == 26 && halfway.blocks_kept == 22 && halfway.blocks_given_back == 0)
            #expect(residentPages(pool) == written)
            // Settled: all but the two last emptied give their pages back.
            for pointer in pointers[600...] { free(pool, pointer) }
            let counts = pws_pool_counts(pool)
            #expect(counts.slots_in_use == 0 && counts.blocks_in_use == 0)
            #expect(counts.blocks_kept == 2 && counts.blocks_given_back == 46)
            #expect(residentPages(pool) == 2 * Self.blockBytes / Self.page)

            // The next burst reuses the kept blocks first, then the given-back ones (zeroed).
            let again = try #require(allocate(pool, 4_096, "ah data"))
            #expect(pws_pool_owns(pool, again) == 1)
            #expect(pws_pool_counts(pool).blocks_kept == 1)
            free(pool, again)
        }
    }

    /// With every block holding slots in use, more tables go to malloc, and are freed there.
    @Test func aFullRegionSendsTablesToMalloc() throws {
        try withPool(blocks: 1, keep: 1) { pool in
            let slots = Self.blockBytes / 4_096
            var pointers = try (0..<slots).map { _ in try #require(allocate(pool, 4_096, "ah data")) }
            #expect(pointers.allSatisfy { pws_pool_owns(pool, $0) == 1 })
            let extra = try #require(allocate(pool, 4_096, "ah data"))
            let small = try #require(allocate(pool, 976, "ah struct"))
            #expect(pws_pool_owns(pool, extra) == 0 && pws_pool_owns(pool, small) == 0)
            #expect(pws_pool_counts(pool).overflowed == 2)
            pointers += [extra, small]
            for pointer in pointers { free(pool, pointer) }
            let counts = pws_pool_counts(pool)
            #expect(counts.slots_in_use == 0 && counts.blocks_kept == 1)
        }
    }

    /// A table larger than a block (lws' header limit is at most 32 KiB in Panes) is malloc's.
    @Test func aTableOverABlockIsMallocs() throws {
        try withPool { pool in
            let large = try #require(allocate(pool, Self.blockBytes + 1, "ah data"))
            let largest = try #require(allocate(pool, Self.blockBytes, "ah data"))
            #expect(pws_pool_owns(pool, large) == 0 && pws_pool_owns(pool, largest) == 1)
            free(pool, large)
            free(pool, largest)
        }
    }

    /// The pool, whose calls take its lock, and a count per thread that only that thread writes
    /// (read once all have ended): safe to share with `concurrentPerform`'s threads.
    struct Shared: @unchecked Sendable {
        let pool: OpaquePointer
        let failures: UnsafeMutablePointer<Int>
    }

    /// Threads allocating, writing, checking and freeing tables at once: no slot is handed to
    /// two at a time (each finds its own bytes), and every slot comes back.
    @Test func threadsAtOnceNeverShareASlot() throws {
        try withPool(blocks: 3, keep: 1) { pool in
            let shared = Shared(pool: pool, failures: .allocate(capacity: 4))
            shared.failures.initialize(repeating: 0, count: 4)
            defer { shared.failures.deallocate() }
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                let (pool, failures) = (shared.pool, shared.failures)
                var held: [(UnsafeMutableRawPointer, Int, UInt8)] = []
                for round in 0..<3_000 {
                    let size = [976, 4_096, 8_000][(round + thread) % 3]
                    let byte = UInt8(truncatingIfNeeded: thread * 64 + round)
                    if let pointer = pws_pool_realloc(pool, nil, size, size == 976 ? "ah struct" : "ah data") {
                        fill(pointer, size, with: byte)
                        held.append((pointer, size, byte))
                    }
                    if held.count > 40 || round % 7 == 0, !held.isEmpty {
                        let (pointer, size, byte) = held.removeFirst()
                        if !holds(pointer, size, byte) { failures[thread] += 1 }
                        _ = pws_pool_realloc(pool, pointer, 0, "lws_free")
                    }
                }
                for (pointer, size, byte) in held {
                    if !holds(pointer, size, byte) { failures[thread] += 1 }
                    _ = pws_pool_realloc(pool, pointer, 0, "lws_free")
                }
            }
            #expect((0..<4).map { shared.failures[$0] } == [0, 0, 0, 0])
            let counts = pws_pool_counts(pool)
            #expect(counts.slots_in_use == 0 && counts.blocks_in_use == 0)
            // One thread alone holds 41 tables of three sizes, 4 blocks' worth: the region's end was met.
            #expect(counts.overflowed > 0)
        }
    }
}
#endif
