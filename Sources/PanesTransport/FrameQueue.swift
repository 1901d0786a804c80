/// A FIFO of frames for one connection: amortised O(1) push and pop without the cost of
/// `Array.removeFirst`.
struct FrameQueue {
    private var frames: [OutboundFrame] = []
    private var head = 0

    var count: Int { frames.count - head }
    var isEmpty: Bool { head == frames.count }

    mutating func push(_ frame: OutboundFrame) { frames.append(frame) }

    mutating func pop() -> OutboundFrame? {
        guard head < frames.count else { return nil }
        let frame = frames[head]
        head += 1
        if head == frames.count {
            frames.removeAll(keepingCapacity: frames.capacity <= 64)
            head = 0
        } else if head >= 1024 && head * 2 >= frames.count {
            frames.removeFirst(head)
            head = 0
        }
        return frame
    }

    mutating func removeAll() {
        frames.removeAll()
        head = 0
    }
}
