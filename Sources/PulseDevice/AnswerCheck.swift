import PulseAnswerSignature
import PulseCore

/// One answer as the device received it, with the request it answers.
public struct ReceivedAnswer: Sendable {
    /// The request path without the base URL's prefix, e.g. "/api/sync/keys".
    public var route: String
    /// The raw query string as sent, "" when none.
    public var query: String
    /// The device id that signed the request ("" for the public key set).
    public var device: String
    public var status: Int
    public var body: [UInt8]
    /// The `Pulse-Signature` header, nil when there was none.
    public var signature: String?
    /// The answer's ETag (for a 304 without one: the If-None-Match sent), quoted as on the wire.
    public var etag: String?

    public init(route: String, query: String, device: String, status: Int, body: [UInt8], signature: String?, etag: String? = nil) {
        self.route = route
        self.query = query
        self.device = device
        self.status = status
        self.body = body
        self.signature = signature
        self.etag = etag
    }

    /// `route?query`, as a person reads it.
    public var target: String { AnswerState.key(route: route, query: query) }

    var isManifest: Bool { route == "/api/sync/manifest" || (route.hasPrefix("/api/sync/series/") && route.hasSuffix("/manifest")) }
    var isKeys: Bool { route == "/api/sync/keys" }
}

/// The rule an answer broke (docs/device.md, "Signed answers").
public enum AnswerRule: String, Sendable, CaseIterable {
    /// The signature is missing, malformed, or does not verify with a trusted key.
    case signature
    /// The signature is for another request (route, query, device, status) or another version than the body's.
    case binding
    /// The answer is older than one already accepted for the same request.
    case rollback
    /// The answer expired before the latest server time the device has verified (a signed `iat`).
    case freeze
}

/// Why the device refused an answer: the rule, and one line saying what exactly.
public struct AnswerRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    public let rule: AnswerRule
    public let target: String
    public let reason: String
    /// The key id of a well-formed signature by a key the device does not trust yet: refetch the key set.
    public let unknownKey: String?

    init(_ rule: AnswerRule, _ target: String, _ reason: String, unknownKey: String? = nil) {
        self.rule = rule
        self.target = target
        self.reason = reason
        self.unknownKey = unknownKey
    }

    public var description: String { "refused GET \(target) (rule \(rule.rawValue)): \(reason)" }

    /// As the module's one error type (`integrity`: the answer was not kept).
    public var deviceError: DeviceError { DeviceError(.integrity, description + "; the previous cache stays in use") }
}

/// The checks of a signed answer: a pure function of the answer, the state and the trusted keys, so each
/// rule is tested alone. Never reads the device's clock, nor `GET /api/sync/time`: time comes only from the
/// state's `verifiedTime`, the highest `iat` of a signed answer accepted.
public enum AnswerCheck {
    public static let keySetRoute = "/api/sync/answer-keys"

    /// The state after accepting `answer`, or the refusal naming the rule it breaks.
    ///
    /// An answer without a signature is accepted unchanged only while the server is not known to sign
    /// (`state.signs != true`); a signature is verified whenever there is one (an unknown key makes the
    /// refusal carry `unknownKey`, for the caller to refetch the key set and check again).
    public static func check(_ answer: ReceivedAnswer, state: AnswerState, keys: [AnswerKey]) throws(AnswerRefusal) -> AnswerState {
        let target = answer.target
        guard let header = answer.signature else {
            if state.signs == true { throw AnswerRefusal(.signature, target, "no Pulse-Signature from a server that signs its answers") }
            return state
        }
        let claims = try verify(header, answer.body, keys: keys, target: target)
        try bind(claims, to: answer)
        let key = AnswerState.key(route: answer.route, query: answer.query)
        let previous = state.answers[key]
        if let previous {
            if claims.seq < previous.seq {
                throw AnswerRefusal(.rollback, target, "seq \(claims.seq) is lower than \(previous.seq) already accepted")
            }
            if let deck = claims.deckVersion, let accepted = previous.deckVersion, deck < accepted {
                throw AnswerRefusal(.rollback, target, "deckVersion \(deck) is lower than \(accepted) already accepted")
            }
            if claims.seq == previous.seq, let version = claims.packageVersion, let accepted = previous.packageVersion, version != accepted,
               claims.iat <= (previous.iat ?? Int.max) {
                throw AnswerRefusal(.rollback, target, "seq \(claims.seq) was accepted with another packageVersion signed no earlier than this one")
            }
        }
        try unfrozen(claims, state: state, target: target)
        var next = state
        next.answers[key] = AnswerState.Accepted(
            seq: claims.seq, packageVersion: claims.packageVersion ?? previous?.packageVersion,
            deckVersion: [claims.deckVersion, previous?.deckVersion].compactMap { $0 }.max(),
            iat: max(claims.iat, previous?.iat ?? claims.iat))
        next.verified(iat: claims.iat)
        return next
    }

