import Foundation
import PulseCore
import PulseCrypto
import PulseStore

/// What gc removed (or, in a dry run, would remove), and what it kept and why.
public struct GCReport: Sendable, Equatable {
    /// A version that stays, with its reasons (`current`, `within --keep 3`, `within --grace until …`).
    public struct Kept: Sendable, Equatable {
        public var version: String
        public var reasons: [String]
    }

    /// Versions dropped from the history (`sessions/keynote@<publishedAt>` on a target,
    /// `sessions/keynote/<packageVersion>` on a package).
    public var versions: [String] = []
    /// Versions that stay, named like `versions`.
    public var kept: [Kept] = []
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

/// gc stopped after it had started deleting: `report` says what is gone (every path it lists was
/// deleted), `error` why it stopped. What is left is consistent: index.json was written first.
public struct GCStopped: Error {
    public var report: GCReport
    public var error: OpsError
}

/// gc on a push target (a pushed folder or S3): removes the versions `Retention` lets go and whatever no
/// kept version names, holding the target's lease so that no push runs meanwhile.
///
/// Nothing is deleted on partial knowledge: index.json must parse, the blob list of every kept version
/// (the current ones first) must be fetched and match its name, and the listing must be complete (a
/// truncated or malformed one is an error, see `S3ListPage`); any failure stops gc before it deletes
/// anything. Then the new index.json (the history without the dropped versions) is written first; then
/// the files of dropped versions, files no version names that are older than `grace`, blobs no kept
/// version names that are older than `grace`, and `.tmp-*` files older than an hour. So the index never
/// names a missing file, even if gc stops half-way; and what it deleted is reported even then.
public struct GarbageCollector: Sendable {
    public var target: any PushTarget
    /// Versions to keep per document (newest first); nil keeps every version.
    public var keep: Int?
    public var grace: TimeInterval
    public var dryRun: Bool
    public var now: Date
    /// Seconds to wait for a push holding the target's lease.
    public var wait: TimeInterval = 0
    /// A `.tmp-*` file older than this is an abandoned write.
    public var temporaryAge: TimeInterval = 3600
    /// Told each path as soon as it is deleted.
    public var deleted: (@Sendable (String) -> Void)?

    public init(target: any PushTarget, keep: Int?, grace: TimeInterval, dryRun: Bool, now: Date = Date()) {
        self.target = target
        self.keep = keep
        self.grace = grace
        self.dryRun = dryRun
        self.now = now
    }

    /// - Throws: `OpsError` before anything is deleted; `GCStopped` after.
    public func run() throws -> GCReport {
        // A dry run changes nothing, so it needs no lease (and never waits for a push).
        let lease = dryRun ? nil : try target.acquireLease(for: "gc", wait: wait)
        defer { lease?.release() }
        let indexPath = target.describe("index.json")
        guard let indexData = try target.read("index.json") else {
            throw OpsError(.badInput, indexPath, "missing: not a pulse package, nothing is collected without it")
        }
        let index: PublicIndex
        do { index = try PublicFolder.parseIndex(indexData, path: indexPath) } catch let error as StoreError {
            throw OpsError(.badInput, error.path, error.message + "; gc stopped before deleting anything")
        }
        let decisions = try Retention(keep: keep, grace: grace, now: now)
            .decide(index.history.mapValues { $0.map(\.publishedAt) }, current: Self.namedCurrent(index), index: indexPath)
        let split = Retention.split(index.history, by: decisions) { key, version in "\(key)@\(version.publishedAt)" }
        var kept = index
        kept.history = split.kept
        let (dropped, keptReport) = (split.dropped, split.report)
        var sweep = try PublicSweep(target: target, kept: kept, dropped: dropped, grace: grace, now: now, temporaryAge: temporaryAge).plan()
        sweep.report.kept = keptReport.sorted { $0.version < $1.version }
        sweep.newIndex = kept == index ? nil : kept
        if dryRun { return sweep.report }
        return try sweep.execute(on: target, lease: lease, deleted: deleted)
    }

