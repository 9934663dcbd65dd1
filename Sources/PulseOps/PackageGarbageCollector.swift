import Foundation
import PulseCore
import PulseStore

/// gc on a package folder (both parts, under the build lock, which the caller holds).
///
/// `Retention` decides over `server/index.json`'s history. Both indexes are rewritten first without the
/// dropped versions (server, then public: the public one is its projection); then go, in `server/`, the
/// dropped versions' manifests and gated resources, and the key tables of deckVersions no kept session
/// version has; then the public part is swept like a target (`PublicSweep`); then stale temp files.
/// Files that no version names (left by a build killed before its commit) go once older than `grace`.
public struct PackageGarbageCollector: Sendable {
    public var package: PulsePackage
    public var keep: Int?
    public var grace: TimeInterval
    public var dryRun: Bool
    public var now: Date
    public var temporaryAge: TimeInterval = 3600
    /// Told each path as soon as it is deleted.
    public var deleted: (@Sendable (String) -> Void)?

    public init(package: PulsePackage, keep: Int?, grace: TimeInterval, dryRun: Bool, now: Date = Date()) {
        self.package = package
        self.keep = keep
        self.grace = grace
        self.dryRun = dryRun
        self.now = now
    }

    public func run() throws -> GCReport {
        let index: PackageIndex
        do { index = try package.readIndex() } catch let error as StoreError {
            throw OpsError(.badInput, error.path, error.message + "; gc stopped before deleting anything")
        }
        let decisions = try Retention(keep: keep, grace: grace, now: now)
            .decide(index.history.mapValues { $0.map(\.publishedAt) }, current: Self.namedCurrent(index), index: package.indexURL.path)
        let split = Retention.split(index.history, by: decisions) { key, version in "\(key)/\(version.packageVersion)" }
        var kept = index
        kept.history = split.kept
        let (dropped, keptReport) = (split.dropped, split.report)

        // Plan everything before deleting anything: a manifest or blob list that cannot be read stops gc here.
        let serverFiles = try serverFilesToDelete(kept: kept, dropped: dropped)
        let publicDropped = dropped.map { key, version in
            (key, PackageIndex.publicVersion(key: key, version))
        }
        var sweep = try PublicSweep(
            target: FolderTarget(root: package.publicRoot), kept: kept.publicIndex, dropped: publicDropped,
            grace: grace, now: now, temporaryAge: temporaryAge
        ).plan()
        let temporary = try serverTemporaryFiles()
        var report = sweep.report
        report.versions = dropped.map { "\($0.key)/\($0.version.packageVersion)" }.sorted()
        report.kept = keptReport.sorted { $0.version < $1.version }
        report.files = serverFiles.map { "server/" + $0.path } + sweep.files.map { "public/" + $0.path }
        report.blobs = sweep.blobs.map { "public/" + $0.path }
        report.temporary = temporary.map { "server/" + $0.path } + sweep.temporary.map { "public/" + $0.path }
        report.bytes += (serverFiles + temporary).reduce(0) { $0 + $1.size }
        guard !dryRun else { return report }

        // Both indexes first (server, then its public projection), so neither ever names a deleted file.
        if kept != index {
            try package.writeServerIndex(kept)
            sweep.newIndex = kept.publicIndex
        } else if (try? package.publicPart.readIndex()) != kept.publicIndex {
            sweep.newIndex = kept.publicIndex  // a public index left ahead by a killed build
        }
        if let newIndex = sweep.newIndex { try package.publicPart.writeIndex(newIndex) }
        sweep.newIndex = nil

        var done = report
        done.files = []; done.blobs = []; done.temporary = []; done.bytes = 0
        let server = FolderTarget(root: package.serverRoot)
        do {
            for (objects, list) in [(serverFiles, \GCReport.files), (temporary, \GCReport.temporary)] {
                for object in objects {
                    try server.delete(object.path)
                    done[keyPath: list].append("server/" + object.path)
                    done.bytes += object.size
                    deleted?("server/" + object.path)
                }
            }
        } catch {
            throw GCStopped(report: done, error: OpsError.from(error))
        }
        return try sweep.execute(on: FolderTarget(root: package.publicRoot), lease: nil, prefix: "public/", start: done, deleted: deleted)
    }

