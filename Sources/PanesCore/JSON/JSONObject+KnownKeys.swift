extension JSONObject {
    /// Field names the protocol uses (PROTOCOL.schema.json's property names), each made into a
    /// `String` once: a decoded frame's keys are looked up here by their bytes instead of being
    /// validated and built again for every frame (about 170 instructions a key, measured). A
    /// key not listed is built as before: the list only saves time.
    static let knownKeys = KnownKeys()

    /// The list in 256 buckets by length and first two bytes, so a lookup compares one or two
    /// entries.
    struct KnownKeys: Sendable {
        let entries: [(prefix: UInt64, count: Int, key: String)]
        /// Where each bucket's entries start in `entries`; the next bucket's start ends them.
        let starts: [Int]

        init() {
            let names = [
                "action", "active", "activity", "activityType", "anchor", "animation", "appState", "applied", "auth",
                "author", "by", "catchUp", "change", "changed", "client", "clientVersion", "code", "color", "configuration",
                "connectionOptions", "created", "createdAt", "createdBy", "data", "delivered", "document", "documentGone",
                "documents", "domain", "drag", "duplicate", "error", "exists", "expiresAt", "expiresInMs", "field", "focused",
                "forkedFrom", "from", "grantedAt", "grantedBy", "grants", "head", "id", "idempotencyKey", "ifVersion",
                "image", "initial", "isDefault", "items", "keyPath", "kind", "lastActiveAt", "left", "length", "limits",
                "link", "links", "locked", "maxActivityBytes", "maxMessageBytes", "maxUserInfoBytes", "message", "metadata",
                "mode", "modifiedAt", "name", "new", "now", "number", "observation", "observations", "ok", "old", "opId",
                "operation", "operations", "options", "outcome", "participantCount", "participants", "pending", "people",
                "persistentIdentifier", "pointer", "presence", "previous", "protocol", "protocolVersion",
                "rateLimitPerSecond", "re", "reason", "reconnectAfterMs", "removed", "request", "requestedBy", "restoration",
                "restorationMetadata", "result", "retryAfterMs", "revision", "revokedAt", "role", "savedAt", "scene",
                "secret", "selection", "server", "serverVersion", "session", "sessions", "snapshot", "source", "state",
                "stateRestorationActivity", "status", "subtitle", "target", "targetContentIdentifier", "text", "ticket",
                "title", "to", "token", "traits", "type", "unchanged", "url", "user", "userActivities", "userInfo", "value",
                "version", "versions", "visible", "watch", "width", "windows", "workspace",
            ]
            let sorted = names.map { (prefix: JSONObject.prefix($0), count: $0.utf8.count, key: $0) }
                .sorted { Self.bucket($0.prefix, $0.count) < Self.bucket($1.prefix, $1.count) }
            entries = sorted
            starts = (0...256).map { bucket in sorted.firstIndex { Self.bucket($0.prefix, $0.count) >= bucket } ?? sorted.count }
        }

        static func bucket(_ prefix: UInt64, _ count: Int) -> Int {
            Int(truncatingIfNeeded: (prefix >> 48) &* 0x9E37_79B9 &+ UInt64(truncatingIfNeeded: count) &* 0x85EB_CA6B) >> 8 & 0xFF
        }

        /// The listed key with these bytes, if any: entries compared in place, and only the one
        /// found copied out.
        func key(_ bytes: UnsafeRawBufferPointer, prefix: UInt64) -> String? {
            let bucket = Self.bucket(prefix, bytes.count)
            let found: Int? = entries.withUnsafeBufferPointer { entries in
                var index = starts[bucket]
                let end = starts[bucket &+ 1]
                while index < end {
                    if entries[index].prefix == prefix && entries[index].count == bytes.count
                        && (bytes.count <= 8 || entries[index].key.utf8.withContiguousStorageIfAvailable({
                            Identifier.sameBytes(bytes, UnsafeRawBufferPointer($0))
                        }) == true) {
                        return index
                    }
                    index &+= 1
                }
                return nil
            }
            return found.map { entries[$0].key }
        }
    }

    /// The listed key with these bytes, if any.
    static func knownKey(_ bytes: UnsafeRawBufferPointer, prefix: UInt64) -> String? {
        knownKeys.key(bytes, prefix: prefix)
    }
}
