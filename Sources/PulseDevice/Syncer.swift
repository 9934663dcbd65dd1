import Foundation
import PulseCore
import PulseStore
import Synchronization

/// The delta sync of the contract (section 3): a conditional manifest GET (304: nothing to fetch), then
/// only the blobs the cache lacks, in parallel, from the server or a CDN, each checked before it is kept;
/// the manifest is committed (`cache.json`) only once every blob it names is in place, and then blobs no
/// cached manifest names any more are dropped. A sync killed at any moment leaves the previous cache
/// usable: blobs are only ever added before the commit, removed only after it.
public struct Syncer: Sendable {
    public enum Target: Sendable, Equatable {
        case session(String)
        case series(String)
    }

    public let cache: DeviceCache
    public let client: SyncClient
    /// Where blobs come from: the server, or a CDN's base URL (`/api/sync/asset/<hash>` below it).
    public let assetsBase: URL
    public let parallel: Int
    public let progress: (@Sendable (SyncProgress) -> Void)?

    public init(
        cache: DeviceCache, client: SyncClient, assetsBase: URL? = nil, parallel: Int = 4, progress: (@Sendable (SyncProgress) -> Void)? = nil
    ) {
        self.cache = cache
        self.client = client
        self.assetsBase = assetsBase ?? client.server
        self.parallel = max(1, parallel)
        self.progress = progress
    }

