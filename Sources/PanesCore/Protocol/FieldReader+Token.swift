extension FieldReader {
    /// A bearer token (`connect`'s `auth.token`, `refreshToken`'s `token`), at most
    /// `maxTokenBytes`: signed tokens with RSA signatures and several workspaces run to a few
    /// kilobytes, and the JWT library copies the whole token onto the stack.
    func token(_ key: String, settings: Settings) throws(PanesError) -> String? {
        guard let token = try string(key, maxLength: .max) else { return nil }
        let size = token.utf8.count
        guard size <= settings.maxTokenBytes else {
            throw .tooLarge(path(key), size: size, limit: settings.maxTokenBytes, setting: "maxTokenBytes")
        }
        guard size > 0 else { throw .invalid(path(key), "must not be empty") }
        return token
    }
}
