/// A FIFO of frames for one connection: amortised O(1) push and pop without the cost of
/// `Array.removeFirst`.
///
/// Its head is 32 bits (the queue holds at most `maxOutboundQueue` frames, at most 1,000,000,
/// and the head restarts at 0 once it has passed 1,024 and half the array): the queue is then
/// 12 bytes, and `ServerConnection`, which every idle scene holds, lays its next 4-byte field
/// in the other 4.
struct FrameQueue {
    private var frames: [OutboundFrame] = []
    private var head: Int32 = 0

    var count: Int { frames.count - Int(head) }
    var isEmpty: Bool { Int(head) == frames.count }

    mutating func push(_ frame: OutboundFrame) { frames.append(frame) }

    mutating func pop() -> OutboundFrame? {
        let index = Int(head)
        guard index < frames.count else { return nil }
        let frame = frames[index]
        head += 1
        if index + 1 == frames.count {
            frames.removeAll(keepingCapacity: frames.capacity <= 64)
            head = 0
        } else if index + 1 >= 1024 && (index + 1) * 2 >= frames.count {
            frames.removeFirst(index + 1)
            head = 0
        }
        return frame
    }

    mutating func removeAll() {
        frames.removeAll()
        head = 0
    }
}