    /// The state after trusting the key set `body` (`GET /api/sync/answer-keys`, signed by `header`).
    ///
    /// While no key is trusted (trust on first use, at enrollment) the set must verify with one of its own
    /// keys; after that, with a key the device already trusts, and its `seq` (the key-set generation) must
    /// not go back. Once trusted, the server is known to sign: unsigned answers are refused from then on.
    public static func trustKeySet(body: [UInt8], header: String?, state: AnswerState) throws(AnswerRefusal) -> AnswerState {
        let target = keySetRoute
        let offered: [AnswerKey]
        do { offered = try AnswerKeySet.parse(body) } catch { throw AnswerRefusal(.signature, target, "\(error)") }
        guard !offered.isEmpty else { throw AnswerRefusal(.signature, target, "the key set holds no key") }
        guard let header else { throw AnswerRefusal(.signature, target, "the key set carries no Pulse-Signature") }
        let trusted = try trustedKeys(state)
        let firstUse = trusted.isEmpty
        let verified = Result { () throws(AnswerRefusal) in try verify(header, body, keys: firstUse ? offered : trusted, target: target) }
        if case let .failure(error) = verified, let kid = error.unknownKey {
            throw AnswerRefusal(.signature, target, firstUse
                ? "the key set is not signed by a key it holds"
                : "the new key set is signed by key \(kid) which this device does not trust yet: enroll it again")
        }
        let claims = try verified.get()
        try bind(claims, to: ReceivedAnswer(route: target, query: "", device: "", status: 200, body: body, signature: header))
        if claims.seq < state.keySetSeq {
            throw AnswerRefusal(.rollback, target, "key set generation \(claims.seq) is lower than \(state.keySetSeq) already trusted")
        }
        try unfrozen(claims, state: state, target: target)
        var next = state
        next.signs = true
        next.keySet = (try? JSONValue.parse(body)) ?? next.keySet
        next.keySetSeq = claims.seq
        next.verified(iat: claims.iat)
        return next
    }

    /// The keys `state` trusts.
    public static func trustedKeys(_ state: AnswerState) throws(AnswerRefusal) -> [AnswerKey] {
        guard let keySet = state.keySet else { return [] }
        do { return try AnswerKeySet.parse(keySet.canonicalBytes) } catch {
            throw AnswerRefusal(.signature, keySetRoute, "the trusted key set in answers.json does not parse: \(error)")
        }
    }

    private static func verify(_ header: String, _ body: [UInt8], keys: [AnswerKey], target: String) throws(AnswerRefusal) -> AnswerClaims {
        do throws(AnswerSignatureError) { return try AnswerSignature.verify(header: header, body: body, keys: keys) } catch {
            if case let .unknownKey(kid) = error { throw AnswerRefusal(.signature, target, "\(error)", unknownKey: kid) }
            throw AnswerRefusal(.signature, target, "\(error)")
        }
    }

    private static func bind(_ claims: AnswerClaims, to answer: ReceivedAnswer) throws(AnswerRefusal) {
        let target = answer.target
        func refuse(_ what: String) -> AnswerRefusal { AnswerRefusal(.binding, target, what) }
        guard claims.route == answer.route else { throw refuse("signed for route \(claims.route.debugDescription)") }
        guard claims.query == answer.query else { throw refuse("signed for query \(claims.query.debugDescription)") }
        guard claims.device == answer.device else { throw refuse("signed for another device") }
        guard claims.status == answer.status else { throw refuse("signed for status \(claims.status), the answer is \(answer.status)") }
        let body = answer.status == 200 ? try? JSONValue.parse(answer.body) : nil
        if answer.isManifest {
            guard let version = claims.packageVersion else { throw refuse("the signature names no packageVersion") }
            if answer.status == 200, body?["packageVersion"]?.stringValue != version {
                throw refuse("signed for packageVersion \(version.debugDescription), the body is another")
            }
            if let etag = answer.etag, unquoted(etag) != version {
                throw refuse("signed for packageVersion \(version.debugDescription), the ETag is \(etag.debugDescription)")
            }
        }
        if answer.isKeys {
            guard let deck = claims.deckVersion else { throw refuse("the signature names no deckVersion") }
            if answer.status == 200, body?["deckVersion"]?.intValue != deck {
                throw refuse("signed for deckVersion \(deck), the body is another")
            }
        }
    }

    private static func unfrozen(_ claims: AnswerClaims, state: AnswerState, target: String) throws(AnswerRefusal) {
        guard claims.exp >= state.verifiedTime else {
            throw AnswerRefusal(.freeze, target,
                "expired at server time \(claims.exp), before \(state.verifiedTime), the latest server time this device has verified (a signed iat)")
        }
    }

    /// An ETag without its quotes (and weak prefix).
    static func unquoted(_ etag: String) -> String {
        var text = Substring(etag)
        if text.hasPrefix("W/") { text = text.dropFirst(2) }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = text.dropFirst().dropLast() }
        return String(text)
    }
}
