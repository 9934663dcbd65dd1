import Foundation
import PulseCore
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
/// that never exposes an index naming a missing file: all blobs first (each checked against its SHA-256
/// before sending), then the blob lists and app configs, then index.json, the commit point. Anything the
/// target already has (same size) is skipped, so a re-run after an interruption finishes the job and an
/// unchanged package sends nothing. A target whose index.json belongs to another package (another id) is
/// refused unless `force`: two packages built with different secrets never overwrite each other there.
public struct Pusher: Sendable {
    /// The package folder, or a folder holding a public part at its top (a previous push target).
    public var package: URL
    public var target: any PushTarget
    /// Uploads in flight at once.
    public var jobs: Int
    /// Push even if the target holds another package (or an older layout).
    public var force: Bool
    public var progress: (@Sendable (PushProgress) -> Void)?

    public init(
        package: URL, target: any PushTarget, jobs: Int = 4, force: Bool = false, progress: (@Sendable (PushProgress) -> Void)? = nil
    ) {
        self.package = package
        self.target = target
        self.jobs = jobs
        self.force = force
        self.progress = progress
    }

    public func run() throws -> PushReport {
        let start = Date()
        let local = try LocalPackage(package)
        try target.prepare()
        let remoteIndex = try target.read("index.json")
        if !force, let remoteIndex { try Self.checkSamePackage(remoteIndex, local: local.index, target: target.displayName) }

        let total = local.assets.count + local.files.count + 1
        let report = Mutex(PushReport())
        let target = self.target
        let progress = self.progress
        @Sendable func count(uploaded: Bool, bytes: Int) {
            let snapshot = report.withLock { report in
                if uploaded { report.uploaded += 1; report.bytes += bytes } else { report.skipped += 1 }
                return PushProgress(done: report.uploaded + report.skipped, total: total, bytes: report.bytes)
            }
            progress?(snapshot)
        }

        // 1. Blobs. A blob is content-addressed: one of the right size is the right one.
        try ParallelWork.run(local.assets, width: jobs) { reference in
            let path = "assets/\(reference.assetHash)"
            if try target.size(of: path) == reference.bytes { return count(uploaded: false, bytes: 0) }
            let data = try local.verifiedBlob(reference)
            try target.write(path, data: data, kind: .blob(contentType: local.contentTypes[reference.assetHash]))
            count(uploaded: true, bytes: data.count)
        }

        // 2. Blob lists and app configs, only now that every blob they name is there. Named by content too.
        let files = local.files.map { ($0.path, $0.data) }
        try ParallelWork.run(files, width: jobs) { path, data in
            if try target.size(of: path) == data.count { return count(uploaded: false, bytes: 0) }
            try target.write(path, data: data, kind: .manifest)
            count(uploaded: true, bytes: data.count)
        }

        // 3. index.json last: the commit point.
        if remoteIndex == local.indexData {
            count(uploaded: false, bytes: 0)
        } else {
            try target.write("index.json", data: local.indexData, kind: .index)
            count(uploaded: true, bytes: local.indexData.count)
        }

        var result = report.withLock { $0 }
        result.seconds = Date().timeIntervalSince(start)
        return result
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
