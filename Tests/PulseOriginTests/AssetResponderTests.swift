import Foundation
import PulseCrypto
import PulseHTTPServer
import PulseTestSupport
import Testing
@testable import PulseOrigin

/// The bytes a response would send.
func bodyBytes(_ response: HTTPResponse) throws -> [UInt8] {
    switch response.body {
    case .empty: return []
    case let .bytes(bytes): return bytes
    case let .buffer(buffer, offset, count): return buffer[offset..<(offset + count)]
    case let .file(file, offset, count): return try file.read(at: offset, count: count)
    case .stream: return []
    }
}

/// The origin's answer; a deferred one (a blob hashed before its first answer) is awaited.
func get(_ origin: Origin, _ target: String, _ headers: [String: String] = [:], method: HTTPMethod = .get) -> HTTPResponse {
    let response = origin.respond(to: HTTPRequest(method, target, headers))
    guard let deferred = response.deferred else { return response }
    return deferred.wait(timeout: 30) ?? HTTPResponse(status: 0, note: "no answer within 30 s")
}

@Suite struct AssetResponderTests {
    @Test func servesExactBytesWithImmutableHeaders() throws {
        let package = try TestPackage.publicPart()
        let bytes = TestPackage.randomBytes(5000)
        let hash = try package.addBlob(bytes)
        let origin = try package.origin()
        let response = get(origin, "/api/sync/asset/\(hash)")
        #expect(response.status == 200)
        #expect(try bodyBytes(response) == bytes)
        #expect(response.header("Content-Type") == "application/octet-stream")
        #expect(response.header("Cache-Control") == "public, max-age=31536000, immutable")
        #expect(response.header("ETag") == "\"\(hash)\"")
        #expect(response.header("Accept-Ranges") == "bytes")
        #expect(response.header("Repr-Digest") == "sha-256=:\(Data(SHA256.hash(bytes)).base64EncodedString()):")
        #expect(response.header("X-Content-Type-Options") == "nosniff")
        #expect(response.header("Access-Control-Allow-Origin") == "*")
        #expect(response.note == "verified")
        #expect(get(origin, "/api/sync/asset/\(hash)").note == "memory")
    }

    @Test func allowOriginIsConfigurable() throws {
        let package = try TestPackage.publicPart()
        let hash = try package.addBlob([1, 2, 3])
        let custom = try package.origin { $0.allowOrigin = "https://app.example" }
        #expect(get(custom, "/api/sync/asset/\(hash)").header("Access-Control-Allow-Origin") == "https://app.example")
        let none = try package.origin { $0.allowOrigin = nil }
        #expect(get(none, "/api/sync/asset/\(hash)").header("Access-Control-Allow-Origin") == nil)
    }

    @Test func largeBlobsAreServedFromDiskAfterVerification() throws {
        let package = try TestPackage.publicPart()
        let bytes = TestPackage.randomBytes(300_000)
        let hash = try package.addBlob(bytes)
        let origin = try package.origin { $0.memoryMaxBlob = 100_000 }
        let first = get(origin, "/api/sync/asset/\(hash)")
        guard case .file = first.body else { Issue.record("expected a file body"); return }
        #expect(first.note == "verified")
        #expect(try bodyBytes(first) == bytes)
        let second = get(origin, "/api/sync/asset/\(hash)")
        #expect(second.note == "disk")
        #expect(try bodyBytes(second) == bytes)
        #expect(origin.assets.memoryUsed == 0)
    }

