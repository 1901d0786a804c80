// Threading model: one lws client context per process, serviced by its own thread. Client
// objects on other threads hand work to it through the inbox and `lws_cancel_service`;
// every lws call on a client connection happens on the loop thread. Results travel back
// through each client's own lock and condition.
internal import CLibWebSockets
import Foundation
import Synchronization

/// The shared lws client context and its service thread.
final class ClientLoop: @unchecked Sendable {
    static let shared = ClientLoop()

    private(set) var context: OpaquePointer?
    private let inbox = Inbox()
    /// Clients by number; touched on the loop thread only.
    var clients: [UInt64: WebSocketClient] = [:]
    private var retained: [UnsafeMutableRawPointer] = []

    private init() {
        signal(SIGPIPE, SIG_IGN)
        let protocols = calloc(2, MemoryLayout<lws_protocols>.stride)!.assumingMemoryBound(to: lws_protocols.self)
        retained.append(UnsafeMutableRawPointer(protocols))
        let name = strdup("panes-client")!
        retained.append(UnsafeMutableRawPointer(name))
        protocols[0].name = UnsafePointer(name)
        protocols[0].callback = clientCallback
        protocols[0].per_session_data_size = MemoryLayout<UInt64>.size
        protocols[0].rx_buffer_size = 64 * 1024

        var info = lws_context_creation_info()
        info.port = pws_port_no_listen()
        info.protocols = UnsafePointer(protocols)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.timeout_secs = 10
        context = lws_create_context(&info)
        let thread = Thread { [self] in
            while let context { if lws_service(context, 0) < 0 { break } }
        }
        thread.name = "panes-client-loop"
        thread.start()
    }

    func post(_ work: @escaping @Sendable () -> Void) {
        inbox.append(work)
        if let context { lws_cancel_service(context) }
    }

    func drainInbox() {
        for work in inbox.drain() { work() }
    }
}

func clientCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                    _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    let loop = ClientLoop.shared
    if reason == LWS_CALLBACK_EVENT_WAIT_CANCELLED {
        loop.drainInbox()
        return 0
    }
    guard let user, let client = loop.clients[user.load(as: UInt64.self)] else { return 0 }
    return client.handle(wsi, reason, input, length)
}
