// Threading: the service thread's (the timer and the callbacks that arm it run there).
internal import CLibWebSocketsAlloc

/// When lws's header tables' region (CLibWebSocketsAlloc) gives the pages of its empty blocks
/// back to the kernel.
///
/// Each upgrade and HTTP request holds a header table from its accept until its headers are
/// done with; in a burst of connects the tables in use rise and fall with every loop turn.
/// Giving an emptied block's pages back at once, as the region first did, made a reconnect
/// storm of 10,000 windows give back ~640 blocks and fault ~9,700 pages in again, each fault
/// and each madvise (which flushes every other thread's view of the pages) paid on the service
/// loop (bench/README.md, wp/stormwall). Now the region keeps them, and a trim gives back what
/// neither the tables in use nor the region's `keep` need, `headerTableTrimMilliseconds` after
/// connections began to arrive and again after that while tables are still in use, so a burst
/// that has settled holds no more than before.
extension WebSocketServer {
    /// Sets the trim's timer unless it is set: every accept and every HTTP request calls this
    /// (a header table may follow), so the first of a burst sets it and the rest find it set.
    func armHeaderTrim() {
        guard let headerTrimTimer, !headerTrimTimer.isScheduled else { return }
        headerTrimTimer.schedule(afterMilliseconds: UInt64(max(configuration.headerTableTrimMilliseconds, 0)))
    }

    /// The timer's work: the trim, then the timer again while tables are in use (they empty
    /// blocks later: a burst still arriving, a request still being read).
    func trimHeaderTables() {
        _ = pws_lws_allocator_trim()
        headerTrimsTaken += 1
        if pws_lws_allocator_counts().blocks_in_use > 0 { armHeaderTrim() }
    }
}
