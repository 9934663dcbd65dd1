import Foundation
import PulseAnswerSignature
import PulseCore
import PulseCrypto
import PulseHTTPServer
import PulseServer

/// A signing server made in the test: forwards to pulse-server and signs its manifest and keys answers
/// (200, 304) with a key of its own, published at /api/sync/answer-keys, as docs/server.md says, except for
/// the one `Flaw` asked for. Independent of pulse-server's own signing, which it replaces.
public final class AnswerSigner: @unchecked Sendable {
    public enum Flaw: Sendable {
        case none
        /// The signature's last bytes changed.
        case wrongSignature
        /// The claims name another device.
        case anotherDevice
        /// Each answer signed with a lower seq than the one before.
        case rolledBackSequence
        /// Signed two hours ago, expired one hour ago.
        case expired
        /// Signatures on the answers, but no key set published.
        case noKeySet
        /// Nothing signed and no key set: a server that does not sign.
        case unsigned
    }

    public let key: P256.PrivateKey
    let flaw: Flaw
    let clock: @Sendable () -> Double
    let ttl: Int
    private let lock = NSLock()
    private var countdown = 1000
    private var sequence = 1

    /// - Parameters: clock: the server's (iat), ttl: exp − iat.
    public init(_ flaw: Flaw = .none, ttl: Int = 3600, clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) throws {
        key = try P256.PrivateKey()
        self.flaw = flaw
        self.clock = clock
        self.ttl = ttl
    }

    /// The seq signed into the answers from now on (never lower, unless the flaw says so).
    public func advance(to seq: Int) { lock.withLock { sequence = max(sequence, seq) } }

    /// `sync` wrapped.
    public func wrap(_ sync: any HTTPResponder) -> any HTTPResponder {
        Breaker(sync, intercept: { [self] request in
            guard Breaker.path(request) == "/api/sync/answer-keys" else { return nil }
            if flaw == .noKeySet || flaw == .unsigned { return Breaker.json(404, #"{"error":"notFound"}"#) }
            let body = AnswerKeySet.encode([AnswerKey(publicKey: key.publicKey, signsFrom: 0)])
            let claims = AnswerClaims(route: "/api/sync/answer-keys", query: "", device: "", status: 200, seq: 1, iat: now, exp: now + ttl)
            let header = (try? AnswerSignature.sign(body: body, claims: claims, key: key)) ?? ""
            return HTTPResponse(
                status: 200, headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader(AnswerSignature.headerName, header)], body: .bytes(body))
        }, alter: { [self] request, response in sign(request, response) })
    }

    var now: Int { Int(clock()) }

    private func sign(_ request: HTTPRequest, _ response: HTTPResponse) -> HTTPResponse {
        var changed = response
        changed.headers.removeAll { $0.name.lowercased() == AnswerSignature.headerName.lowercased() }
        let path = Breaker.path(request)
        let isManifest = path == "/api/sync/manifest" || (path.hasPrefix("/api/sync/series/") && path.hasSuffix("/manifest"))
        guard flaw != .unsigned, isManifest || path == "/api/sync/keys", response.status == 200 || response.status == 304 else { return changed }
        let body: [UInt8]
        switch response.body {
        case let .bytes(bytes): body = bytes
        case .empty: body = []
        default: return changed
        }
        let target = String(decoding: request.target, as: UTF8.self)
        let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? ""
        var device = request.headers["x-pulse-device"].map { String(decoding: $0.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self) } ?? ""
        if flaw == .anotherDevice { device = String(device.reversed()) }
        var iat = now
        if flaw == .expired { iat -= 7200 }
        let seq = flaw == .rolledBackSequence ? lock.withLock { countdown -= 1; return countdown } : lock.withLock { sequence }
        var claims = AnswerClaims(route: path, query: query, device: device, status: response.status, seq: seq, iat: iat, exp: iat + ttl)
        if isManifest {
            claims.packageVersion = response.headers.first { $0.name.lowercased() == "etag" }.map { String($0.value.dropFirst().dropLast()) }
        } else {
            claims.deckVersion = (try? JSONValue.parse(body))?["deckVersion"]?.intValue
        }
        guard var header = try? AnswerSignature.sign(body: body, claims: claims, key: key) else { return changed }
        if flaw == .wrongSignature {
            header = String(header.dropLast(4)) + (header.hasSuffix("AAAA") ? "BBBB" : "AAAA")
        }
        changed.headers.append(HTTPHeader(AnswerSignature.headerName, header))
        return changed
    }
}