    /// The position of each app config's current version (the index names it by packageVersion) in its
    /// history, where that is not the first: it stays whatever `--keep` says.
    static func namedCurrent(_ index: PublicIndex) -> [String: Int] {
        var positions: [String: Int] = [:]
        for (org, document) in index.appconfig {
            let key = "appconfig/\(org)"
            let file = "\(key)/\(document.packageVersion).json"
            if let position = index.history[key]?.firstIndex(where: { $0.files?.contains(file) == true }) { positions[key] = position }
        }
        return positions
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

        /// The index first, then files, then blobs, then temp files, the lease confirmed before each
        /// change. Returns what was deleted; throws `GCStopped` with it if a step fails.
        /// - Parameter prefix: put before each path in the report (`public/` on a package).
        func execute(on target: any PushTarget, lease: (any TargetLease)?, prefix: String = "", start: GCReport? = nil,
                     deleted: (@Sendable (String) -> Void)?) throws -> GCReport {
            var done = start ?? report
            if start == nil { done.files = []; done.blobs = []; done.temporary = []; done.bytes = 0 }
            do {
                if let newIndex {
                    try lease?.renew()
                    try target.write("index.json", data: Data(newIndex.fileBytes), kind: .index)
                }
                for (objects, list) in [(files, \GCReport.files), (blobs, \GCReport.blobs), (temporary, \GCReport.temporary)] {
                    for object in objects {
                        try lease?.confirm()
                        try target.delete(object.path)
                        done[keyPath: list].append(prefix + object.path)
                        done.bytes += object.size
                        deleted?(prefix + object.path)
                    }
                }
            } catch let stopped as GCStopped {
                throw stopped
            } catch {
                throw GCStopped(report: done, error: OpsError.from(error))
            }
            return done
        }
    }

    func plan() throws -> Plan {
        var plan = Plan()
        var keepFiles = Set<String>()
        var referenced = Set<Digest>()
        // The app config the index names as current stays even if its history does not list it.
        for (org, document) in kept.appconfig { keepFiles.insert("appconfig/\(org)/\(document.packageVersion).json") }
        // The current versions' blob lists first: if any of them cannot be read, nothing else matters.
        let versions = kept.history.keys.sorted().compactMap { kept.history[$0]!.first }
            + kept.history.keys.sorted().flatMap { kept.history[$0]!.dropFirst() }
        for version in versions {
            keepFiles.formUnion(version.files ?? [])
            let path = "refs/\(version.refs).json"
            guard keepFiles.insert(path).inserted else { continue }
            // An unreadable blob list of a kept version stops gc before any deletion: its blobs are unknown.
            guard let data = try target.read(path) else {
                throw OpsError(.badInput, target.describe(path), "missing, and index.json names it; gc stopped before deleting anything")
            }
            let list: BlobList
            do {
                try PublicFolder.check(data, named: version.refs, path: target.describe(path))
                list = try BlobList(parsing: data, file: target.describe(path))
            } catch {
                throw OpsError(.badInput, target.describe(path), "damaged blob list (\(OpsError.from(error).message)); gc stopped before deleting anything")
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

        let listing: [TargetObject]
        do { listing = try target.list(under: "") } catch {
            let error = OpsError.from(error)
            throw OpsError(error.kind, error.location, error.message + "; gc stopped before deleting anything")
        }
        for object in listing {
            let parts = object.path.split(separator: "/", omittingEmptySubsequences: false)
            let old = now.timeIntervalSince(object.modified) >= grace
            if parts.last!.hasPrefix(".tmp-") {
                if now.timeIntervalSince(object.modified) >= temporaryAge { plan.temporary.append(object) }
            } else if parts.count == 2, parts[0] == "assets", let hash = Digest(hex: parts[1]) {
                if referenced.contains(hash) || !old { plan.report.keptBlobs += 1 } else { plan.blobs.append(object) }
            } else if parts.count == 2 && parts[0] == "refs" || parts.count == 3 && parts[0] == "appconfig", parts.last!.hasSuffix(".json") {
                if droppedFiles.contains(object.path) || !keepFiles.contains(object.path) && old { plan.files.append(object) }
            }
        }
        // Belt and braces: nothing a kept version names is ever planned for deletion.
        let needed = keepFiles.union(referenced.map { "assets/\($0.hex)" })
        if let clash = (plan.files + plan.blobs).first(where: { needed.contains($0.path) }) {
            throw OpsError(.failure, target.describe(clash.path), "a kept version needs it, yet gc planned to delete it (a bug); gc stopped before deleting anything")
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
