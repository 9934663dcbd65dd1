import Foundation
import PulseConformance
import PulseCore
import PulseCrypto
import PulseHTTPServer
import PulseServer
import PulseServerStorage
import PulseSyncAPI
import SyncTestSupport
import Testing

/// Servers that break one rule each: the real responder in process, wrapped by a `Breaker` (or configured)
/// to change one thing. The suite must fail, naming that rule.
@Suite struct BrokenServerTests {
    struct Variant: CustomTestStringConvertible, Sendable {
        let name: String
        let rule: String
        let configure: @Sendable (inout SyncConfiguration) -> Void
        let wrap: @Sendable (SyncServer, any ServerStorage) -> any HTTPResponder
        var testDescription: String { "\(name) → \(rule)" }

        init(
            _ name: String, _ rule: String, configure: @escaping @Sendable (inout SyncConfiguration) -> Void = { _ in },
            wrap: @escaping @Sendable (SyncServer, any ServerStorage) -> any HTTPResponder = { sync, _ in sync }
        ) {
            self.name = name
            self.rule = rule
            self.configure = configure
            self.wrap = wrap
        }
    }

    static let variants: [Variant] = [
        Variant("a 404 that differs by a header for an unknown device", "sign.flat-404", wrap: { sync, _ in
            Breaker(sync, alter: { _, response in
                response.note == "no:unknown-device" ? Breaker.setting("X-Reason", "unknown device", in: response) : response
            })
        }),
        Variant("a stale check that reveals whether the device exists", "sign.stale-uniform", wrap: { sync, storage in
            Breaker(sync, alter: { request, response in
                guard response.note == "stale", let id = Self.deviceId(request), (try? storage.device(id: id)) == nil else { return response }
                return Breaker.json(404, #"{"error":"notFound"}"#)
            })
        }),
        Variant("keys released in draft", "keys.gated-before-live", wrap: { sync, storage in
            Breaker(sync, alter: { request, response in
                Self.keys(request, response, storage) { session, _ in session.state == .draft ? Array(0..<session.slideCount) : nil }
            })
        }),
        Variant("one key beyond the live frontier", "keys.live-frontier", wrap: { sync, storage in
            Breaker(sync, alter: { request, response in
                Self.keys(request, response, storage) { session, released in
                    session.state == .live && !released.isEmpty && released.count < session.slideCount ? released + [released.count] : nil
                }
            })
        }),
        Variant("the whole deck after the end without download permission", "keys.ended", wrap: { sync, storage in
            Breaker(sync, alter: { request, response in
                Self.keys(request, response, storage) { session, _ in
                    session.state == .ended && !session.allowDownload ? Array(0..<session.slideCount) : nil
                }
            })
        }),
        Variant("a venue rule that trusts anyone's X-Forwarded-For", "keys.venue-lock",
            configure: { $0.trustedProxies = [try! IPNetwork(parsing: "127.0.0.0/8")] },
            wrap: { sync, _ in
                Breaker(sync, rewrite: { request in
                    var changed = request
                    changed.headers.add("x-forwarded-for", Array("192.0.2.7".utf8))
                    return changed
                })
            }),
        Variant("an ETag that ignores If-None-Match", "manifest.not-modified", wrap: { sync, _ in
            Breaker(sync, rewrite: { request in
                var changed = request
                var headers = HTTPRequestHeaders()
                for name in SyncServer.requestHeaders where name != "if-none-match" {
                    for value in request.headers.values(name) { headers.add(name, value) }
                }
                changed.headers = headers
                return changed
            })
        }),
        Variant("a device rate limit that never triggers", "sign.rate-limit", configure: { $0.deviceLimit = RateLimit(rate: 1e6, burst: 1e6) }),
        Variant("an enrollment rate limit that never triggers", "enroll.rate-limit", configure: { $0.enrollLimit = RateLimit(rate: 1e6, burst: 1e6) }),
        Variant("a replayed signed POST accepted", "diag.replay", wrap: { sync, _ in
            Breaker(sync, alter: { _, response in
                response.note == "no:replay" ? HTTPResponse(status: 204, headers: [HTTPHeader("Cache-Control", "no-store")]) : response
            })
        }),
        Variant("a signature window of an hour", "sign.window", configure: { $0.signatureWindow = 3600 }),
        Variant("ts re-formatted before it is checked (01… read as 1…)", "sign.ts-exact", wrap: { sync, _ in
            Breaker(sync, rewrite: { request in
                guard let header = request.headers["x-pulse-device"].map({ String(decoding: $0, as: UTF8.self) }),
                      let start = header.range(of: ";ts="), let end = header.range(of: ";sig=") else { return request }
                let digits = header[start.upperBound..<end.lowerBound].drop { $0 == "0" || $0 == "+" }
                var changed = request
                var headers = HTTPRequestHeaders()
                for name in SyncServer.requestHeaders where name != "x-pulse-device" {
                    for value in request.headers.values(name) { headers.add(name, value) }
                }
                let text = header[..<start.upperBound] + (digits.isEmpty ? "0" : digits) + header[end.lowerBound...]
                headers.add("x-pulse-device", Array(text.utf8))
                changed.headers = headers
                return changed
            })
        }),
        Variant("DER signatures accepted", "sign.p1363", wrap: { sync, _ in
            Breaker(sync, rewrite: { request in Self.derToP1363(request) })
        }),
        Variant("a bad public key answered 404", "enroll.bad-key", wrap: { sync, _ in
            Breaker(sync, alter: { _, response in response.note == "enroll:bad-key" ? Breaker.json(404, #"{"error":"notFound"}"#) : response })
        }),
        Variant("a used device code enrolling again", "enroll.code-single-use", wrap: { sync, _ in
            let first = Remembered()
            return Breaker(sync, intercept: { request in
                guard Breaker.path(request) == "/api/sync/enroll", let token = Self.token(request) else { return nil }
                return first.answer(for: token)
            }, alter: { request, response in
                if response.status == 200, let token = Self.token(request) { first.keep(response, for: token) }
                return response
            })
        }),
        Variant("a registration token good for one device", "enroll.token-durable", wrap: { sync, _ in
            let used = Remembered()
            return Breaker(sync, intercept: { request in
                guard Breaker.path(request) == "/api/sync/enroll", let token = Self.token(request), token.count == 43, used.answer(for: token) != nil else { return nil }
                return Breaker.json(404, #"{"error":"notFound"}"#)
            }, alter: { request, response in
                if response.status == 200, let token = Self.token(request) { used.keep(response, for: token) }
                return response
            })
        }),
        Variant("a certificate the published key does not verify", "enroll.certificate", wrap: { sync, _ in
            let other = try! P256.PrivateKey()
            return Breaker(sync, alter: { request, response in
                guard Breaker.path(request) == "/api/sync/device-cert-keys", case let .bytes(bytes) = response.body,
                      let kid = (try? JSONValue.parse(bytes))?["keys"]?.arrayValue?.first?["kid"]?.stringValue
                else { return response }
                return Breaker.json(200, "{\"keys\":[\(other.publicKey.jwk(kid: kid))]}")
            })
        }),
        Variant("release times in the manifest", "manifest.content", wrap: { sync, _ in
            Breaker(sync, alter: { request, response in
                guard Breaker.path(request) == "/api/sync/manifest", response.status == 200, case let .bytes(bytes) = response.body,
                      case var .object(fields)? = try? JSONValue.parse(bytes), var resources = fields["resources"]?.arrayValue, case var .object(first)? = resources.first
                else { return response }
                first["releaseAt"] = "2026-12-03T10:00:00Z"
                resources[0] = .object(first)
                fields["resources"] = .array(resources)
                var changed = response
                changed.body = .bytes(JSONValue.object(fields).canonicalBytes)
                return changed
            })
        }),
        Variant("a series ref at an old packageVersion", "series.manifest", wrap: { sync, _ in
            Breaker(sync, alter: { request, response in
                guard Breaker.path(request).hasPrefix("/api/sync/series/"), response.status == 200, case let .bytes(bytes) = response.body,
                      case var .object(fields)? = try? JSONValue.parse(bytes), var refs = fields["sessions"]?.arrayValue, case var .object(ref)? = refs.first
                else { return response }
                ref["packageVersion"] = .string(String(repeating: "0", count: 64))
                refs[0] = .object(ref)
                fields["sessions"] = .array(refs)
                var changed = response
                changed.body = .bytes(JSONValue.object(fields).canonicalBytes)
                return changed
            })
        }),
        Variant("assets a CDN may not keep", "asset.immutable", wrap: { sync, _ in
            Breaker(sync, alter: { request, response in
                Breaker.path(request).hasPrefix("/api/sync/asset/") && response.status == 200 ? Breaker.setting("Cache-Control", "no-cache", in: response) : response
            })
        }),
        Variant("an asset whose bytes are not its name", "asset.content-addressed", wrap: { sync, _ in
            Breaker(sync, alter: { request, response in
                guard Breaker.path(request).hasPrefix("/api/sync/asset/"), response.status == 200 else { return response }
                var changed = response
                changed.body = .bytes(Array("not the blob".utf8))
                return changed
            })
        }),
        Variant("an app config behind a login", "appconfig.public", wrap: { sync, _ in
            Breaker(sync, intercept: { request in
                Breaker.path(request) == "/api/sync/appconfig" && request.headers["authorization"] == nil ? Breaker.json(401, #"{"error":"unauthorized"}"#) : nil
            })
        }),
        Variant("the time only for signed requests", "time.display", wrap: { sync, _ in
            Breaker(sync, intercept: { request in
                Breaker.path(request) == "/api/sync/time" && request.headers["x-pulse-device"] == nil ? Breaker.json(404, #"{"error":"notFound"}"#) : nil
            })
        }),
        Variant("an unsigned diag sample accepted", "diag.sample", wrap: { sync, _ in
            Breaker(sync, intercept: { request in
                Breaker.path(request).hasSuffix("/diag") && request.headers["x-pulse-device"] == nil ? HTTPResponse(status: 204) : nil
            })
        }),
        Variant("an event stream that never says anything", "events.advance", wrap: { sync, _ in
            Breaker(sync, intercept: { request in
                guard Breaker.path(request) == "/api/sync/events" else { return nil }
                return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "text/event-stream")], body: .stream(HTTPEventStream()))
            })
        }),
    ]

    @Test(arguments: variants)
    func theSuiteFailsNamingTheRule(_ variant: Variant) throws {
        let harness = try ConformanceHarness(variant.name, configure: variant.configure, wrap: variant.wrap)
        let results = try harness.run(only: [variant.rule])
        #expect(results.verdict(variant.rule) == .fail, "\(results.report)")
        print("broken server: \(variant.name) → \(variant.rule): \(results.first { $0.rule.id == variant.rule }?.evidence.last ?? "")")
    }

    /// The whole suite against one broken server: that rule fails, every other passes.
    @Test func onlyTheBrokenRuleFails() throws {
        let variant = Self.variants[0]
        let harness = try ConformanceHarness(configure: variant.configure, wrap: variant.wrap)
        let results = try harness.run()
        #expect(results.failed == [variant.rule] && results.skipped.isEmpty, "\(results.report)")
        let evidence = results.first { $0.rule.id == variant.rule }?.evidence.joined(separator: "\n") ?? ""
        #expect(evidence.contains("x-reason") || evidence.contains("X-Reason"), "the evidence names the header: \(evidence)")
    }

    // MARK: Helpers of the breakers

    static func deviceId(_ request: HTTPRequest) -> String? {
        request.headers["x-pulse-device"].map { String(decoding: $0.prefix(32), as: UTF8.self) }
    }

    static func token(_ request: HTTPRequest) -> String? {
        request.body.flatMap { try? JSONValue.parse($0) }?["token"]?.stringValue
    }

    /// The keys answer with the slides `release` picks (nil: unchanged), keys from the stored table.
    static func keys(
        _ request: HTTPRequest, _ response: HTTPResponse, _ storage: any ServerStorage, release: (SessionRecord, [Int]) -> [Int]?
    ) -> HTTPResponse {
        guard Breaker.path(request) == "/api/sync/keys", response.status == 200, case let .bytes(bytes) = response.body,
              let query = String(decoding: request.target, as: UTF8.self).split(separator: "=").last,
              let session = try? storage.session(id: String(query)), let table = try? storage.keyTable(sessionId: session.id, deckVersion: session.deckVersion),
              let released = (try? JSONValue.parse(bytes))?["released"]?.arrayValue?.compactMap({ $0["n"]?.intValue }),
              let slides = release(session, released)
        else { return response }
        let entries: [JSONValue] = slides.map { n in
            ["n": .int(n), "keyB64": .string(table.slides[n].keyB64), "nonceB64": .string(table.slides[n].nonceB64)]
        }
        var changed = response
        changed.body = .bytes(JSONValue.object(["deckVersion": .int(session.deckVersion), "released": .array(entries)]).canonicalBytes)
        return changed
    }

    /// A request whose `sig=` is DER, rewritten to P1363 before the real server sees it.
    static func derToP1363(_ request: HTTPRequest) -> HTTPRequest {
        guard let header = request.headers["x-pulse-device"].map({ String(decoding: $0, as: UTF8.self) }),
              let range = header.range(of: ";sig="), let der = Base64URL.decode(header[range.upperBound...]), der.first == 0x30, der.count > 8
        else { return request }
        var index = 2
        func integer() -> [UInt8] {
            let length = Int(der[index + 1])
            let value = Array(der[(index + 2)..<(index + 2 + length)].drop { $0 == 0 })
            index += 2 + length
            return [UInt8](repeating: 0, count: 32 - value.count) + value
        }
        let p1363 = integer() + integer()
        var changed = request
        var headers = HTTPRequestHeaders()
        for name in SyncServer.requestHeaders {
            for value in request.headers.values(name) {
                headers.add(name, name == "x-pulse-device" ? Array((header[..<range.upperBound] + Base64URL.encode(p1363)).utf8) : value)
            }
        }
        changed.headers = headers
        return changed
    }
}

/// Answers remembered by token (a breaker's memory).
final class Remembered: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [String: HTTPResponse] = [:]
    func keep(_ response: HTTPResponse, for token: String) { lock.withLock { if answers[token] == nil { answers[token] = response } } }
    func answer(for token: String) -> HTTPResponse? { lock.withLock { answers[token] } }
}
