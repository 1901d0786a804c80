/// The request methods an API request may use. lws 4.1 parses these and a few more (HEAD,
/// OPTIONS, CONNECT); a request with any other method is not HTTP to it and is dropped
/// without an answer.
public enum HTTPMethod: String, Sendable, CaseIterable {
    case get = "GET"
    case post = "POST"
    case put = "PUT"
    case patch = "PATCH"
    case delete = "DELETE"

    /// Methods whose request carries a body: lws reads one only when `Content-Length` says how
    /// long it is (it does not decode `Transfer-Encoding: chunked`), so these must send one.
    var requiresContentLength: Bool {
        self == .post || self == .put || self == .patch
    }
}
