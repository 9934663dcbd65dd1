import Foundation
import PulseCore
import PulseCrypto
import PulseStore
import Synchronization

/// What a push did.
public struct PushReport: Sendable, Equatable {
    /// Files sent (blobs, blob lists, app configs, index.json).
    public var uploaded = 0
    /// Files the target already had.
    public var skipped = 0
    /// Bytes sent.
    public var bytes = 0
    public var seconds = 0.0
}

/// Progress of a push, for a progress bar.
public struct PushProgress: Sendable {
    public var done: Int
    public var total: Int
    public var bytes: Int
}

/// Publishes a package's public part (`<package>/public/`, nothing of `server/`) to a target in an order
/// that never exposes an index naming a missing file, and checks what landed before it commits:
///
/// 1. index.json of the target is read (another package there is refused unless `force`); a first push,
///    or one whose index.json is unchanged, lists the target (one request per 1,000 objects on S3, no
///    HEAD per file): what is there with the right size is skipped (content-addressed), so an unchanged
///    package costs two requests and no lease;
/// 2. anything to change, and the push takes the target's lease (`TargetLease`) and lists under it
///    what it will count as already there, so no gc deletes such a blob before the commit;
/// 3. blobs (each checked against its SHA-256 before sending; on S3 sent with Content-MD5 and
///    x-amz-checksum-sha256, the answer's ETag checked), then one listing of `assets/` that must show
///    every blob the new blob lists name, with its exact size;
/// 4. blob lists and app configs, checked the same way;
/// 5. index.json last, the commit point, once the lease is confirmed.
///
/// A failure anywhere leaves the old index.json: at most extra files that no index names. A target
/// whose index.json belongs to another package (another id) is refused unless `force`, and a target with
/// no index.json that holds anything but a pushed package's files (an organizer's source folder) too.
public struct Pusher: Sendable {
    /// The package folder, or a folder holding a public part at its top (a previous push target).
    public var package: URL
    public var target: any PushTarget
    /// Uploads in flight at once.
    public var jobs: Int
    /// Push even if the target holds another package, an older layout or other files.
    public var force: Bool
    /// Seconds to wait for another push or gc holding the target's lease.
    public var wait: TimeInterval
    public var progress: (@Sendable (PushProgress) -> Void)?

    public init(
        package: URL, target: any PushTarget, jobs: Int = 4, force: Bool = false, wait: TimeInterval = 0,
        progress: (@Sendable (PushProgress) -> Void)? = nil
    ) {
        self.package = package
        self.target = target
        self.jobs = jobs
        self.force = force
        self.wait = wait
        self.progress = progress
    }

    /// What the target lacks, from one listing of it.
    struct Plan {
        var blobs: [AssetReference] = []
        var files: [LocalPackage.File] = []
        /// `.tmp-*` files of a push or gc killed halfway (folder targets), removed under the lease.
        var leftovers: [String] = []
        /// A file that is not a pushed package's, if any.
        var foreign: String?

        init(local: LocalPackage, listing: [TargetObject]) {
            var sizes: [String: Int] = [:]
            for object in listing {
                sizes[object.path] = object.size
                if Self.isLeftover(object.path) { leftovers.append(object.path) }
                else if foreign == nil, !Self.isPublished(object.path) { foreign = object.path }
            }
            blobs = local.assets.filter { sizes["assets/\($0.assetHash.hex)"] != $0.bytes }
            files = local.files.filter { sizes[$0.path] != $0.data.count }
        }

        var isEmpty: Bool { blobs.isEmpty && files.isEmpty && leftovers.isEmpty }

        /// `assets/<sha256>`, `refs/<sha256>.json`, `appconfig/<org>/<name>.json`, index.json, a lease.
        static func isPublished(_ path: String) -> Bool {
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            switch (parts.count, parts.first) {
            case (1, _): return ["index.json", FolderLease.fileName, S3Target.leaseName].contains(path)
            case (2, "assets"): return Digest(hex: parts[1]) != nil
            case (2, "refs"): return parts[1].hasSuffix(".json") && Digest(hex: parts[1].dropLast(5)) != nil
            case (3, "appconfig"): return parts[2].hasSuffix(".json")
            default: return false
            }
        }

        /// An abandoned atomic write (`AtomicFile`'s `.tmp-<name>-<uuid>`) in one of the published folders.
        static func isLeftover(_ path: String) -> Bool {
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.last?.hasPrefix(".tmp-") == true else { return false }
            return parts.count == 1 || parts.count == 2 && ["assets", "refs"].contains(parts[0]) || parts.count == 3 && parts[0] == "appconfig"
        }
    }