    /// The position of each document's current version (the one the server index names) in its
    /// history, so that it stays whatever `--keep` says even if the history does not list it first.
    static func namedCurrent(_ index: PackageIndex) -> [String: Int] {
        var positions: [String: Int] = [:]
        func note(_ kind: DocumentKind, _ id: String, _ version: String) {
            let key = PackageIndex.historyKey(kind, id)
            if let position = index.history[key]?.firstIndex(where: { $0.packageVersion == version }) { positions[key] = position }
        }
        for (id, session) in index.sessions { note(.sessions, id, session.packageVersion) }
        for (id, series) in index.series { note(.series, id, series.packageVersion) }
        for (id, config) in index.appconfig { note(.appconfig, id, config.packageVersion) }
        return positions
    }

    /// Manifests and gated resources of dropped versions (and of no version, once older than `grace`),
    /// and key tables of deckVersions no kept session version has.
    private func serverFilesToDelete(kept: PackageIndex, dropped: [(key: String, version: PackageIndex.Version)]) throws -> [TargetObject] {
        let server = FolderTarget(root: package.serverRoot)
        var keptManifests = Set<String>(), keptGated = Set<String>(), droppedPaths = Set<String>()
        var keptDecks: [String: Set<Int>] = [:]
        // What the index names as current stays even if its history does not list it.
        for (id, session) in kept.sessions { keptManifests.insert("sessions/\(id)/\(session.packageVersion).json") }
        for (id, series) in kept.series { keptManifests.insert("series/\(id)/\(series.packageVersion).json") }
        for (key, versions) in kept.history {
            for version in versions {
                keptManifests.insert("\(key)/\(version.packageVersion).json")
                if let gated = version.gated { keptGated.insert("gated/\(key.dropFirst("sessions/".count))/\(gated).json") }
            }
        }
        for (id, session) in kept.sessions {
            var decks: Set<Int> = [session.deckVersion]
            for version in kept.versions(.sessions, id) {
                let manifest: JSONValue
                do { manifest = try package.readManifest(.sessions, id: id, packageVersion: version.packageVersion) } catch let error as StoreError {
                    throw OpsError(.badInput, error.path, error.message + "; gc stopped before deleting anything")
                }
                if let deck = manifest["deckVersion"]?.intValue { decks.insert(deck) }
            }
            keptDecks[id] = decks
            if let gated = session.gated { keptGated.insert("gated/\(id)/\(gated).json") }
        }
        for (key, version) in dropped {
            droppedPaths.insert("\(key)/\(version.packageVersion).json")
            if let gated = version.gated { droppedPaths.insert("gated/\(key.dropFirst("sessions/".count))/\(gated).json") }
        }
        var doomed: [TargetObject] = []
        for object in try server.list(under: "") {
            let parts = object.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, !parts[2].hasPrefix(".") else { continue }
            let old = now.timeIntervalSince(object.modified) >= grace
            switch parts[0] {
            case "sessions", "series":
                if !keptManifests.contains(object.path) && (droppedPaths.contains(object.path) || old) { doomed.append(object) }
            case "gated":
                if !keptGated.contains(object.path) && (droppedPaths.contains(object.path) || old) { doomed.append(object) }
            case "keys":
                // `<deckVersion>.json` or `.json.age`; pending tables are the build's to settle.
                guard let decks = keptDecks[parts[1]], !parts[2].contains(".pending-"),
                      let deck = Int(parts[2].prefix { $0.isNumber }), parts[2].hasPrefix("\(deck).json") else { continue }
                if !decks.contains(deck) { doomed.append(object) }
            default:
                continue
            }
        }
        return doomed.sorted { $0.path < $1.path }
    }

    /// `.tmp-*` files in `server/` older than `temporaryAge`.
    private func serverTemporaryFiles() throws -> [TargetObject] {
        try FolderTarget(root: package.serverRoot).list(under: "").filter {
            $0.path.split(separator: "/").last!.hasPrefix(".tmp-") && now.timeIntervalSince($0.modified) >= temporaryAge
        }
    }
}
