import Foundation
import PulseCore
import PulseServerStorage

/// The manifests a device sees: the imported ones with released gated resources substituted.
///
/// A gated resource is metadata only in the imported manifest (`{ id, title, kind, gated: true }`);
/// once `ReleasePolicy.isReleased` holds, its full entry takes that place and the packageVersion is
/// recomputed (`PackageVersion.of`), so the ETag changes and devices delta-sync it. A series
/// manifest's session refs carry each session's device-visible packageVersion, so its ETag follows.
public enum ManifestView {
    /// A manifest as served: the body and its packageVersion (the ETag).
    public struct Rendered: Equatable, Sendable {
        public var body: [UInt8]
        public var packageVersion: String

        public init(body: [UInt8], packageVersion: String) {
            self.body = body
            self.packageVersion = packageVersion
        }
    }

    /// The ids of the gated resources released now.
    public static func releasedResources(_ content: SessionContent, session: SessionRecord, now: Int64) -> Set<String> {
        Set(content.gated.filter { ReleasePolicy.isReleased($0.rule, state: session.state, frontier: session.maxShown, now: now) }.map(\.id))
    }

    /// The session manifest with the `released` gated resources substituted. Nothing released: the
    /// imported bytes as they are.
    public static func session(_ content: SessionContent, released: Set<String>) throws -> Rendered {
        guard !released.isEmpty else { return Rendered(body: content.manifest, packageVersion: content.packageVersion) }
        guard case var .object(fields) = try JSONValue.parse(Data(content.manifest)), case let .array(resources)? = fields["resources"] else {
            throw ServerError(.storage, "stored manifest of session \(content.sessionId) has no resources list")
        }
        let entries = Dictionary(content.gated.map { ($0.id, $0.entry) }, uniquingKeysWith: { first, _ in first })
        fields["resources"] = .array(resources.map { resource in
            guard let id = resource["id"]?.stringValue, released.contains(id), let entry = entries[id] else { return resource }
            return entry
        })
        let (stamped, version) = PackageVersion.stamped(.object(fields))
        return Rendered(body: stamped.prettyBytes, packageVersion: version)
    }

    /// The series manifest with each session ref's packageVersion replaced by `visibleVersions[id]`
    /// where that differs. Nothing differs: the imported bytes as they are.
    public static func series(_ record: SeriesRecord, visibleVersions: [String: String]) throws -> Rendered {
        guard case var .object(fields) = try JSONValue.parse(Data(record.manifest)), case let .array(refs)? = fields["sessions"] else {
            throw ServerError(.storage, "stored manifest of series \(record.id) has no sessions list")
        }
        var changed = false
        fields["sessions"] = .array(refs.map { ref in
            guard case var .object(ref) = ref, let id = ref["id"]?.stringValue, let visible = visibleVersions[id],
                  ref["packageVersion"]?.stringValue != visible
            else { return ref }
            ref["packageVersion"] = .string(visible)
            changed = true
            return .object(ref)
        })
        guard changed else { return Rendered(body: record.manifest, packageVersion: record.packageVersion) }
        let (stamped, version) = PackageVersion.stamped(.object(fields))
        return Rendered(body: stamped.prettyBytes, packageVersion: version)
    }
}
