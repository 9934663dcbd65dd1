import Foundation
import PulseCore
import PulseCrypto

extension ConformanceRun {
    /// §2: the canonical string, P1363, the ±300 s window, a stale answer that says nothing about the
    /// device, one flat 404 for every "no".
    func signatureRules() {
        rule("sign.canonical") { evidence in
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            let target = "/api/sync/keys?session=\(session)"
            let wireTarget = wire.prefix + target
            let good = try signed("GET", target, by: device)
            evidence.add("GET \(target), signed over its canonical string → \(good.status)")
            try expect(good.status == 200, "a correctly signed request was refused: \(good.summary)")
            let now = serverNow
            let variants: [(String, (name: String, value: String))] = [
                ("signed as POST", try device.header("POST", wireTarget, at: now)),
                ("signed for the manifest's path", try device.header("GET", wire.prefix + "/api/sync/manifest?session=\(session)", at: now)),
                ("signed with another query", try device.header("GET", wireTarget + "&x=1", at: now)),
                ("signed over a body that was not sent", try device.header("GET", wireTarget, body: Array("{}".utf8), at: now)),
                ("signed at ts-1, sent with ts", (
                    "X-Pulse-Device", "\(device.id);ts=\(now);sig=\(Base64URL.encode(try device.signature("GET", wireTarget, at: now - 1)))"
                )),
            ]
            for (what, header) in variants {
                let response = try send("GET", target, headers: [header])
                evidence.add("\(what) → \(response.summary)")
                try expect(response.status == 404, "\(what): expected the flat 404, got \(response.status)")
            }
            // The body is covered: a diag POST whose body differs from the one signed.
            let signedBody = Array(#"{"build":"conformance","online":true,"platform":"conformance"}"#.utf8)
            let header = try device.header("POST", wire.prefix + "/api/sessions/\(session)/diag", body: signedBody, at: now)
            let sent = Array(#"{"build":"tampered","online":true,"platform":"conformance"}"#.utf8)
            let tampered = try send(
                "POST", "/api/sessions/\(session)/diag", headers: [("Content-Type", "application/json"), header], body: sent)
            evidence.add("POST diag with another body than the one signed → \(tampered.summary)")
            try expect(tampered.status == 404, "a body other than the signed one was accepted (\(tampered.status))")
        }

        rule("sign.p1363") { evidence in
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            let target = "/api/sync/keys?session=\(session)"
            let now = serverNow
            let p1363 = try device.signature("GET", wire.prefix + target, at: now)
            let der = Self.der(p1363)
            let cases: [(String, String)] = [
                ("the signature as DER (base64url)", Base64URL.encode(der)),
                ("P1363 in padded standard base64", Data(p1363).base64EncodedString()),
            ]
            for (what, signature) in cases {
                let response = try send("GET", target, headers: [("X-Pulse-Device", "\(device.id);ts=\(now);sig=\(signature)")])
                evidence.add("\(what) → \(response.summary)")
                try expect(response.status == 404, "\(what) was not refused with the flat 404 (\(response.status))")
            }
            let good = try send("GET", target, headers: [("X-Pulse-Device", "\(device.id);ts=\(now);sig=\(Base64URL.encode(p1363))")])
            evidence.add("the same signature as P1363 base64url → \(good.status)")
            try expect(good.status == 200, "the P1363 form of the same signature was refused (\(good.summary))")
        }

        rule("sign.window") { evidence in
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            let target = "/api/sync/keys?session=\(session)"
            for (delta, accepted) in [(-250, true), (250, true), (-310, false), (310, false)] as [(Int64, Bool)] {
                let response = try signed("GET", target, by: device, at: serverNow + delta)
                evidence.add("ts = server time \(delta > 0 ? "+" : "")\(delta) s → \(response.summary)")
                if accepted {
                    try expect(response.status == 200, "a signature \(delta) s off was refused; the window is ±300 s")
                } else {
                    try expect(response.status == 401 && response.json?["error"]?.stringValue == "staleSignature",
                        "a signature \(delta) s off: expected 401 {\"error\":\"staleSignature\"}")
                }
            }
        }

        // The canonical string holds ts exactly as the header writes it, and the contract's ts is a Unix timestamp:
        // one number, one text. A server that re-formats it accepts one signature under several header texts.
        rule("sign.ts-exact") { evidence in
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            let target = "/api/sync/keys?session=\(session)"
            let wireTarget = wire.prefix + target
            let now = serverNow
            let overNumber = Base64URL.encode(try device.signature("GET", wireTarget, at: now))
            func signedAsWritten(_ text: String) throws -> String {
                let parts = wireTarget.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
                let canonical = Array("GET\n\(parts[0])\n\(parts.count > 1 ? parts[1] : "")\n\(text)\n\(SHA256.hex([]))".utf8)
                return Base64URL.encode(try device.key.signature(for: canonical))
            }
            let cases: [(String, String)] = [
                ("ts=0\(now), signed over \(now)", "\(device.id);ts=0\(now);sig=\(overNumber)"),
                ("ts=0\(now), signed over 0\(now) as written", "\(device.id);ts=0\(now);sig=\(try signedAsWritten("0\(now)"))"),
                ("ts=+\(now), signed over \(now)", "\(device.id);ts=+\(now);sig=\(overNumber)"),
                ("ts of 20 digits", "\(device.id);ts=99999999999999999999;sig=\(overNumber)"),
                ("ts of 20 digits, unknown device", "00000000000000000000000000000000;ts=99999999999999999999;sig=AAAA"),
            ]
            for (what, header) in cases {
                let response = try send("GET", target, headers: [("X-Pulse-Device", header)])
                evidence.add("\(what) → \(response.summary)")
                try expect(response.status == 404, "\(what): expected the flat 404, got \(response.status)")
            }
            let good = try send("GET", target, headers: [("X-Pulse-Device", "\(device.id);ts=\(now);sig=\(overNumber)")])
            evidence.add("ts=\(now) with the same signature → \(good.summary)")
            try expect(good.status == 200, "the canonical ts with its signature was refused (\(good.summary)); is the server still up?")
        }

        rule("sign.stale-uniform") { evidence in
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            let target = "/api/sync/keys?session=\(session)"
            var devices: [(String, ConformanceDevice)] = [("an enrolled device", device), ("an unknown device", try .stranger())]
            if let revoked { devices.append(("a revoked device", revoked)) } else { evidence.add("(no revoked device: \(missing["a revoked device"] ?? "none"))") }
            var answers: [(String, WireResponse)] = []
            for (what, who) in devices {
                let response = try signed("GET", target, by: who, at: serverNow - 400)
                evidence.add("\(what), ts 400 s old → \(response.summary)")
                answers.append((what, response))
            }
            var badSignature = try device.header("GET", wire.prefix + target, at: serverNow - 400)
            badSignature.value = String(badSignature.value.dropLast(4)) + "AAAA"
            let bad = try send("GET", target, headers: [badSignature])
            evidence.add("a bad signature, ts 400 s old → \(bad.summary)")
            answers.append(("a bad signature", bad))
            for (what, response) in answers {
                try expect(response.status == 401, "\(what): a stale request must be 401 staleSignature whatever the device, got \(response.status)")
                try expect(response.fingerprint == answers[0].1.fingerprint,
                    "\(what)'s stale answer differs from \(answers[0].0)'s: \(WireResponse.difference(response, answers[0].1))")
            }
            evidence.add("all \(answers.count) answers are the same bytes (Date aside)")
        }

        rule("sign.flat-404") { evidence in
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            let target = "/api/sync/keys?session=\(session)"
            let wireTarget = wire.prefix + target
            let now = serverNow
            let stranger = try ConformanceDevice.stranger()
            var cases: [(String, [(name: String, value: String)])] = [
                ("no X-Pulse-Device", []),
                ("a malformed header", [("X-Pulse-Device", "not a signature")]),
                ("an unknown device", [try stranger.header("GET", wireTarget, at: now)]),
                ("a bad signature (another request's)", [
                    ("X-Pulse-Device", "\(device.id);ts=\(now);sig=\(Base64URL.encode(try device.signature("GET", wire.prefix + "/api/sync/time", at: now)))"),
                ]),
                ("an unknown session", [try device.header("GET", wire.prefix + "/api/sync/keys?session=conformance-none", at: now)]),
            ]
            if wire.isRaw {
                let header = try device.header("GET", wireTarget, at: now)
                cases.append(("a doubled header", [header, header]))
            }
            if let revoked { cases.append(("a revoked device", [try revoked.header("GET", wireTarget, at: now)])) } else {
                evidence.add("(no revoked device: \(missing["a revoked device"] ?? "none"))")
            }
            var answers: [(String, WireResponse)] = []
            for (what, headers) in cases {
                let path = what == "an unknown session" ? "/api/sync/keys?session=conformance-none" : target
                let response = try send("GET", path, headers: headers)
                evidence.add("\(what) → \(response.summary)")
                answers.append((what, response))
            }
            for (what, response) in answers {
                try expect(response.status == 404, "\(what): expected the flat 404, got \(response.status)")
                try expect(response.fingerprint == answers[0].1.fingerprint,
                    "\(what)'s 404 differs from \(answers[0].0)'s: \(WireResponse.difference(response, answers[0].1))")
            }
            evidence.add("all \(answers.count) answers are the same bytes (Date aside)")
        }
    }

    /// The DER `ECDSA-Sig-Value` of a P1363 signature.
    static func der(_ p1363: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(p1363[0..<32]) + integer(p1363[32..<64])
        return [0x30, UInt8(body.count)] + body
    }

    /// §2 and §1: the rate limits. They leave a device and the suite's address throttled, so they run last.
    func rateLimitRules() {
        rule("sign.rate-limit") { evidence in
            let device = try need(limited, "a device of its own for the rate limit")
            let session = try need(session, "a session")
            let target = "/api/sync/keys?session=\(session)"
            let started = Date()
            for attempt in 1...options.deviceProbe {
                let header = try device.header("GET", wire.prefix + target, at: serverNow)
                let response = try wire.get(target, headers: [header])
                if response.status == 429 {
                    evidence.add("\(attempt) signed keys calls in \(String(format: "%.2f", Date().timeIntervalSince(started))) s → 429, Retry-After \(response.header("retry-after") ?? "none")")
                    return
                }
                try expect(response.status == 200, "call \(attempt) answered \(response.summary)")
            }
            throw Broken("\(options.deviceProbe) signed keys calls in \(String(format: "%.2f", Date().timeIntervalSince(started))) s from one device were all answered 200: no rate limit")
        }

        rule("enroll.rate-limit") { evidence in
            let started = Date()
            let key = try P256.PrivateKey()
            for attempt in 1...options.enrollProbe {
                let response = try wire.send(
                    "POST", "/api/sync/enroll", headers: [("Content-Type", "application/json")],
                    body: ConformanceDevice.enrollBody(token: "conformance-probe-\(attempt)", key: key))
                if response.status == 429 {
                    evidence.add("\(attempt) enrollments in \(String(format: "%.2f", Date().timeIntervalSince(started))) s → 429, Retry-After \(response.header("retry-after") ?? "none")")
                    try expect(response.header("retry-after") != nil, "the 429 has no Retry-After")
                    return
                }
            }
            throw Broken("\(options.enrollProbe) enrollments in \(String(format: "%.2f", Date().timeIntervalSince(started))) s from one address: no 429")
        }
    }
}
