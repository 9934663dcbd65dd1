import PulseCrypto

/// `server/gated/<sessionId>/<sha256>.json`: a session's timeline-gated resources with their content and
/// release rule, for the sync server only (docs/package-format.md). The manifest lists each of them as
/// metadata (`{ id, title, kind, gated: true }`); the server substitutes `entry` once the rule holds and
/// recomputes the manifest's packageVersion (`PackageVersion.of`) with the released entries in place.
public struct GatedResources: Equatable, Sendable {
    public struct Resource: Equatable, Sendable {
        public var id: String
        /// Released once the presenter's frontier (`maxShown`, 0-based) is at least this slide.
        public var releaseAfterSlide: Int?
        /// Released once the server's clock passes this ISO 8601 time. With both rules, both must hold.
        public var releaseAt: String?
        /// The entry the manifest shows once released: `{ id, title, kind, gated: false, url?, body? }`.
        public var entry: JSONValue

        public init(id: String, releaseAfterSlide: Int?, releaseAt: String?, entry: JSONValue) {
            self.id = id
            self.releaseAfterSlide = releaseAfterSlide
            self.releaseAt = releaseAt
            self.entry = entry
        }
    }

    public var sessionId: String
    /// The manifest these resources belong to.
    public var packageVersion: String
    public var resources: [Resource]

    public init(sessionId: String, packageVersion: String, resources: [Resource]) {
        self.sessionId = sessionId
        self.packageVersion = packageVersion
        self.resources = resources
    }

    /// Canonical JSON (sorted keys, two-space indent, final newline).
    public var fileBytes: [UInt8] {
        JSONValue.object([
            "sessionId": .string(sessionId), "packageVersion": .string(packageVersion),
            "resources": .array(resources.map { resource in
                var fields: [String: JSONValue] = ["id": .string(resource.id), "entry": resource.entry]
                if let slide = resource.releaseAfterSlide { fields["releaseAfterSlide"] = .int(slide) }
                if let time = resource.releaseAt { fields["releaseAt"] = .string(time) }
                return .object(fields)
            }),
        ]).prettyBytes
    }

    /// The file's name without `.json`: the SHA-256 of its bytes.
    public var name: String { SHA256.hex(fileBytes) }
}
