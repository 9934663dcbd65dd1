import Foundation
import PulseCore
import PulseHTTPServer
import PulseServer
import PulseServerStorage
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseDevice

/// `kill -9` of the real `pulse-device sync` at random moments, on a package of 40 image slides (about 20 MB)
/// whose blobs the server trickles out (16 KB every 4 ms, resumable with Range/If-Range), so that kills land
/// before, between and in the middle of blobs, and during the commit and the garbage collection. After every
/// kill the cache must be usable: `cache.json` names a version whose every blob is there and whole. The
/// final sync completes, resumes what was half-fetched, and leaves exactly the new version's blobs.
@Suite struct KillDuringSyncTests {
    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pulse-device")
    }

    @Test func aSyncKilledAtAnyMomentLeavesTheCacheUsable() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "build pulse-device first (swift build)")
        let work = try TestFolder()
        let package = try SamplePackage.build(in: work.url)
        let deck = package.input.appendingPathComponent("decks/workshop-images")
        try FileManager.default.removeItem(at: deck)
        try Self.images(count: 40, megabytes: 20, seed: 1, into: deck)
        try package.rebuild()
        let server = try TestSyncServer(package: package, wrap: { sync, _ in SlowAssets(sync, package: package) })
        let temporary = try TestFolder()
        let folder = try DeviceFolder.open(temporary.path("device"), create: true)
        let transport = URLSessionTransport(timeout: 10)
        defer { transport.invalidate() }
        _ = try Enrollment.enroll(
            server: server.url, token: try server.deviceCode(.session("workshop")), folder: folder, name: "Killed", platform: "ios", transport: transport)
        let cache = DeviceCache(folder: folder)
        var log: [String] = []

        func killedSync(after seconds: Double) throws {
            let process = Process()
            process.executableURL = Self.binary
            process.arguments = ["sync", "--device-dir", folder.path, "--session", "workshop", "--json"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: seconds)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let problems = cache.check()
            let version = try cache.sessionManifest("workshop")?.deckVersion
            log.append(String(format: "killed after %.3f s: cached deckVersion %@, %d partial files", seconds, version.map(String.init) ?? "none",
                (try? FileManager.default.contentsOfDirectory(atPath: folder.partialURL.path).filter { !$0.hasSuffix(".etag") }.count) ?? 0))
            #expect(problems.isEmpty, "after a kill \(String(format: "%.3f", seconds)) s in: \(problems.prefix(3)); \(log)")
            // answers.json (signed answers: the rollback state) is whole too, and still requires signatures.
            let answers = try AnswerState.read(folder.answersURL)
            #expect(answers.signs == true, "after a kill \(String(format: "%.3f", seconds)) s in: answers.json lost its trust")
        }

        func completeSync() throws -> JSONValue {
            let process = Process()
            let output = Pipe()
            process.executableURL = Self.binary
            process.arguments = ["sync", "--device-dir", folder.path, "--session", "workshop", "--json"]
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "sync failed: \(String(decoding: data, as: UTF8.self))")
            return try JSONValue.parse(data)
        }

        for _ in 0..<3 { try killedSync(after: Double.random(in: 0.05...1.2)) }
        _ = try completeSync()
        let first = try #require(try cache.sessionManifest("workshop"))

        // Version 2: 30 of the 40 slides change (about a second of trickling at 4 downloads at once).
        let other = work.url.appendingPathComponent("other")
        try Self.images(count: 30, megabytes: 15, seed: 2, into: other)
        for n in 1...30 {
            try FileManager.default.removeItem(at: deck.appendingPathComponent("slide\(n).png"))
            try FileManager.default.copyItem(at: other.appendingPathComponent("slide\(n).png"), to: deck.appendingPathComponent("slide\(n).png"))
        }
        try package.rebuild()
        try server.importPackage(package)
        // Short runs: three of them fetch less than the whole, so the last sync has half-fetched blobs to resume.
        for _ in 0..<3 {
            try killedSync(after: Double.random(in: 0.1...0.35))
            let version = try cache.sessionManifest("workshop")?.deckVersion
            #expect(version == first.deckVersion || version == (first.deckVersion ?? 0) + 1)
        }
        // A partial created just before a kill may hold no byte yet: only the others can be resumed.
        let partialsBefore = ((try? FileManager.default.contentsOfDirectory(atPath: folder.partialURL.path)) ?? [])
            .filter { !$0.hasSuffix(".etag") && (BlobDownloader.size(folder.partialURL.appendingPathComponent($0).path) ?? 0) > 0 }.count
        let report = try completeSync()
        let second = try #require(try cache.sessionManifest("workshop"))
        #expect(second.deckVersion == (first.deckVersion ?? 0) + 1)
        #expect(cache.check().isEmpty)
        let blobs = Set(try FileManager.default.contentsOfDirectory(atPath: folder.blobsURL.path))
        #expect(blobs == Set(second.assets.map(\.hash.hex)), "exactly the new version's blobs are left")
        let resumed = report["manifests"]?.arrayValue?.first?["resumedBytes"]?.intValue ?? 0
        if partialsBefore > 0 { #expect(resumed > 0, "half-fetched blobs were fetched again from the start") }
        print("kill -9 during sync: \(log.joined(separator: "; ")); the last sync resumed \(resumed) bytes")
    }

    /// `count` PNG slides of about `megabytes` in all (Scripts/samples/make-image-folder: incompressible pixels).
    static func images(count: Int, megabytes: Int, seed: Int, into folder: URL) throws {
        let script = SamplePackage.samples.deletingLastPathComponent().appendingPathComponent("Scripts/samples/make-image-folder")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--count", String(count), "--total-mb", String(megabytes), "--seed", String(seed), "--out", folder.path]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "make-image-folder failed")
    }
}

