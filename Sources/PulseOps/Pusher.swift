import Foundation
import PulseCore
import PulseStore
import Synchronization

/// What a push did.
public struct PushReport: Sendable, Equatable {
    /// Files sent (blobs, manifests, index.json).
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

/// Publishes a package's public part to a target in an order that never exposes a manifest naming a
/// missing blob: all blobs first (each checked against its SHA-256 before sending), then every
/// manifest file, then index.json, the commit point. Anything the target already has (same size) is
/// skipped, so a re-run after an interruption finishes the job and an unchanged package sends nothing.
public struct Pusher: Sendable {
    public var package: PulsePackage
    public var target: any PushTarget
    /// Uploads in flight at once.
    public var jobs: Int
    public var progress: (@Sendable (PushProgress) -> Void)?

    public init(package: PulsePackage, target: any PushTarget, jobs: Int = 4, progress: (@Sendable (PushProgress) -> Void)? = nil) {
        self.package = package
        self.target = target
        self.jobs = jobs
        self.progress = progress
    }

    public func run() throws -> PushReport {
        let start = Date()
        let local = try LocalPackage(package)
        try target.prepare()

        let total = local.assets.count + local.manifests.count + 1
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

        // 2. Manifest files, only now that every blob they name is there. Named by content too.
        let manifests = local.manifests.map { ($0.path, $0.data) }
        try ParallelWork.run(manifests, width: jobs) { path, data in
            if try target.size(of: path) == data.count { return count(uploaded: false, bytes: 0) }
            try target.write(path, data: data, kind: .manifest)
            count(uploaded: true, bytes: data.count)
        }

        // 3. index.json last: the commit point.
        if try target.read("index.json") == local.indexData {
            count(uploaded: false, bytes: 0)
        } else {
            try target.write("index.json", data: local.indexData, kind: .index)
            count(uploaded: true, bytes: local.indexData.count)
        }

        var result = report.withLock { $0 }
        result.seconds = Date().timeIntervalSince(start)
        return result
    }
}
