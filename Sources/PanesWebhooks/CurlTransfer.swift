// Threading: created on the thread that submits, then handed to the HTTP thread, which alone
// touches it (and its curl handle) from then on, until it finishes there.
internal import CCurl
import Foundation

/// One POST as a libcurl easy handle: the request's options, the memory curl points into
/// (headers list, body) kept alive until it finishes, and the answer's first bytes.
final class CurlTransfer {
    let handle: UnsafeMutableRawPointer
    let completion: @Sendable (WebhookResponse) -> Void
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let body: UnsafeMutableRawBufferPointer
    private let maxResponseBytes: Int
    private(set) var received: [UInt8] = []
    /// Reading stopped at `maxResponseBytes`: curl reports a write error, which is not one.
    private(set) var capped = false
    let startedAt = DispatchTime.now().uptimeNanoseconds

    init?(_ request: WebhookRequest, completion: @escaping @Sendable (WebhookResponse) -> Void) {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.completion = completion
        maxResponseBytes = request.maxResponseBytes
        body = .allocate(byteCount: max(request.body.count, 1), alignment: 1)
        body.copyBytes(from: request.body)
        // No Expect: 100-continue (a second's wait for a receiver that never says continue).
        for line in request.headers.map({ "\($0.name): \($0.value)" }) + ["Expect:"] {
            headerList = curl_slist_append(headerList, line)
        }
        _ = pcu_setopt_string(handle, CURLOPT_URL, request.url)
        // Only web URLs (no file://, no gopher://), and redirects are not followed: a receiver
        // that moved must be configured anew (Standard Webhooks counts a 3xx as a failure).
        _ = pcu_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = pcu_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        _ = pcu_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
        _ = pcu_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
        // Timeouts by poll, never by SIGALRM (this process has threads).
        _ = pcu_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = pcu_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, request.connectTimeoutMs)
        _ = pcu_setopt_long(handle, CURLOPT_TIMEOUT_MS, request.timeoutMs)
        _ = pcu_setopt_long(handle, CURLOPT_POST, 1)
        _ = pcu_setopt_size(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
        _ = pcu_setopt_pointer(handle, CURLOPT_POSTFIELDS, body.baseAddress)
        _ = pcu_setopt_headers(handle, headerList)
        _ = pcu_setopt_string(handle, CURLOPT_USERAGENT, "Panes-Webhooks/1")
        _ = pcu_setopt_write_function(handle, curlTransferReceived)
        let owner = Unmanaged.passUnretained(self).toOpaque()
        _ = pcu_setopt_pointer(handle, CURLOPT_WRITEDATA, owner)
        _ = pcu_setopt_pointer(handle, CURLOPT_PRIVATE, owner)
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
        body.deallocate()
    }

    /// The transfer this handle belongs to (set as CURLOPT_PRIVATE).
    static func of(_ handle: UnsafeMutableRawPointer) -> CurlTransfer? {
        var owner: UnsafeMutableRawPointer?
        guard pcu_getinfo_private(handle, &owner) == CURLE_OK, let owner else { return nil }
        return Unmanaged<CurlTransfer>.fromOpaque(owner).takeUnretainedValue()
    }

    /// Takes the answer's bytes up to the cap; returning less than given stops the transfer.
    fileprivate func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
        let room = maxResponseBytes - received.count
        if bytes.count > room {
            received.append(contentsOf: bytes.prefix(max(room, 0)))
            capped = true
            return 0
        }
        received.append(contentsOf: bytes)
        return bytes.count
    }

    /// What curl's result means for the delivery.
    func response(for code: CURLcode) -> WebhookResponse {
        let duration = Int64((DispatchTime.now().uptimeNanoseconds - startedAt) / 1_000_000)
        var status = 0
        _ = pcu_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        let answered = code == CURLE_OK || (code == CURLE_WRITE_ERROR && capped)
        let outcome: WebhookResponse.Outcome
        if answered, status > 0 {
            outcome = .status(status, retryAfterMs: retryAfterMs())
        } else {
            let reason = String(cString: curl_easy_strerror(code))
            switch code {
            case CURLE_OPERATION_TIMEDOUT: outcome = .timedOut
            case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_UNSUPPORTED_PROTOCOL:
                outcome = .unreachable(reason)
            case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
                 CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR:
                outcome = .tls(reason)
            default:
                outcome = .failed(reason)
            }
        }
        return WebhookResponse(outcome: outcome, body: received, durationMs: duration)
    }

    /// `Retry-After` in seconds (an HTTP date is not read).
    private func retryAfterMs() -> Int64? {
        guard let value = pcu_response_header(handle, "Retry-After") else { return nil }
        return Int64(String(cString: value).trimmingCharacters(in: .whitespaces)).map { max($0, 0) * 1_000 }
    }
}

/// CURLOPT_WRITEFUNCTION: hands the bytes to their transfer.
private func curlTransferReceived(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
                                  _ owner: UnsafeMutableRawPointer?) -> Int {
    guard let owner, let data else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(owner).takeUnretainedValue()
    return transfer.receive(UnsafeRawBufferPointer(start: data, count: size * count))
}
