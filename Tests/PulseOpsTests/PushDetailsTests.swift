import Foundation
import PulseCommandLine
import Synchronization
import PulseTestSupport
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// Bounded parallel uploads, the headers a pushed object carries, the progress bar.
@Suite(.serialized) struct PushDetailsTests {
    /// Counts writes in flight; each write takes a moment so overlaps happen.
    final class ProbeTarget: PushTarget, @unchecked Sendable {
        let inner: any PushTarget
        let inFlight = Mutex((now: 0, max: 0))
        init(_ inner: any PushTarget) { self.inner = inner }
        var displayName: String { inner.displayName }
        func prepare() throws { try inner.prepare() }
        func size(of path: String) throws -> Int? { try inner.size(of: path) }
        func read(_ path: String) throws -> Data? { try inner.read(path) }
        func list(under prefix: String) throws -> [TargetObject] { try inner.list(under: prefix) }
        func delete(_ path: String) throws { try inner.delete(path) }
        func acquireLease(for operation: String, wait: TimeInterval) throws -> any TargetLease {
            try inner.acquireLease(for: operation, wait: wait)
        }
        func write(_ path: String, data: Data, kind: PublishedKind) throws {
            inFlight.withLock { $0.now += 1; $0.max = max($0.max, $0.now) }
            defer { inFlight.withLock { $0.now -= 1 } }
            Thread.sleep(forTimeInterval: 0.05)
            try inner.write(path, data: data, kind: kind)
        }
    }

    @Test func uploadsRunSeveralAtATimeButNoMoreThanJobs() throws {
        let package = try TestPackage()
        let temporary = try TestFolder("pulse-target")
        let folder = temporary.url
        try package.publish(slides: (1...12).map { "parallel slide \($0)" })
        let probe = ProbeTarget(FolderTarget(root: folder))
        let report = try Pusher(package: package.root, target: probe, jobs: 3).run()
        #expect(report.uploaded == 18)
        let peak = probe.inFlight.withLock { $0.max }
        #expect(peak >= 2 && peak <= 3, "peak uploads in flight: \(peak)")
    }

    @Test func pushedObjectsCarryTheirCacheHeaders() throws {
        let harness = try Harness(.s3)
        let package = try TestPackage()
        try package.publish(slides: ["cache slide"])
        _ = try Pusher(package: package.root, target: harness.target).run()
        let client = (harness.target as! S3Target).client
        func head(_ path: String) throws -> [String: String] {
            var request = try client.request("HEAD", key: "live/pulse/\(path)", query: [], body: Data(), headers: [("x-amz-checksum-mode", "ENABLED")], payloadHash: nil)
            request.httpMethod = "HEAD"
            return try client.http.send(request).headers
        }
        let blob = try head("assets/\(TestPackage.hash("cache slide"))")
        #expect(blob["cache-control"] == "public, max-age=31536000, immutable")
        #expect(blob["x-amz-checksum-sha256"] != nil)
        #expect(blob["content-type"] == "application/octet-stream")
        let logo = try head("assets/\(TestPackage.hash("logo-v1"))")
        #expect(logo["content-type"] == "image/png", "a public image keeps the contentType its manifest gives")
        #expect(logo["cache-control"] == "public, max-age=31536000, immutable")
        let index = try head("index.json")
        #expect(index["cache-control"] == "no-cache")
        #expect(index["content-type"] == "application/json")
    }

    @Test func progressBarOnlyOnATerminal() throws {
        #expect(ProgressBar.line(done: 5, total: 10, detail: "files, 2.0 KB sent", width: 10) == "[#####.....] 5/10 files, 2.0 KB sent")
        let package = try TestPackage()
        let temporary = try TestFolder("pulse-target")
        let folder = temporary.url
        try package.publish(slides: ["bar slide"])
        for terminal in [true, false] {
            let err = Mutex("")
            let environment = OpsEnvironment(variables: [:], home: nil, standardOutput: { _ in },
                                             standardError: { text in err.withLock { $0 += text } }, errorIsTerminal: terminal)
            let code = PulseCommandLine.CommandLineTool.main(
                PushCommand.make(environment), arguments: [package.root.path, "--to", folder.appendingPathComponent("\(terminal)").path],
                errorHandler: { _ in 99 })
            #expect(code == 0)
            let text = err.withLock { $0 }
            if terminal {
                #expect(text.hasPrefix("\r[") && text.contains("7/7 files") && text.hasSuffix("\n"), "\(text)")
            } else {
                #expect(text.isEmpty)
            }
        }
    }
}

struct MediaTypeTests {
    @Test func onlyPlainMediaTypesBecomeHeaders() {
        #expect(LocalPackage.isMediaType("image/png"))
        #expect(LocalPackage.isMediaType("image/svg+xml"))
        #expect(!LocalPackage.isMediaType("image/png\r\nX-Evil: 1"))
        #expect(!LocalPackage.isMediaType("image/png; charset=x"))
        #expect(!LocalPackage.isMediaType("png"))
        #expect(!LocalPackage.isMediaType("/png"))
    }
}
