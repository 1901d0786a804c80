// Threading: `signal` may be called from any thread; `drain` by the one thread that waits (the
// heartbeat's). A pipe is safe to write and read from different threads.
import Glibc

/// A file descriptor that becomes readable when another thread signals: a wait on a socket
/// (`poll`) can wait on it too and so be woken early. A signal given while nobody waits is kept
/// until the next wait.
final class WakeSignal: @unchecked Sendable {
    /// The end to wait on, and the end `signal` writes to; -1 if the pipe could not be made.
    let descriptor: Int32
    private let writer: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        } else {
            ends = [-1, -1]
        }
        descriptor = ends[0]
        writer = ends[1]
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
        if writer >= 0 { Glibc.close(writer) }
    }

    func signal() {
        var byte: UInt8 = 1
        _ = write(writer, &byte, 1)
    }

    /// Clears what was signalled.
    func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(descriptor, &bytes, bytes.count) > 0 {}
    }
}
