import Foundation
import PulseCore
import PulseCrypto

/// What gc removed (or, in a dry run, would remove).
public struct GCReport: Sendable, Equatable {
    /// Manifest files beyond `--keep` and outside the grace period.
    public var manifests: [String] = []
    /// Blobs no retained manifest names, older than the grace period.
    public var blobs: [String] = []
    /// Stale `.tmp-*` files of interrupted writes.
    public var temporary: [String] = []
    /// Bytes freed.
    public var bytes = 0
    /// Manifest files and blobs that stay.
    public var keptManifests = 0
    public var keptBlobs = 0
}

/// Removes what no retained manifest needs, from a package folder or a push target.
///
/// Per session, series and appconfig id, a manifest version is retained when it is the current one
/// (index.json), one of the `keep` newest by publish time (file mtime or S3 LastModified), or published
/// within `grace`. A blob stays when a retained manifest names it or when it was itself written within
/// `grace` (a push in progress writes blobs before the manifests that name them). Manifests are deleted
/// before blobs, so no manifest ever names a missing blob, even if gc is interrupted.
public struct GarbageCollector: Sendable {
    public var target: any PushTarget
    /// Manifest versions to keep per id (newest first); nil keeps every version.
    public var keep: Int?
    public var grace: TimeInterval
    public var dryRun: Bool
    public var now: Date
    /// A `.tmp-*` file older than this is an abandoned write.
    public var temporaryAge: TimeInterval = 3600

    public init(target: any PushTarget, keep: Int?, grace: TimeInterval, dryRun: Bool, now: Date = Date()) {
        self.target = target
        self.keep = keep
        self.grace = grace
        self.dryRun = dryRun
        self.now = now
    }

    static let manifestFolders: Set<Substring> = ["sessions", "series", "appconfig"]

    public func run() throws -> GCReport {
        let where_ = target.displayName
        guard let indexData = try target.read("index.json") else {
            throw OpsError(.badInput, "\(where_)/index.json", "missing: not a pulse package, nothing is collected without it")
        }
        guard let index = try? JSONDecoder().decode(PackageIndex.self, from: indexData),
              index.format == PackageIndex.currentFormat else {
            throw OpsError(.badInput, "\(where_)/index.json", "not a \(PackageIndex.currentFormat) index")
        }
        var current = Set<String>()
        for (id, session) in index.sessions { current.insert("sessions/\(id)/\(session.packageVersion).json") }
        for (id, series) in index.series { current.insert("series/\(id)/\(series.packageVersion).json") }
        for (id, config) in index.appconfig { current.insert("appconfig/\(id)/\(config.packageVersion).json") }

        var report = GCReport()
        // One listing of the whole target, sorted into manifests, blobs and abandoned temp files.
        var temporary: [TargetObject] = []
        var groups: [String: [TargetObject]] = [:]
        var blobs: [TargetObject] = []
        for object in try target.list(under: "") {
            let parts = object.path.split(separator: "/", omittingEmptySubsequences: false)
            let top = parts.count > 1 ? parts[0] : ""
            guard top.isEmpty || top == "assets" || Self.manifestFolders.contains(top) else { continue }  // keys/ etc.
            if parts.last!.hasPrefix(".tmp-") { temporary.append(object); continue }
            if top == "assets", parts.count == 2, Hex.isDigestName(parts[1]) { blobs.append(object); continue }
            if Self.manifestFolders.contains(top), parts.count == 3, parts[2].hasSuffix(".json") {
                groups["\(parts[0])/\(parts[1])", default: []].append(object)
            }
        }

        // Which manifest versions stay.
        var retained: [String] = []
        var doomed: [TargetObject] = []
        for (_, versions) in groups {
            let newestFirst = versions.sorted { a, b in
                if a.modified != b.modified { return a.modified > b.modified }
                let (aCurrent, bCurrent) = (current.contains(a.path), current.contains(b.path))
                if aCurrent != bCurrent { return aCurrent }  // on a tie the current version counts as newer
                return a.path > b.path
            }
            for (rank, object) in newestFirst.enumerated() {
                let recent = now.timeIntervalSince(object.modified) < grace
                if current.contains(object.path) || recent || rank < (keep ?? Int.max) {
                    retained.append(object.path)
                } else {
                    doomed.append(object)
                }
            }
        }

        // Every blob a retained manifest names. An unreadable manifest stops gc before any deletion.
        var referenced = Set<String>()
        for path in retained {
            guard let data = try target.read(path) else { continue }
            guard let json = try? JSONValue.parse(data) else {
                throw OpsError(.badInput, "\(where_)/\(path)", "manifest is not valid JSON; gc stopped before deleting anything")
            }
            for reference in json.assetReferences { referenced.insert(reference.assetHash) }
        }

        var unreferenced: [TargetObject] = []
        for object in blobs {
            let name = String(object.path.dropFirst("assets/".count))
            if referenced.contains(name) || now.timeIntervalSince(object.modified) < grace {
                report.keptBlobs += 1
            } else {
                unreferenced.append(object)
            }
        }
        let stale = temporary.filter { now.timeIntervalSince($0.modified) >= temporaryAge }

        // Manifests first, then blobs: no manifest ever names a blob that is gone.
        for object in doomed.sorted(by: { $0.path < $1.path }) {
            if !dryRun { try target.delete(object.path) }
            report.manifests.append(object.path)
            report.bytes += object.size
        }
        for object in unreferenced.sorted(by: { $0.path < $1.path }) {
            if !dryRun { try target.delete(object.path) }
            report.blobs.append(object.path)
            report.bytes += object.size
        }
        for object in stale.sorted(by: { $0.path < $1.path }) {
            if !dryRun { try target.delete(object.path) }
            report.temporary.append(object.path)
            report.bytes += object.size
        }
        report.keptManifests = retained.count
        return report
    }
}
