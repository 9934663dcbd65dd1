import Foundation
import PulseHTTPServer
import PulseTestSupport
import Testing
@testable import PulseOrigin

@Suite struct AppConfigTests {
    let acme = ##"{"org":"acme","productName":"Acme Live","colors":{"primary":"#FF3300"},"theme":"dark","logo":{"assetHash":"00","bytes":1}}"##

    @Test func servesTheFileBytesWithItsVersionAsETag() throws {
        let package = try TestPackage.publicPart()
        let version = try package.addAppConfig("acme", json: acme + "\n")
        let origin = try package.origin()
        let response = get(origin, "/api/sync/appconfig?org=acme")
        #expect(response.status == 200)
        #expect(try bodyBytes(response) == Array((acme + "\n").utf8))
        #expect(response.header("ETag") == "\"\(version)\"")
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Cache-Control") == "public, max-age=60")
        #expect(response.header("Access-Control-Allow-Origin") == "*")
        #expect(get(origin, "/api/sync/appconfig?x=1&org=acme").status == 200)
        #expect(get(origin, "/api/sync/appconfig?org=ac%6De").status == 200)
        #expect(get(origin, "/api/sync/appconfig?org=acme", method: .head).status == 200)
    }

    @Test func notModifiedOnMatchingETag() throws {
        let package = try TestPackage.publicPart()
        let version = try package.addAppConfig("acme", json: acme)
        let origin = try package.origin { $0.appconfigMaxAge = 30 }
        let response = get(origin, "/api/sync/appconfig?org=acme", ["If-None-Match": "W/\"\(version)\""])
        #expect(response.status == 304)
        #expect(response.header("ETag") == "\"\(version)\"")
        #expect(response.header("Cache-Control") == "public, max-age=30")
        #expect(get(origin, "/api/sync/appconfig?org=acme", ["If-None-Match": "\"old\""]).status == 200)
    }

    @Test func unknownOrgIsNotFound() throws {
        let package = try TestPackage.publicPart()
        try package.addAppConfig("acme", json: acme)
        let origin = try package.origin()
        for target in ["/api/sync/appconfig?org=globex", "/api/sync/appconfig?org=..%2Facme", "/api/sync/appconfig?org=ACME"] {
            let response = get(origin, target)
            #expect(response.status == 404, "\(target)")
            #expect(response.header("Cache-Control") == "no-store")
        }
        #expect(get(origin, "/api/sync/appconfig").status == 400)
        #expect(get(origin, "/api/sync/appconfig?org=acme", method: .other("POST")).status == 405)
    }

    @Test func rebuildIsPickedUpWithoutRestart() throws {
        let package = try TestPackage.publicPart()
        let first = try package.addAppConfig("acme", json: acme)
        let origin = try package.origin { $0.recheckSeconds = 0 }
        #expect(get(origin, "/api/sync/appconfig?org=acme").header("ETag") == "\"\(first)\"")
        #expect(get(origin, "/api/sync/appconfig?org=globex").status == 404)
        let second = try package.addAppConfig("acme", json: acme.replacingOccurrences(of: "dark", with: "light"))
        try package.addAppConfig("globex", json: #"{"org":"globex"}"#)
        let response = get(origin, "/api/sync/appconfig?org=acme")
        #expect(response.header("ETag") == "\"\(second)\"")
        #expect(String(decoding: try bodyBytes(response), as: UTF8.self).contains("light"))
        #expect(get(origin, "/api/sync/appconfig?org=acme", ["If-None-Match": "\"\(first)\""]).status == 200)
        #expect(get(origin, "/api/sync/appconfig?org=globex").status == 200)
    }

    /// index.json is looked at once per `--recheck` interval, not on every request (a stat costs more than the rest
    /// of the answer): a rebuild is served once the interval has passed, and at once after /healthz.
    @Test func aRebuildIsSeenWithinTheRecheckInterval() throws {
        let package = try TestPackage.publicPart()
        let first = try package.addAppConfig("acme", json: acme)
        let origin = try package.origin { $0.recheckSeconds = 2 }
        #expect(get(origin, "/api/sync/appconfig?org=acme").header("ETag") == "\"\(first)\"")
        let changedAt = Date()
        let second = try package.addAppConfig("acme", json: acme.replacingOccurrences(of: "dark", with: "light"))
        let early = get(origin, "/api/sync/appconfig?org=acme").header("ETag")
        // Only meaningful when this thread was not held up for the whole interval.
        if Date().timeIntervalSince(changedAt) < 1.5 { #expect(early == "\"\(first)\"", "looked at before the interval passed") }
        #expect(eventually(within: 4) { get(origin, "/api/sync/appconfig?org=acme").header("ETag") == "\"\(second)\"" })
        let third = try package.addAppConfig("acme", json: acme.replacingOccurrences(of: "dark", with: "contrast"))
        #expect(try bodyBytes(get(origin, "/healthz")) == Array("ok\n".utf8))
        #expect(get(origin, "/api/sync/appconfig?org=acme").header("ETag") == "\"\(third)\"", "/healthz looks at once")
    }

    @Test func startupChecksThePackageFolder() throws {
        let folder = try TestFolder()
        let missing = folder.url.appendingPathComponent("no-such")
        #expect(throws: OriginError("package folder \(missing.path) does not exist")) {
            try Origin(configuration: OriginConfiguration(packageRoot: missing), accessLog: nil)
        }
        let empty = try TestPackage.publicPart()
        try FileManager.default.removeItem(at: empty.publicRoot.appendingPathComponent("index.json"))
        #expect(throws: OriginError.self) { try Origin(configuration: OriginConfiguration(packageRoot: empty.publicRoot), accessLog: nil) }
        let garbage = try TestPackage.publicPart()
        try Data("not json".utf8).write(to: garbage.publicRoot.appendingPathComponent("index.json"))
        #expect(throws: OriginError.self) { try Origin(configuration: OriginConfiguration(packageRoot: garbage.publicRoot), accessLog: nil) }
    }
}