/// Serves `/api/sync/asset/<hash>` from the package slowly, as a stream (16 KB every 4 ms), honouring
/// `Range: bytes=N-` with `If-Range`; everything else goes to the real server.
final class SlowAssets: HTTPResponder {
    let inner: any HTTPResponder
    let assets: URL

    init(_ inner: any HTTPResponder, package: SamplePackage) {
        self.inner = inner
        assets = package.publicPart.appendingPathComponent("assets")
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        let path = Breaker.path(request)
        guard path.hasPrefix("/api/sync/asset/"), let bytes = try? Data(contentsOf: assets.appendingPathComponent(String(path.dropFirst(16)))) else {
            return inner.respond(to: request)
        }
        let hash = String(path.dropFirst(16))
        var start = 0
        var headers = [HTTPHeader("Content-Type", "application/octet-stream"), HTTPHeader("ETag", "\"\(hash)\"")]
        var status = 200
        if let range = request.headers["range"].map({ String(decoding: $0, as: UTF8.self) }), range.hasPrefix("bytes="),
           let from = Int(range.dropFirst(6).dropLast()), from < bytes.count,
           request.headers["if-range"].map({ String(decoding: $0, as: UTF8.self) == "\"\(hash)\"" }) ?? true {
            start = from
            status = 206
            headers.append(HTTPHeader("Content-Range", "bytes \(from)-\(bytes.count - 1)/\(bytes.count)"))
        }
        let stream = HTTPEventStream(maxPendingBytes: 1 << 22)
        let body = Array(bytes[start...])
        Thread {
            var offset = 0
            while offset < body.count {
                let end = min(offset + 16_384, body.count)
                guard stream.send(Array(body[offset..<end])) else { return }
                offset = end
                Thread.sleep(forTimeInterval: 0.004)
            }
            stream.close()
        }.start()
        return HTTPResponse(status: status, headers: headers, body: .stream(stream))
    }

    func finished(_ exchange: HTTPExchange) { inner.finished(exchange) }
}
