import Foundation
import PulseCrypto
import PulseHTTPServer
import PulseObservability
import PulseOrigin
import PulseSystem
import PulseTestSupport
import Testing

/// pulse-origin's cache outcomes move its metrics: a corrupt blob (`pulse_origin_corrupt_blobs_total`, a miss
/// `corrupt`), hits from disk (no memory cache), and a `busy` miss when the verifiers' queue is full.
@Suite(.serialized) struct OriginMetricsTests {
    /// A public part with no index entries and the blobs given, each named by the SHA-256 of `name`'s bytes.
    static func publicPart(in folder: TestFolder, blobs: [(name: [UInt8], bytes: [UInt8])]) throws -> (URL, [String]) {
        let root = folder.url.appendingPathComponent("public")
        let assets = root.appendingPathComponent("assets")
        try FileManager.default.createDirectory(at: assets, withIntermediateDirectories: true)
        try Data(#"{"format":"pulse-public/1","packageId":"0123456789abcdef0123456789abcdef","appconfig":{},"history":{}}"#.utf8)
            .write(to: root.appendingPathComponent("index.json"))
        var names: [String] = []
        for blob in blobs {
            let name = SHA256.hex(blob.name)
            try Data(blob.bytes).write(to: assets.appendingPathComponent(name))
            names.append(name)
        }
        return (root, names)
    }

    static func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    @Test func aCorruptBlobAndDiskHitsAreCounted() throws {
        let folder = try TestFolder()
        let good = Self.random(300_000), other = Self.random(1000)
        let (root, names) = try Self.publicPart(in: folder, blobs: [(good, good), (other, Self.random(1000))])
        let (goodName, corruptName) = (names[0], names[1])
        let origin = try MetricsProcess("pulse-origin", ["--package", root.path, "--access-log", "off", "--memory-cache", "0"])
        func get(_ name: String) throws -> RawHTTPResponse { try origin.client().request("GET", "/api/sync/asset/" + name) }

        let first = try get(goodName)
        #expect(first.status == 200 && first.body == good)
        #expect(try get(goodName).status == 200 && get(goodName).status == 200)  // from disk: no memory cache
        #expect(try get(corruptName).status == 500 && get(corruptName).status == 500)
        #expect(eventually(within: 5) { origin.errorLines.contains { $0.contains("CORRUPT BLOB") && $0.contains(corruptName) } }, "the corrupt blob is an alarm: \(origin.errorLines)")

        let expected: [(String, Double)] = [
            (#"pulse_origin_cache_misses_total{reason="verified"}"#, 1),
            (#"pulse_origin_cache_hits_total{tier="disk"}"#, 2),
            (#"pulse_origin_cache_hits_total{tier="memory"}"#, 0),
            (#"pulse_origin_cache_misses_total{reason="corrupt"}"#, 2),  // both answers
            ("pulse_origin_corrupt_blobs_total", 1),  // the file, once
            (#"pulse_http_requests_total{route="/api/sync/asset/:hash",status="5xx"}"#, 2),
        ]
        let text = try origin.scrape(settledOn: expected)
        for (series, value) in expected {
            #expect(Scrape.value(text, series) == value, "\(series): \(Scrape.value(text, series).map { "\($0)" } ?? "absent")")
        }
        #expect((Scrape.value(text, "pulse_origin_sent_bytes_total") ?? 0) >= Double(3 * good.count))
        #expect((Scrape.value(text, "pulse_origin_verifications_total") ?? 0) >= 2)
    }

    /// With one verifier held and a queue of one, a first request for another blob is answered 503 `busy`, and the
    /// metrics (through `MeteredResponder`, as pulse-origin wires them) count it.
    @Test func aFullVerifierQueueIsABusyMiss() throws {
        let folder = try TestFolder()
        let one = Self.random(1000), two = Self.random(1000)
        let (root, names) = try Self.publicPart(in: folder, blobs: [(one, one), (two, two)])
        var configuration = OriginConfiguration(packageRoot: root)
        configuration.verifyThreads = 1
        configuration.verifyQueue = 1
        let held = DispatchSemaphore(value: 0), hashing = DispatchSemaphore(value: 0)
        let origin = try Origin(configuration: configuration, accessLog: nil, alarm: { _ in }, willHash: {
            hashing.signal()
            held.wait()
        })
        let metrics = OriginMetrics(origin: origin, version: "test")
        let metered = MeteredResponder(origin, meter: metrics)
        func ask(_ name: String) -> HTTPResponse {
            let response = metered.respond(to: HTTPRequest(.get, "/api/sync/asset/" + name))
            let answer = response.deferred.flatMap { $0.wait(timeout: 10) } ?? response
            metered.finished(HTTPExchange(
                client: Array("127.0.0.1".utf8), method: "GET", target: Array(("/api/sync/asset/" + name).utf8), status: answer.status,
                bodyBytes: answer.body.count, durationNanoseconds: 1000, note: answer.note, completed: true))
            return answer
        }
        let first = metered.respond(to: HTTPRequest(.get, "/api/sync/asset/" + names[0]))
        let verifying = try #require(first.deferred, "the first request waits for its verification")
        #expect(hashing.wait(timeout: .now() + 10) == .success)
        let busy = ask(names[1])
        #expect(busy.status == 503 && busy.note == "busy" && busy.header("Retry-After") == "1")
        held.signal()
        #expect(verifying.wait(timeout: 10)?.status == 200)
        held.signal()
        #expect(ask(names[1]).status == 200, "once the queue has room, the same blob is verified and served")

        let text = String(decoding: metrics.registry.exposition(), as: UTF8.self)
        #expect(Scrape.value(text, #"pulse_origin_cache_misses_total{reason="busy"}"#) == 1, "\(text)")
        #expect(Scrape.value(text, #"pulse_origin_cache_misses_total{reason="verified"}"#) == 1)
        #expect(Scrape.value(text, #"pulse_http_requests_total{route="/api/sync/asset/:hash",status="5xx"}"#) == 1)
    }
}
