import Foundation
import PulseAnswerSignature
import PulseCore
import PulseDevice

extension ConformanceRun {
    /// Signed answers (docs/server.md, "Signed answers"): the published key set, the signature and its
    /// binding on every device-scoped answer, the sequence, the expiry. Checked with pulse-device's own
    /// `AnswerCheck`, so the suite and the reference client agree on every rule. Each rule is a SKIP against a
    /// server that does not sign (no key set and no `Pulse-Signature`), a FAIL when a signature is there but wrong.
    func answerRules() {
        rule("answer.keys") { evidence in
            _ = try answerKeys(evidence)
        }

        rule("answer.signature") { evidence in
            let keys = try answerKeys(evidence)
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            let manifest = "/api/sync/manifest?session=\(session)"
            let first = try signedAnswer(manifest, by: device, keys: keys, evidence)
            let etag = try need(first.response.header("etag"), "an ETag on the session manifest")
            _ = try signedAnswer(manifest, by: device, headers: [("If-None-Match", etag)], status: 304, keys: keys, evidence)
            _ = try signedAnswer("/api/sync/keys?session=\(session)", by: device, keys: keys, evidence)
            if let seriesDevice = seriesDevices.first, seriesDevice.scopeKind == "series" {
                _ = try signedAnswer("/api/sync/series/\(seriesDevice.scopeId)/manifest", by: seriesDevice, keys: keys, evidence)
            } else {
                evidence.add("no series device: the series manifest was not checked")
            }
            let refused = try signed("GET", "/api/sync/manifest?session=pulse-conformance-no-such-session", by: device)
            evidence.add("an unknown session → \(refused.summary)")
            try expect(refused.header(AnswerSignature.headerName) == nil, "an error answer (\(refused.status)) carries a Pulse-Signature")
        }

        rule("answer.sequence") { evidence in
            let keys = try answerKeys(evidence)
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            for target in ["/api/sync/manifest?session=\(session)", "/api/sync/keys?session=\(session)"] {
                let first = try signedAnswer(target, by: device, keys: keys, evidence)
                let second = try signedAnswer(target, by: device, keys: keys, after: first.state, evidence)
                evidence.add("GET \(target) twice: seq \(first.claims.seq), then \(second.claims.seq)")
            }
        }

        rule("answer.expiry") { evidence in
            let keys = try answerKeys(evidence)
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            let now = Int(serverNow)
            let state = AnswerState(signs: true, verifiedTime: now - 5)
            let answer = try signedAnswer("/api/sync/manifest?session=\(session)", by: device, keys: keys, after: state, evidence)
            let ttl = answer.claims.exp - answer.claims.iat
            evidence.add("iat \(answer.claims.iat - now) s from the server's clock, exp − iat = \(ttl) s")
            try expect((60...86_400).contains(ttl), "the answer's lifetime exp − iat is \(ttl) s, outside 60…86400")
            try expect(answer.claims.iat <= now + 5, "iat is \(answer.claims.iat - now) s ahead of the server's clock")
        }
    }

    /// The server's answer keys, checked: `GET /api/sync/answer-keys` answers a key set whose own
    /// `Pulse-Signature` (route `/api/sync/answer-keys`, device "") verifies with one of its keys.
    /// - Throws: `Skip` when the server does not sign at all; `Broken` when it half signs or the set is wrong.
    func answerKeys(_ evidence: Evidence) throws -> [AnswerKey] {
        let answer = try send("GET", AnswerCheck.keySetRoute)
        evidence.add("GET \(AnswerCheck.keySetRoute) → \(answer.summary)")
        if answer.status == 404 {
            var signedManifest = false
            if let device, let session {
                let manifest = try signed("GET", "/api/sync/manifest?session=\(session)", by: device)
                signedManifest = manifest.header(AnswerSignature.headerName) != nil
            }
            try expect(!signedManifest, "the session manifest carries a Pulse-Signature, but the server publishes no answer keys")
            throw Skip("the server does not sign its answers (no \(AnswerCheck.keySetRoute), no Pulse-Signature on the session manifest)")
        }
        try expect(answer.status == 200, "the answer keys are not public (\(answer.status))")
        let state: AnswerState
        do { state = try AnswerCheck.trustKeySet(body: answer.body, header: answer.header(AnswerSignature.headerName), state: AnswerState()) } catch {
            throw Broken("\(error)")
        }
        let keys = try AnswerCheck.trustedKeys(state)
        evidence.add("\(keys.count) answer key\(keys.count == 1 ? "" : "s") (\(keys.map { String($0.kid.prefix(8)) + "…" }.joined(separator: ", "))), generation \(state.keySetSeq), the set signed by one of them")
        return keys
    }

    /// `GET target` signed by `device`, its answer (of `status`) checked by `AnswerCheck` against `state`
    /// with `keys`: the claims and the state after it.
    func signedAnswer(
        _ target: String, by device: ConformanceDevice, headers: [(name: String, value: String)] = [], status: Int = 200,
        keys: [AnswerKey], after state: AnswerState = AnswerState(signs: true), _ evidence: Evidence
    ) throws -> (response: WireResponse, claims: AnswerClaims, state: AnswerState) {
        let response = try signed("GET", target, by: device, headers: headers)
        let header = response.header(AnswerSignature.headerName)
        evidence.add("GET \(target)\(headers.isEmpty ? "" : " (If-None-Match)") → \(response.summary), \(header == nil ? "no Pulse-Signature" : "signed")")
        try expect(response.status == status, "GET \(target) answered \(response.status), not \(status)")
        let parts = target.split(separator: "?", maxSplits: 1)
        let sentETag = headers.first { $0.name == "If-None-Match" }?.value
        let answer = ReceivedAnswer(
            route: String(parts[0]), query: parts.count > 1 ? String(parts[1]) : "", device: device.id, status: response.status,
            body: response.body, signature: header, etag: response.header("etag") ?? sentETag)
        let next: AnswerState
        do { next = try AnswerCheck.check(answer, state: state, keys: keys) } catch { throw Broken("\(error)") }
        guard let header, let claims = try? AnswerSignature.verify(header: header, body: response.body, keys: keys) else {
            throw Broken("GET \(target): no verifiable Pulse-Signature")
        }
        return (response, claims, next)
    }
}
