import Foundation
import PulseCore
import PulseCrypto
import PulseDevice

extension ConformanceRun {
    /// §1: badKey, the flat 404 for unknown and used tokens, single-use codes, durable tokens, the certificate.
    func enrollRules() {
        rule("enroll.bad-key") { evidence in
            let token = try need(badKeyToken, "a token that stays valid (a registration token, or a staff token to mint a code)")
            let good = try P256.PrivateKey().publicKey.derRepresentation
            var offCurve = good
            offCurve[offCurve.count - 1] ^= 0x01
            let cases: [(String, String)] = [
                ("random bytes", Data(try SecureRandom.bytes(91)).base64EncodedString()),
                ("a point off the curve", Data(offCurve).base64EncodedString()),
                ("a truncated key", Data(good.dropLast(8)).base64EncodedString()),
                ("not base64", "not-a-key!"),
            ]
            for (what, text) in cases {
                let (made, response) = try enroll(token, publicKey: text)
                evidence.add("POST /api/sync/enroll with \(what) → \(response.summary)")
                try expect(made == nil, "\(what) was enrolled as device \(made?.id ?? "")")
                try expect(response.status == 400 && response.json?["error"]?.stringValue == "badKey", "\(what): expected 400 {\"error\":\"badKey\"}")
            }
        }

        rule("enroll.unknown-token") { evidence in
            let (made, response) = try enroll("conformance-\(Hex.encode(try SecureRandom.bytes(12)))")
            evidence.add("POST /api/sync/enroll with an unknown token → \(response.summary)")
            try expect(made == nil && response.status == 404, "expected the flat 404")
        }
        if unknownToken404 == nil, let (_, response) = try? enroll("conformance-\(Hex.encode((try? SecureRandom.bytes(12)) ?? []))") {
            unknownToken404 = response
        }

        rule("enroll.code-single-use") { evidence in
            let code = try need(singleUseCode, "a device code (--device-code, or --staff-token to mint one)")
            if options.staffToken != nil {
                let (first, answer) = try enroll(code)
                evidence.add("POST /api/sync/enroll with a new device code → \(answer.summary.prefix(40))")
                try expect(first != nil, "the code's first use was refused")
            } else {
                evidence.add("the device code's first use enrolled device \(device?.id ?? "(none)")")
                try expect(device != nil, "the device code's first use was refused")
            }
            let (second, response) = try enroll(code)
            evidence.add("POST /api/sync/enroll with the same code again → \(response.summary)")
            try expect(second == nil && response.status == 404, "a used device code enrolled device \(second?.id ?? "") or did not answer 404")
            if let reference = unknownToken404 {
                try expect(reference.fingerprint == response.fingerprint,
                    "the used code's 404 differs from an unknown token's: \(WireResponse.difference(response, reference))")
                evidence.add("byte for byte the 404 of an unknown token (Date aside)")
            }
        }

        rule("enroll.token-durable") { evidence in
            _ = try need(registrationToken, "a registration token (--registration-token, or --staff-token for a session in a series)")
            evidence.add("two enrollments with one registration token → \(seriesDevices.count) devices: \(seriesDevices.map { String($0.id.prefix(8)) + "…" }.joined(separator: ", "))")
            try expect(seriesDevices.count == 2 && seriesDevices[0].id != seriesDevices[1].id, missing["a series device"] ?? "expected two distinct devices")
        }

        rule("enroll.certificate") { evidence in
            let device = try need(device, "a device")
            let keys = try wire.get("/api/sync/device-cert-keys")
            evidence.add("GET /api/sync/device-cert-keys → \(keys.status)")
            try expect(keys.status == 200, "the server publishes no certificate key at /api/sync/device-cert-keys")
            do {
                let claims = try DeviceCertificateCheck.verify(
                    device.certificate, keySet: keys.body, deviceId: device.id, publicKeySPKI: device.key.publicKey.derRepresentation)
                evidence.add("deviceCert verifies with key \(claims["kid"]?.stringValue?.prefix(12) ?? "?")…, names device \(device.id.prefix(8))…, its key, scope \(device.scopeKind) \(device.scopeId)")
                try expect(["session", "series"].contains(device.scopeKind), "the certificate names no session or series scope")
            } catch let error as DeviceError {
                throw Broken(error.message)
            }
        }
    }
}
