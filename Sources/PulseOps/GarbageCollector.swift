import Foundation
import PulseCore
import PulseCrypto
import PulseStore

/// What gc removed (or, in a dry run, would remove).
public struct GCReport: Sendable, Equatable {
    /// Versions dropped from the history (`sessions/keynote@<publishedAt>`).
    public var versions: [String] = []
    /// Files of those versions and abandoned ones: blob lists, app configs; on a package also manifests,
    /// gated resources and key tables no kept version needs.
    public var files: [String] = []
    /// Blobs no kept version names, older than the grace period.
    public var blobs: [String] = []
    /// Stale `.tmp-*` files of interrupted writes.
    public var temporary: [String] = []
    /// Bytes freed.
    public var bytes = 0
    /// Versions and blobs that stay.
    public var keptVersions = 0
    public var keptBlobs = 0
}

/// gc on a push target (a pushed folder or S3) or a package's public part: removes the versions
/// `Retention` lets go and whatever no kept version names.
///
/// The new index.json (the history without the dropped versions) is written first; then the files of
/// dropped versions, files no version names that are older than `grace` (a push in progress uploads
/// them before its index), blobs no kept version's blob list names and that are older than `grace`, and
/// `.tmp-*` files older than an hour. So the index never names a missing file, even if gc stops half-way.
public struct GarbageCollector: Sendable {
    public var target: any PushTarget
    /// Versions to keep per document (newest first); nil keeps every version.
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

    public func run() throws -> GCReport {
        let where_ = target.displayName
        guard let indexData = try target.read("index.json") else {
            throw OpsError(.badInput, "\(where_)/index.json", "missing: not a pulse package, nothing is collected without it")
        }
        let index: PublicIndex
        do { index = try PublicFolder.parseIndex(indexData, path: "\(where_)/index.json") } catch let error as StoreError {
            throw OpsError(.badInput, error.path, error.message)
        }
        let decisions = try Retention(keep: keep, grace: grace, now: now)
            .decide(index.history.mapValues { $0.map(\.publishedAt) }, index: "\(where_)/index.json")
        var kept = index
        var dropped: [(key: String, version: PublicIndex.Version)] = []
        for (key, versions) in index.history {
            kept.history[key] = zip(versions, decisions[key]!).filter(\.1).map(\.0)
            dropped += zip(versions, decisions[key]!).filter { !$0.1 }.map { (key, $0.0) }
        }
        var sweep = try PublicSweep(target: target, kept: kept, dropped: dropped, grace: grace, now: now, temporaryAge: temporaryAge).plan()
        sweep.newIndex = kept == index ? nil : kept
        if !dryRun { try sweep.execute(on: target) }
        return sweep.report
    }
}

/// The public half of gc, planned before anything is deleted: what the kept versions need (their blob
/// lists, read and checked, and every blob those name) and what may go.
struct PublicSweep {
    let target: any PushTarget
    let kept: PublicIndex
    let dropped: [(key: String, version: PublicIndex.Version)]
    let grace: TimeInterval
    let now: Date
    let temporaryAge: TimeInterval

    struct Plan {
        /// Written first (nil: unchanged).
        var newIndex: PublicIndex?
        var files: [TargetObject] = []
        var blobs: [TargetObject] = []
        var temporary: [TargetObject] = []
        var report = GCReport()

        /// The index first, then files, then blobs, then temp files.
        func execute(on target: any PushTarget) throws {
            if let newIndex { try target.write("index.json", data: Data(newIndex.fileBytes), kind: .index) }
            for object in files + blobs + temporary { try target.delete(object.path) }
        }
    }

    func plan() throws -> Plan {
        let where_ = target.displayName
        var plan = Plan()
        var keepFiles = Set<String>()
        var referenced = Set<String>()
        for version in kept.history.values.joined() {
            keepFiles.formUnion(version.files ?? [])
            let path = "refs/\(version.refs).json"
            guard keepFiles.insert(path).inserted else { continue }
            // An unreadable blob list of a kept version stops gc before any deletion: its blobs are unknown.
            guard let data = try target.read(path) else {
                throw OpsError(.badInput, "\(where_)/\(path)", "missing, and index.json names it; gc stopped before deleting anything")
            }
            let list: BlobList
            do {
                try PublicFolder.check(data, named: version.refs, path: "\(where_)/\(path)")
                list = try BlobList(parsing: data, file: "\(where_)/\(path)")
            } catch {
                throw OpsError(.badInput, "\(where_)/\(path)", "damaged blob list (\(OpsError.from(error).message)); gc stopped before deleting anything")
            }
            referenced.formUnion(list.entries.map(\.assetHash))
        }
        var droppedFiles = Set<String>()
        for (key, version) in dropped {
            plan.report.versions.append("\(key)@\(version.publishedAt)")
            droppedFiles.insert("refs/\(version.refs).json")
            droppedFiles.formUnion(version.files ?? [])
        }
        droppedFiles.subtract(keepFiles)
        plan.report.keptVersions = kept.history.values.reduce(0) { $0 + $1.count }

        for object in try target.list(under: "") {
            let parts = object.path.split(separator: "/", omittingEmptySubsequences: false)
            let old = now.timeIntervalSince(object.modified) >= grace
            if parts.last!.hasPrefix(".tmp-") {
                if now.timeIntervalSince(object.modified) >= temporaryAge { plan.temporary.append(object) }
            } else if parts.count == 2, parts[0] == "assets", Hex.isDigestName(parts[1]) {
                if referenced.contains(String(parts[1])) || !old { plan.report.keptBlobs += 1 } else { plan.blobs.append(object) }
            } else if parts.count == 2 && parts[0] == "refs" || parts.count == 3 && parts[0] == "appconfig", parts.last!.hasSuffix(".json") {
                if droppedFiles.contains(object.path) || !keepFiles.contains(object.path) && old { plan.files.append(object) }
            }
        }
        plan.files.sort { $0.path < $1.path }
        plan.blobs.sort { $0.path < $1.path }
        plan.temporary.sort { $0.path < $1.path }
        plan.report.files = plan.files.map(\.path)
        plan.report.blobs = plan.blobs.map(\.path)
        plan.report.temporary = plan.temporary.map(\.path)
        plan.report.bytes = (plan.files + plan.blobs + plan.temporary).reduce(0) { $0 + $1.size }
        plan.report.versions.sort()
        return plan
    }
}
