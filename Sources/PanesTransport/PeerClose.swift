/// What RFC 6455 §5.5.1 and §7.4 allow in the close frame a peer sends.
///
/// lws 4.1 answers some invalid codes with 1002 itself (below 1000, 1004–1006, 1012–1015,
/// 1016–2999) but echoes the rest unchanged (5000 and up) and echoes a 1-byte payload too;
/// this check covers what it lets through.
enum PeerClose {
    /// Nil when the close payload is acceptable, else the close to answer with.
    static func violation(_ payload: UnsafeRawBufferPointer) -> (code: UInt16, reason: String)? {
        if payload.isEmpty { return nil }
        if payload.count == 1 { return (1002, "a close payload of 1 byte") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard isValidCode(code) else { return (1002, "invalid close code \(code)") }
        guard UTF8Validator.isValid(UnsafeRawBufferPointer(rebasing: payload.dropFirst(2))) else {
            return (1007, "close reason is not UTF-8")
        }
        return nil
    }

    /// Codes an endpoint may send: 1000–1003, 1007–1014 (1012–1014 registered with IANA since
    /// RFC 6455), 3000–4999. 1004–1006 and 1015 are reserved for reporting, never sent.
    static func isValidCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}
