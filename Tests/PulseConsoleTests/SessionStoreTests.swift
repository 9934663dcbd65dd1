import Foundation
import PulseServerStorage
import PulseSystem
import SyncTestSupport
import Testing
@testable import PulseConsole

@Suite struct SessionStoreTests {
    @Test func aSessionEndsWhenIdleAndAtItsAbsoluteExpiry() throws {
        let sessions = ConsoleSessions(idleSeconds: 60, maxAgeSeconds: 300, capacity: 10)
        let (id, csrf) = try sessions.create(tokenHash: [1, 2, 3], now: 1000)
        #expect(csrf.utf8.count == 43 && id != csrf)
        #expect(sessions.resolve(id, now: 1059)?.tokenHash == [1, 2, 3])
        #expect(sessions.resolve(id, now: 1118) != nil, "each request starts the idle time over")
        #expect(sessions.resolve(id, now: 1179) == nil, "61 s idle")
        let (other, _) = try sessions.create(tokenHash: [4], now: 2000)
        for step in 1...5 { #expect(sessions.resolve(other, now: 2000 + Double(step) * 50) != nil) }
        #expect(sessions.resolve(other, now: 2300) == nil, "absolute expiry, however active")
        #expect(sessions.resolve("x", now: 2000) == nil)
    }

    @Test func theOldestSessionGoesBeyondCapacity() throws {
        let sessions = ConsoleSessions(idleSeconds: 600, maxAgeSeconds: 6000, capacity: 2)
        let first = try sessions.create(tokenHash: [1], now: 0).id
        let second = try sessions.create(tokenHash: [2], now: 1).id
        _ = try sessions.create(tokenHash: [3], now: 2)
        #expect(sessions.count == 2)
        #expect(sessions.resolve(first, now: 3) == nil)
        #expect(sessions.resolve(second, now: 3) != nil)
    }

    @Test func formBodiesAreParsedWithinBoundsAndNeverTrap() {
        #expect(FormFields(body: Array("a=1&b=x%20y+z&a=2".utf8))?["a"] == "1")
        #expect(FormFields(body: Array("a=1&b=x%20y+z".utf8))?["b"] == "x y z")
        #expect(FormFields(body: Array("a=%".utf8)) == nil)
        #expect(FormFields(body: Array("a=%4".utf8)) == nil)
        #expect(FormFields(body: Array("a=%zz".utf8)) == nil)
        #expect(FormFields(body: Array("a=%ff".utf8)) == nil, "not UTF-8")
        #expect(FormFields(body: Array(repeating: UInt8(ascii: "x"), count: 5000).prefix(2) + Array("=".utf8) + Array(repeating: 0x41, count: 5000)) == nil)
        #expect(FormFields(body: Array((0..<65).map { "f\($0)=1" }.joined(separator: "&").utf8)) == nil)
        #expect(FormFields(body: nil)?["a"] == nil)
        #expect(FormFields(body: Array("csrf".utf8))?["csrf"] == "")
    }

    /// Revoking the token ends its open console streams too, the clicker's and the live view's.
    @Test(arguments: [("/console/sessions/keynote/events", "event: clicker"), ("/console/sessions/keynote/live/events?since=0", "event: devices")])
    func aRevokedTokensStreamEnds(path: String, first: String) throws {
        let harness = try ConsoleHarness()
        let minted = try harness.server.administration.createStaffToken()
        let cookie = try #require(try harness.signIn(minted.text).cookie)
        let connection = try harness.client()
        try connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: pulse_console=\(cookie)\r\n\r\n")
        #expect(try connection.readHead().status == 200)
        var text = ""
        func read(until needle: String) -> Bool {
            while !text.contains(needle) {
                guard let chunk = try? connection.readChunk() else { return false }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return true
        }
        #expect(read(until: first))
        _ = try harness.server.administration.revokeToken(minted.listingId)
        #expect(read(until: #"event: ended\#ndata: {"reason":"signedOut"}"#), "\(text)")
    }
}