    @Test func memoryStaysWithinBudget() throws {
        let package = try TestPackage.publicPart()
        let origin = try package.origin { $0.memoryBudget = 25_000; $0.memoryMaxBlob = 10_000 }
        var hashes: [String] = []
        for _ in 0..<6 { hashes.append(try package.addBlob(TestPackage.randomBytes(10_000))) }
        for hash in hashes { #expect(get(origin, "/api/sync/asset/\(hash)").status == 200) }
        #expect(origin.assets.memoryUsed <= 25_000)
        #expect(origin.assets.memoryUsed >= 10_000)
        // Evicted blobs are still served (from disk) with the right bytes.
        for hash in hashes {
            let response = get(origin, "/api/sync/asset/\(hash)")
            #expect(SHA256.hex(try bodyBytes(response)) == hash)
        }
    }

    /// `H` in the header template stands for the blob's hash.
    @Test(arguments: [
        ("\"H\"", true), ("W/\"H\"", true), ("\"abc\", W/\"def\" ,\"H\"", true), ("*", true),
        ("\"0000\"", false), ("H", false), ("\"H0\"", false), ("W/\"\"", false),
    ])
    func ifNoneMatch(template: String, matches: Bool) throws {
        let package = try TestPackage.publicPart()
        let hash = try package.addBlob(TestPackage.randomBytes(100))
        let origin = try package.origin()
        let header = template.replacingOccurrences(of: "H", with: hash)
        let response = get(origin, "/api/sync/asset/\(hash)", ["If-None-Match": header])
        #expect(response.status == (matches ? 304 : 200), "\(template)")
        if matches {
            #expect(try bodyBytes(response).isEmpty)
            #expect(response.header("ETag") == "\"\(hash)\"")
            #expect(response.header("Cache-Control") == "public, max-age=31536000, immutable")
        }
    }

    @Test func ranges() throws {
        let package = try TestPackage.publicPart()
        let bytes = TestPackage.randomBytes(1000)
        let hash = try package.addBlob(bytes)
        for memoryMaxBlob in [8 << 20, 0] {  // from memory and from disk
            let origin = try package.origin { $0.memoryMaxBlob = memoryMaxBlob }
            let path = "/api/sync/asset/\(hash)"
            func range(_ value: String, _ extra: [String: String] = [:]) -> HTTPResponse {
                get(origin, path, extra.merging(["Range": value]) { a, _ in a })
            }
            var response = range("bytes=10-19")
            #expect(response.status == 206)
            #expect(response.header("Content-Range") == "bytes 10-19/1000")
            #expect(try bodyBytes(response) == Array(bytes[10...19]))
            response = range("bytes=-5")
            #expect(response.header("Content-Range") == "bytes 995-999/1000")
            #expect(try bodyBytes(response) == Array(bytes[995...]))
            response = range("bytes=990-")
            #expect(try bodyBytes(response) == Array(bytes[990...]))
            response = range("bytes=990-5000")
            #expect(response.header("Content-Range") == "bytes 990-999/1000")
            for unsatisfiable in ["bytes=1000-", "bytes=5000-6000", "bytes=-0"] {
                response = range(unsatisfiable)
                #expect(response.status == 416, "\(unsatisfiable)")
                #expect(response.header("Content-Range") == "bytes */1000")
            }
            for whole in ["bytes=0-1,5-6", "bytes=x-y", "items=0-1", "bytes=9-3"] {
                response = range(whole)
                #expect(response.status == 200, "\(whole)")
                #expect(try bodyBytes(response) == bytes)
            }
            #expect(range("bytes=0-0", ["If-Range": "\"\(hash)\""]).status == 206)
            #expect(range("bytes=0-0", ["If-Range": "W/\"\(hash)\""]).status == 200)
            #expect(range("bytes=0-0", ["If-Range": "\"other\""]).status == 200)
            #expect(range("bytes=0-0", ["If-Range": "Sun, 29 Nov 2026 10:00:00 GMT"]).status == 200)
            // HEAD ignores Range; If-None-Match wins over Range.
            #expect(get(origin, path, ["Range": "bytes=0-0"], method: .head).status == 200)
            #expect(range("bytes=0-0", ["If-None-Match": "\"\(hash)\""]).status == 304)
        }
    }

    @Test func unknownBlobIsNotFoundAndNotStored() throws {
        let package = try TestPackage.publicPart()
        let origin = try package.origin()
        let missing = SHA256.hex([9, 9, 9])
        let response = get(origin, "/api/sync/asset/\(missing)")
        #expect(response.status == 404)
        #expect(response.header("Cache-Control") == "no-store")
        // Pushed a minute later: served without a restart.
        try package.addBlob([9, 9, 9])
        let later = get(origin, "/api/sync/asset/\(missing)")
        #expect(later.status == 200)
        #expect(try bodyBytes(later) == [9, 9, 9])
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH", "TRACE"])
    func otherMethodsAreNotAllowed(method: String) throws {
        let package = try TestPackage.publicPart()
        let hash = try package.addBlob([1])
        let origin = try package.origin()
        let response = get(origin, "/api/sync/asset/\(hash)", method: HTTPMethod(method))
        #expect(response.status == 405)
        #expect(response.header("Allow") == "GET, HEAD, OPTIONS")
    }

    @Test func pathTricksAreNotFound() throws {
        let package = try TestPackage.publicPart()
        let hash = try package.addBlob([1, 2, 3])
        let origin = try package.origin()
        let tricks = [
            "/api/sync/asset/..", "/api/sync/asset/../index.json", "/api/sync/asset/%2e%2e/index.json",
            "/api/sync/asset/%2e%2e%2findex.json", "/api/sync/asset/..%2findex.json",
            "/api/sync/asset/\(hash.uppercased())", "/api/sync/asset/\(hash.dropLast())", "/api/sync/asset/\(hash)0",
            "/api/sync/asset/\(hash)/", "/api/sync/asset/\(hash)?x=1", "/api/sync/asset/\(hash)?",
            "/api/sync/asset/\(hash)#", "/api/sync/asset/%\(hash.dropFirst())", "/api/sync/asset/", "/api/sync/asset",
            "/api/sync//asset/\(hash)", "//api/sync/asset/\(hash)", "/API/sync/asset/\(hash)", "/api/sync/asset/\(hash)%00",
            "/assets/\(hash)", "/index.json",
        ]
        for trick in tricks {
            let response = get(origin, trick)
            #expect(response.status == 404, "\(trick)")
            #expect(response.header("Cache-Control") == "no-store", "\(trick)")
        }
        #expect(get(origin, "/api/sync/asset/\(hash)").status == 200)
    }

    @Test func bitFlippedBlobIsNeverServed() throws {
        let package = try TestPackage.publicPart()
        let bytes = TestPackage.randomBytes(4096)
        let hash = try package.addBlob(bytes)
        try package.flipBit(hash, at: 100)
        let alarms = AlarmLog()
        let origin = try package.origin(alarms: alarms)
        for headers in [[:], ["Range": "bytes=0-10"], ["If-None-Match": "\"other\""]] {
            for method in [HTTPMethod.get, .head] {
                let response = get(origin, "/api/sync/asset/\(hash)", headers, method: method)
                #expect(response.status == 500)
                #expect(response.header("Cache-Control") == "no-store")
            }
        }
        #expect(alarms.all.count == 1)
        #expect(alarms.all.first?.contains("CORRUPT BLOB") == true)
    }

    @Test func corruptionAfterVerificationIsCaught() throws {
        let package = try TestPackage.publicPart()
        let bytes = TestPackage.randomBytes(300_000)
        let hash = try package.addBlob(bytes)
        for memoryMaxBlob in [8 << 20, 0] {
            let origin = try package.origin { $0.recheckSeconds = 0; $0.memoryMaxBlob = memoryMaxBlob }
            #expect(get(origin, "/api/sync/asset/\(hash)").status == 200)
            try package.flipBit(hash, at: 299_999)
            #expect(get(origin, "/api/sync/asset/\(hash)").status == 500)
            #expect(get(origin, "/api/sync/asset/\(hash)", ["Range": "bytes=0-1"]).status == 500)
            try package.flipBit(hash, at: 299_999)  // repaired: served again
            #expect(get(origin, "/api/sync/asset/\(hash)").status == 200)
        }
    }

    @Test func healthz() throws {
        let package = try TestPackage.publicPart()
        let response = get(try package.origin(), "/healthz")
        #expect(response.status == 200)
        #expect(response.header("Cache-Control") == "no-store")
    }

    /// Issue 19 item 2: `/livez` while the process answers; `/readyz` while the blob folder is there and no stop
    /// has begun. Neither is a CORS route: OPTIONS is 405 like any other method.
    @Test func livenessAndReadiness() throws {
        let package = try TestPackage.publicPart()
        let origin = try package.origin()
        for path in ["/livez", "/readyz"] {
            let answer = get(origin, path)
            #expect(answer.status == 200 && answer.header("Cache-Control") == "no-store")
            #expect(try bodyBytes(answer) == Array("ok\n".utf8))
            #expect(get(origin, path, method: .head).status == 200)
            #expect(get(origin, path, ["Origin": "https://app.example", "Access-Control-Request-Method": "GET"], method: .options).status == 405)
            #expect(get(origin, path, method: .post).status == 405)
        }
        let away = package.publicRoot.appendingPathComponent("assets-away")
        try FileManager.default.moveItem(at: package.assets, to: away)
        #expect(get(origin, "/readyz").status == 503)
        #expect(get(origin, "/livez").status == 200)
        try FileManager.default.moveItem(at: away, to: package.assets)
        #expect(get(origin, "/readyz").status == 200)

        origin.readiness.beginDraining()
        let draining = get(origin, "/readyz")
        #expect(draining.status == 503)
        #expect(try bodyBytes(draining) == Array("draining\n".utf8))
        #expect(get(origin, "/livez").status == 200)
        #expect(get(origin, "/healthz").status == 200)
    }
}
