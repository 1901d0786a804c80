/// The form a keyed request's record travels in between nodes: a node that took a drop onto a
/// window on another node hands that node the drop's record, which goes into the commit that
/// delivers it (`Hub+RemoteDrops.swift`). The key travels as hex: its bytes, whatever they are.
extension RequestRecord {
    var json: JSONValue {
        ["workspace": .string(slot.owner.workspace), "user": .string(slot.owner.user), "key": .string(slot.key.hex),
         "fingerprint": .string(fingerprint), "result": result, "at": .int(at)]
    }

    init?(json: JSONValue) {
        guard let workspace = json["workspace"]?.stringValue, let user = json["user"]?.stringValue,
              let key = json["key"]?.stringValue.flatMap(RequestKey.init(hex:)), !key.bytes.isEmpty,
              let fingerprint = json["fingerprint"]?.stringValue, let result = json["result"],
              let at = json["at"]?.intValue else { return nil }
        self.init(slot: RequestKeySlot(owner: OwnerKey(workspace: workspace, user: user), key: key),
                  fingerprint: fingerprint, result: result, at: at)
    }
}
