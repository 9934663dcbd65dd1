import Foundation
import Glibc
import PulseHTTPServer
import PulseTestSupport
import Testing
@testable import PulseOrigin

/// Issue 10 item 9: index.json deleted or unusable while serving.
@Suite struct IndexTroubleTests {
    @Test func deletedIndexKeepsTheLastGoodOne() throws {
        let package = try TestPackage.publicPart()
        let version = try package.addAppConfig("acme", json: #"{"org":"acme"}"#)
        let alarms = AlarmLog()
        let origin = try package.origin({ $0.recheckSeconds = 0 }, alarms: alarms)
        #expect(get(origin, "/api/sync/appconfig?org=acme").status == 200)
        try FileManager.default.removeItem(at: package.publicRoot.appendingPathComponent("index.json"))
        for _ in 0..<10 {
            let response = get(origin, "/api/sync/appconfig?org=acme")
            #expect(response.status == 200)
            #expect(response.header("ETag") == "\"\(version)\"")
        }
        #expect(alarms.all.count == 1)
        #expect(alarms.all.first?.contains("index.json unusable") == true)
        #expect(alarms.all.first?.contains("keeping the last good index (1 app configs)") == true)
        let health = get(origin, "/healthz")
        #expect(health.status == 200)
        #expect(String(decoding: try bodyBytes(health), as: UTF8.self).hasPrefix("degraded: "))
        #expect(alarms.all.count == 1)
        // Back: used again, said once, and /healthz is plain ok.
        try package.writeIndex()
        #expect(get(origin, "/api/sync/appconfig?org=acme").status == 200)
        #expect(alarms.all.count == 2)
        #expect(alarms.all.last == "index.json usable again: 1 app configs")
        #expect(try bodyBytes(get(origin, "/healthz")) == Array("ok\n".utf8))
    }

    @Test func invalidIndexIsReportedOncePerVersion() throws {
        let package = try TestPackage.publicPart()
        try package.addAppConfig("acme", json: #"{"org":"acme"}"#)
        let alarms = AlarmLog()
        let origin = try package.origin({ $0.recheckSeconds = 0 }, alarms: alarms)
        try package.replaceIndex(with: "not json")
        for _ in 0..<20 { #expect(get(origin, "/api/sync/appconfig?org=acme").status == 200) }
        #expect(get(origin, "/api/sync/appconfig?org=globex").status == 404)
        #expect(alarms.all.count == 1)
        #expect(alarms.all.first?.contains("index.json:1:1:") == true, "\(alarms.all)")
        // Another broken version is news; the same one again is not.
        try package.replaceIndex(with: #"{"format":"something-else/9"}"#)
        for _ in 0..<5 { #expect(get(origin, "/api/sync/appconfig?org=acme").status == 200) }
        #expect(alarms.all.count == 2)
        let reload = origin.reloadIndex()
        #expect(reload.hasPrefix("index.json unusable ("))
        #expect(alarms.all.count == 2)
    }

    @Test func reloadReadsTheIndexAgain() throws {
        let package = try TestPackage.publicPart()
        try package.addAppConfig("acme", json: #"{"org":"acme"}"#)
        let origin = try package.origin()
        try package.addAppConfig("globex", json: #"{"org":"globex"}"#)
        #expect(origin.reloadIndex() == "index.json read: 2 app configs")
        #expect(get(origin, "/api/sync/appconfig?org=globex").status == 200)
    }
}

extension TestPackage {
    /// Replaces index.json with `text` (atomically, as a build would).
    func replaceIndex(with text: String) throws {
        let temp = publicRoot.appendingPathComponent(".tmp-index-\(UUID().uuidString)")
        try Data(text.utf8).write(to: temp)
        guard Glibc.rename(temp.path, publicRoot.appendingPathComponent("index.json").path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
}