    /// Syncs `target` under the folder's lock; returns what it did and what it cost.
    public func sync(_ target: Target) throws -> SyncReport {
        let lock = try cache.folder.lock()
        defer { withExtendedLifetime(lock) {} }
        try cache.folder.makeCacheFolders()
        let started = Date()
        let before = client.meter.reading
        var index = try cache.readIndex()
        var report = SyncReport()
        let answers = AnswerGuard(folder: cache.folder, client: client, holdsLock: true)
        try answers.refreshBeforeSync()
        switch target {
        case let .session(id):
            report.items.append(try syncSession(id, index: &index, answers: answers))
        case let .series(id):
            report.items += try syncSeries(id, index: &index, answers: answers)
        }
        report.garbage = try cache.collectGarbage(index)
        let cost = client.meter.reading - before
        report.requests = cost.requests
        report.bytes = cost.bytes
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    private func syncSession(_ id: String, index: inout CacheIndex, answers: AnswerGuard) throws -> SyncReport.Item {
        let key = CacheIndex.sessionKey(id)
        let target = "/api/sync/manifest?session=\(id)"
        let manifest: Manifest, fresh: Manifest?, etag: String?
        do { (manifest, fresh, etag) = try conditionalGet(target, key: key, isSession: true, index: index, answers: answers) } catch let refusal as AnswerRefusal {
            return try refused(refusal, kind: "session", id: id, key: key, index: index)
        }
        var item = SyncReport.Item(
            kind: "session", id: id, outcome: fresh == nil ? .unchanged : (index.entries[key] == nil ? .new : .updated),
            packageVersion: manifest.packageVersion, deckVersion: manifest.deckVersion)
        try fetchMissing(of: manifest, label: "session \(id)", into: &item)
        if let fresh { try commit(fresh, etag: etag, key: key, index: &index) }
        return item
    }

    private func syncSeries(_ id: String, index: inout CacheIndex, answers: AnswerGuard) throws -> [SyncReport.Item] {
        let key = CacheIndex.seriesKey(id)
        let manifest: Manifest, fresh: Manifest?, etag: String?
        do {
            (manifest, fresh, etag) = try conditionalGet("/api/sync/series/\(id)/manifest", key: key, isSession: false, index: index, answers: answers)
        } catch let refusal as AnswerRefusal {
            // The refused body's session refs are not to be believed either: nothing more is fetched.
            return [try refused(refusal, kind: "series", id: id, key: key, index: index)]
        }
        var items = [SyncReport.Item(
            kind: "series", id: id, outcome: fresh == nil ? .unchanged : (index.entries[key] == nil ? .new : .updated),
            packageVersion: manifest.packageVersion)]
        try fetchMissing(of: manifest, label: "series \(id)", into: &items[0])
        for ref in manifest.sessionRefs {
            // A ref naming the cached version needs no request at all; only a missing blob is fetched again.
            if let cached = try cache.manifest(CacheIndex.sessionKey(ref.id), in: index)?.manifest, cached.packageVersion == ref.packageVersion {
                var item = SyncReport.Item(
                    kind: "session", id: ref.id, outcome: .unchanged, packageVersion: cached.packageVersion, deckVersion: cached.deckVersion)
                try fetchMissing(of: cached, label: "session \(ref.id)", into: &item)
                items.append(item)
            } else {
                items.append(try syncSession(ref.id, index: &index, answers: answers))
            }
        }
        if let fresh { try commit(fresh, etag: etag, key: key, index: &index) }
        return items
    }

    /// The manifest at `target`: the cached one on a 304 (`fresh` nil), else the new bytes.
    /// - Throws: `AnswerRefusal` when the answer breaks a rule of signed answers (nothing is kept then).
    private func conditionalGet(
        _ target: String, key: String, isSession: Bool, index: CacheIndex, answers: AnswerGuard
    ) throws -> (manifest: Manifest, fresh: Manifest?, etag: String?) {
        let cached = try cache.manifest(key, in: index)
        let headers: [(name: String, value: String)] = cached?.etag.map { [("If-None-Match", $0)] } ?? []
        let response = try client.signed("GET", target, headers: headers)
        if response.status == 200 || (response.status == 304 && cached != nil) {
            try answers.accept(response, to: target, sentETag: cached?.etag)
        }
        switch response.status {
        case 304:
            guard let cached else { throw DeviceError(.server, "GET \(target): 304 to a request without If-None-Match") }
            return (cached.manifest, nil, cached.etag)
        case 200:
            let manifest = try Manifest.parse(response.body, isSession: isSession, what: "GET \(target)")
            return (manifest, manifest, response.header("etag"))
        default:
            throw SyncClient.problem(response, "GET \(target)")
        }
    }

    /// The item of a refused manifest: the cached version (if any) stays, untouched and usable.
    private func refused(_ refusal: AnswerRefusal, kind: String, id: String, key: String, index: CacheIndex) throws -> SyncReport.Item {
        let cached = try? cache.manifest(key, in: index)?.manifest
        var item = SyncReport.Item(
            kind: kind, id: id, outcome: .refused, packageVersion: cached?.packageVersion, deckVersion: cached?.deckVersion)
        item.refusal = refusal.deviceError.message
        return item
    }

    /// Downloads the blobs of `manifest` the cache lacks, `parallel` at a time.
    private func fetchMissing(of manifest: Manifest, label: String, into item: inout SyncReport.Item) throws {
        let missing = manifest.assets.filter { !cache.hasBlob($0) }
        item.assets = manifest.assets.count
        item.assetBytes = manifest.assets.reduce(0) { $0 + $1.bytes }
        item.blobsReused = manifest.assets.count - missing.count
        guard !missing.isEmpty else { return }
        let downloader = BlobDownloader(cache: cache, client: client, base: assetsBase)
        let totals = Mutex<(done: Int, received: Int, resumed: Int)>((0, 0, 0))
        let progress = self.progress
        progress?(SyncProgress(label: label, done: 0, total: missing.count, bytes: 0))
        try ParallelWork.run(missing, width: parallel) { ref in
            let outcome = try downloader.fetch(ref)
            let now = totals.withLock { totals in
                totals.done += 1
                totals.received += outcome.received
                totals.resumed += outcome.resumedFrom
                return totals
            }
            progress?(SyncProgress(label: label, done: now.done, total: missing.count, bytes: now.received))
        }
        let done = totals.withLock { $0 }
        item.blobsFetched = missing.count
        item.blobBytesFetched = done.received
        item.resumedBytes = done.resumed
        do { try AtomicFile.syncFolder(cache.folder.blobsURL) } catch { throw DeviceError(.storage, "\(error)") }
    }

    /// Stores the manifest's bytes and names them in `cache.json` (the commit point).
    private func commit(_ manifest: Manifest, etag: String?, key: String, index: inout CacheIndex) throws {
        let file = try cache.storeManifest(manifest.bytes)
        let formatter = ISO8601DateFormatter()
        index.entries[key] = CacheIndex.Entry(etag: etag, file: file, fetchedAt: formatter.string(from: Date()))
        try cache.writeIndex(index)
    }
}
