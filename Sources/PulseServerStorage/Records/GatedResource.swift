import PulseCore

/// A timeline-gated resource: its rule and the full manifest entry it shows once released
/// (from `server/gated/<sessionId>/<packageVersion>.json`, docs/package-format.md).
public struct GatedResource: Equatable, Sendable {
    public var id: String
    public var rule: GateRule
    /// The entry that replaces the metadata-only one in the manifest: `{ id, title, kind, gated: false, url?, body? }`.
    public var entry: JSONValue

    public init(id: String, rule: GateRule, entry: JSONValue) {
        self.id = id
        self.rule = rule
        self.entry = entry
    }
}

extension GatedResource {
    /// The stored form: `[{ "id", "releaseAfterSlide"?, "releaseAt"? (Unix seconds), "entry" }]`, canonical.
    static func encode(_ resources: [GatedResource]) -> [UInt8] {
        JSONValue.array(resources.map { resource in
            var fields: [String: JSONValue] = ["id": .string(resource.id), "entry": resource.entry]
            if let slide = resource.rule.releaseAfterSlide { fields["releaseAfterSlide"] = .int(slide) }
            if let moment = resource.rule.releaseAt { fields["releaseAt"] = .int(Int(moment)) }
            return .object(fields)
        }).canonicalBytes
    }

    static func decode(_ bytes: [UInt8]) throws -> [GatedResource] {
        guard case let .array(items) = try JSONValue.parse(bytes) else { throw ServerError(.storage, "stored gated resources are not a list") }
        return try items.map { item in
            guard let id = item["id"]?.stringValue, let entry = item["entry"] else {
                throw ServerError(.storage, "a stored gated resource lacks id or entry")
            }
            return GatedResource(
                id: id, rule: GateRule(releaseAfterSlide: item["releaseAfterSlide"]?.intValue, releaseAt: item["releaseAt"]?.intValue.map(Int64.init)),
                entry: entry)
        }
    }
}