    public func run() throws -> PushReport {
        let start = Date()
        let local = try LocalPackage(package)
        try target.prepare()
        let remoteIndex = try target.read("index.json")
        if !force, let remoteIndex { try Self.checkSamePackage(remoteIndex, local: local.index, target: target.displayName) }
        let commits = remoteIndex != local.indexData

        // A push that will change the target holds the lease from its listing to its commit. A first
        // push looks before it takes it (no lock file is left in someone else's folder), and so does
        // one whose index is unchanged (if nothing is missing either, it is done without one).
        var lease: (any TargetLease)?
        defer { lease?.release() }
        var decided: Plan?
        var look: Plan?
        if remoteIndex == nil || !commits {
            look = Plan(local: local, listing: try target.list(under: ""))
            try checkNotForeign(look!, remoteIndex: remoteIndex)
            if !commits, look!.isEmpty { decided = look }
        }
        if decided == nil {
            lease = try target.acquireLease(for: "push", wait: wait)
            // A look that found nothing to skip stays good under the lease: a gc in between could only
            // have deleted what this push sends anyway. Otherwise what is "already there" is asked again.
            if let look, look.blobs.count == local.assets.count, look.files.count == local.files.count {
                decided = look
            } else {
                decided = Plan(local: local, listing: try target.list(under: ""))
                try checkNotForeign(decided!, remoteIndex: remoteIndex)
            }
        }
        let plan = decided!

        let total = local.assets.count + local.files.count + 1
        let report = Mutex(PushReport())
        let progress = self.progress
        @Sendable func count(uploaded: Bool, bytes: Int) {
            let snapshot = report.withLock { report in
                if uploaded { report.uploaded += 1; report.bytes += bytes } else { report.skipped += 1 }
                return PushProgress(done: report.uploaded + report.skipped, total: total, bytes: report.bytes)
            }
            progress?(snapshot)
        }
        for _ in 0..<(local.assets.count - plan.blobs.count) + (local.files.count - plan.files.count) { count(uploaded: false, bytes: 0) }

        // 0. What a killed push left: its own temp files.
        for path in plan.leftovers { try target.delete(path) }

        // 1. Blobs, then one listing that must show each with its size: a store may answer 200 and keep nothing.
        let target = self.target
        try ParallelWork.run(plan.blobs, width: jobs) { reference in
            let data = try local.verifiedBlob(reference)
            try target.write("assets/\(reference.assetHash.hex)", data: data, kind: .blob(contentType: local.contentTypes[reference.assetHash]))
            count(uploaded: true, bytes: data.count)
        }
        if !plan.blobs.isEmpty {
            try verify(local.assets.map { ("assets/\($0.assetHash.hex)", $0.bytes) }, folders: ["assets/"])
        }

        // 2. Blob lists and app configs, only now that every blob they name is there. Named by content too.
        try ParallelWork.run(plan.files, width: jobs) { file in
            try target.write(file.path, data: file.data, kind: .manifest)
            count(uploaded: true, bytes: file.data.count)
        }
        if !plan.files.isEmpty {
            try verify(local.files.map { ($0.path, $0.data.count) }, folders: ["refs/", "appconfig/"])
        }

        // 3. index.json last: the commit point, still under the lease.
        if commits {
            try lease!.renew()
            try target.write("index.json", data: local.indexData, kind: .index)
            count(uploaded: true, bytes: local.indexData.count)
        } else {
            count(uploaded: false, bytes: 0)
        }

        var result = report.withLock { $0 }
        result.seconds = Date().timeIntervalSince(start)
        return result
    }

    /// A target without index.json that holds files a push never writes is someone else's folder.
    func checkNotForeign(_ plan: Plan, remoteIndex: Data?) throws {
        guard remoteIndex == nil, !force, let foreign = plan.foreign else { return }
        throw OpsError(.badInput, target.describe(foreign), "is not a file of a pushed package, and the target has no index.json: "
            + "it holds something else (an organizer's source folder?); push into an empty folder or a previous push target, or use --force")
    }

    /// Lists `folders` once each and checks that every `expected` file is there with its exact size.
    /// - Throws: `OpsError` naming the first file that is missing or has another size.
    func verify(_ expected: [(path: String, size: Int)], folders: [String]) throws {
        var found: [String: Int] = [:]
        for folder in folders {
            for object in try target.list(under: folder) { found[object.path] = object.size }
        }
        for (path, size) in expected {
            guard let stored = found[path] else {
                throw OpsError(.failure, target.describe(path), "missing after upload (the target took it but does not list it); "
                    + "nothing committed, index.json unchanged")
            }
            guard stored == size else {
                throw OpsError(.failure, target.describe(path), "is \(stored) bytes on the target, \(size) were sent; nothing committed, index.json unchanged")
            }
        }
    }

    /// Refuses a target whose index.json is not this package's: another package id, an older layout
    /// (whose manifests lie in the open there), or not an index at all.
    static func checkSamePackage(_ data: Data, local: PublicIndex, target: String) throws {
        if (try? JSONValue.parse(data))?["format"]?.stringValue == PackageIndex.legacyFormat {
            throw OpsError(.badInput, "\(target)/index.json", "was published by an older pulse-pack, which put session and series "
                + "manifests there in the open: delete its sessions/ and series/ folders, then push with --force")
        }
        let remote: PublicIndex
        do { remote = try PublicFolder.parseIndex(data, path: "\(target)/index.json") } catch let error as StoreError {
            throw OpsError(.badInput, error.path, error.message + "; push there with --force only if it is yours to replace")
        }
        guard remote.packageId == local.packageId else {
            throw OpsError(.badInput, "\(target)/index.json", "holds package \(remote.packageId), this is package \(local.packageId): "
                + "pushing would replace its index; use a target of its own, or --force")
        }
    }
}
