// Threading: one thread of its own (started by `start`) owns the curl multi handle and every
// transfer in it; other threads only append to `submitted` under its lock and wake the
// thread with curl_multi_wakeup (which is safe from any thread). Completions run on the HTTP
// thread. That is why the class can be `@unchecked Sendable`.
internal import CCurl
import Foundation
import Synchronization

/// Sends webhook POSTs concurrently through one libcurl multi handle, on a thread of its own:
/// a receiver that is slow or does not answer holds only its own transfers, never the thread.
public final class WebhookHTTPClient: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    private let submitted = Mutex<[(WebhookRequest, @Sendable (WebhookResponse) -> Void)]>([])
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var started = false
    /// Transfers in the multi handle, by easy handle (HTTP thread only).
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    /// curl_global_init, once per process, before any transfer.
    private static let initialized: Bool = pcu_global_init() == CURLE_OK

    public init() throws {
        guard Self.initialized, let multi = curl_multi_init() else {
            throw WebhookEngineError("libcurl could not be initialized")
        }
        self.multi = multi
    }

    deinit {
        for (_, transfer) in active { curl_multi_remove_handle(multi, transfer.handle) }
        active.removeAll()
        curl_multi_cleanup(multi)
    }

    public func start() {
        guard !started else { return }
        started = true
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "webhook-http"
        thread.start()
    }

    /// Ends the thread; transfers under way are dropped without their completions (their
    /// deliveries' leases run out and another attempt is made).
    public func stop() {
        guard started, !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        curl_multi_wakeup(multi)
        finished.wait()
    }

    /// Starts a POST; `completion` runs on the HTTP thread when it ends. Safe from any thread.
    public func send(_ request: WebhookRequest, completion: @escaping @Sendable (WebhookResponse) -> Void) {
        submitted.withLock { $0.append((request, completion)) }
        curl_multi_wakeup(multi)
    }

    private func run() {
        while !stopping.load(ordering: .acquiring) {
            for (request, completion) in submitted.withLock({ list in defer { list.removeAll() }; return list }) {
                guard let transfer = CurlTransfer(request, completion: completion) else {
                    completion(WebhookResponse(outcome: .failed("libcurl could not make a transfer")))
                    continue
                }
                active[transfer.handle] = transfer
                curl_multi_add_handle(multi, transfer.handle)
            }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard pcu_message_is_done(message) != 0, let handle = pcu_message_handle(message),
                      let transfer = active.removeValue(forKey: handle) else { continue }
                let response = transfer.response(for: pcu_message_result(message))
                curl_multi_remove_handle(multi, handle)
                transfer.completion(response)
            }
            var ready: Int32 = 0
            // Wakes for sockets, curl's own timeouts (it caps the wait), `send` and `stop`.
            curl_multi_poll(multi, nil, 0, 1_000, &ready)
        }
    }
}

public struct WebhookEngineError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
