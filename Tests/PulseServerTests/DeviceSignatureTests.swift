import Foundation
import PulseCore
import PulseCrypto
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseSyncAPI

/// The `X-Pulse-Device` header and the canonical string, the worked example of docs/server-routes.md, and every
/// Wycheproof P1363 case through the header's verify path.
@Suite struct DeviceSignatureTests {
    // The worked example of docs/server-routes.md ("Signing a request"), checked here so the document cannot drift.
    static let examplePublicKey =
        "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEiKe/ZxkJKGdvqmyFXgIi996C6vjndXn6vrrahBnzIwbTqGOgA6eFOJAvESdli3OM+U+IfoFHgNy6yUQhi34VdQ=="
    static let exampleDevice = "3f6c1a2b9d8e7f60a1b2c3d4e5f60718"
    static let exampleTimestamp: Int64 = 1_796_112_000
    static let exampleGetCanonical = "GET\n/api/sync/keys\nsession=keynote\n1796112000\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    static let exampleGetHeader =
        "3f6c1a2b9d8e7f60a1b2c3d4e5f60718;ts=1796112000;sig=_MMOv2Ua0AjVqyndUqayyyoAs6BkbWse_QSPboxNX9TbHODYPopGWq2RWDzxJX33l3pX7-Aisxnsb7oIaUel9Q"
    static let examplePostBody = #"{"build":"2.4.1","online":true,"platform":"ios","rttMs":38}"#
    static let examplePostCanonical = "POST\n/api/sessions/keynote/diag\n\n1796112000\na7ebef53e9915c72da44c6b8d9e38817350df8e9a7951fc01c859946e5150fa0"
    static let examplePostHeader =
        "3f6c1a2b9d8e7f60a1b2c3d4e5f60718;ts=1796112000;sig=dxGPgws4axLngpsMFMLo9nfggQqAQULUkPyL7r11FWGIfjfW4KGh3WDOYkCAlv_RI8FRPx1fPZQZw5vYXWNdKQ"

    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/server-routes.md").standardizedFileURL

    @Test func theWorkedExampleOfTheDocsVerifies() throws {
        let key = try P256.PublicKey(derRepresentation: try #require(Data(base64Encoded: Self.examplePublicKey)))
        for (method, target, body, canonical, header) in [
            ("GET", "/api/sync/keys?session=keynote", nil as [UInt8]?, Self.exampleGetCanonical, Self.exampleGetHeader),
            ("POST", "/api/sessions/keynote/diag", Array(Self.examplePostBody.utf8), Self.examplePostCanonical, Self.examplePostHeader),
        ] {
            let built = DeviceSignature.canonical(method: method, target: Array(target.utf8), timestamp: Self.exampleTimestamp, body: body)
            #expect(String(decoding: built, as: UTF8.self) == canonical)
            let parsed = try #require(DeviceSignature.parse(Array(header.utf8)))
            #expect(parsed.deviceId == Self.exampleDevice && parsed.timestamp == Self.exampleTimestamp)
            #expect(parsed.isValid(for: built, key: key))
            #expect(parsed.headerValue == header)
            // One changed byte anywhere in the request breaks it.
            let other = DeviceSignature.canonical(method: method, target: Array((target + "x").utf8), timestamp: Self.exampleTimestamp, body: body)
            #expect(!parsed.isValid(for: other, key: key))
        }
        // The document shows exactly these values.
        let text = try String(contentsOf: Self.docs, encoding: .utf8)
        for value in [Self.examplePublicKey, Self.exampleGetHeader, Self.examplePostHeader, Self.examplePostBody] {
            #expect(text.contains(value), "docs/server-routes.md lacks \(value.prefix(40))…")
        }
        for canonical in [Self.exampleGetCanonical, Self.examplePostCanonical] {
            #expect(text.contains("```\n" + canonical + "\n```"), "docs/server-routes.md lacks the canonical string \(canonical.prefix(30))…")
        }
    }

    @Test func signingAndVerifyingRoundTrip() throws {
        let key = try P256.PrivateKey()
        let id = try DeviceID.generate()
        let signed = try DeviceSignature.sign(method: "GET", target: "/api/sync/manifest?session=a&x=%41", deviceId: id, key: key, at: 12)
        let parsed = try #require(DeviceSignature.parse(Array(signed.headerValue.utf8)))
        #expect(parsed == signed)
        // PATH and QUERY as sent: %41 is not decoded, the order of parameters matters.
        #expect(parsed.isValid(for: DeviceSignature.canonical(method: "GET", target: Array("/api/sync/manifest?session=a&x=%41".utf8), timestamp: 12, body: nil), key: key.publicKey))
        #expect(!parsed.isValid(for: DeviceSignature.canonical(method: "GET", target: Array("/api/sync/manifest?session=a&x=A".utf8), timestamp: 12, body: nil), key: key.publicKey))
        #expect(!parsed.isValid(for: DeviceSignature.canonical(method: "GET", target: Array("/api/sync/manifest?x=%41&session=a".utf8), timestamp: 12, body: nil), key: key.publicKey))
        #expect(!parsed.isValid(for: DeviceSignature.canonical(method: "HEAD", target: Array("/api/sync/manifest?session=a&x=%41".utf8), timestamp: 12, body: nil), key: key.publicKey))
        // An empty body and no body are the same: SHA-256 of nothing.
        #expect(DeviceSignature.canonical(method: "GET", target: [0x2f], timestamp: 1, body: []) == DeviceSignature.canonical(method: "GET", target: [0x2f], timestamp: 1, body: nil))
    }

    @Test func malformedHeadersAreRefused() {
        let id = "3f6c1a2b9d8e7f60a1b2c3d4e5f60718"
        let sig = Base64URL.encode([UInt8](repeating: 7, count: 64))
        #expect(DeviceSignature.parse(Array("\(id);ts=5;sig=\(sig)".utf8)) != nil)
        for bad in [
            "", "\(id)", "\(id);ts=5", "\(id);ts=5;sig=", "\(id);sig=\(sig);ts=5", "\(id);ts=5;sig=\(sig);x=1",
            "\(id.uppercased());ts=5;sig=\(sig)", "\(id.dropLast());ts=5;sig=\(sig)", "\(id)0;ts=5;sig=\(sig)",
            "\(id);ts=-5;sig=\(sig)", "\(id);ts=5.0;sig=\(sig)", "\(id);ts=;sig=\(sig)", "\(id);ts=1234567890123;sig=\(sig)",
            "\(id);ts=5;sig=\(sig)=", "\(id);ts=5;sig=\(sig.replacingOccurrences(of: "B", with: "+"))", "\(id); ts=5;sig=\(sig)",
            "\(id);TS=5;sig=\(sig)", "\(id);ts=5;sig=\(String(repeating: "A", count: 200))",
        ] {
            #expect(DeviceSignature.parse(Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    /// Issue 17, item 1: `ts` is parsed with its bounds checked before any arithmetic. Twenty digits (the
    /// probe's one request that killed the server: the digits were accumulated in an Int64 before their
    /// count was checked), 2^63, signs, -0: nil, never a trap.
    @Test func timestampsOfAnyLengthOrSignAreRefusedWithoutOverflow() {
        let id = "00000000000000000000000000000000"
        let sig = Base64URL.encode([UInt8](repeating: 7, count: 64))
        #expect(DeviceSignature.parse(Array("\(id);ts=99999999999999999999;sig=AAAA".utf8)) == nil)
        for ts in [
            "99999999999999999999", "9223372036854775807", "9223372036854775808", "18446744073709551616", "1" + String(repeating: "0", count: 19),
            String(repeating: "9", count: 13), String(repeating: "9", count: 40), "-0", "+0", "-1", "+1796112000", "0x10", "1e9", " 1", "1 ",
            "1_796_112_000", "١٢٣",
        ] {
            #expect(DeviceSignature.parse(Array("\(id);ts=\(ts);sig=\(sig)".utf8)) == nil, "ts=\(ts)")
        }
        // The whole range that is allowed still parses, to its last value.
        for (ts, value) in [("0", 0), ("5", 5), ("1796112000", 1_796_112_000), ("999999999999", 999_999_999_999)] as [(String, Int64)] {
            #expect(DeviceSignature.parse(Array("\(id);ts=\(ts);sig=\(sig)".utf8))?.timestamp == value, "ts=\(ts)")
        }
    }

    /// Issue 17, item 2: the canonical string holds `ts` exactly as the header wrote it, and only a canonical
    /// decimal is accepted, so one signature is valid for one header text: `ts=01796112000` with a signature
    /// over `1796112000` (what the re-formatting canonical string accepted) is refused, and so is a signature
    /// over the zero-padded text itself.
    @Test func aTimestampIsSignedAsWrittenAndOnlyInItsCanonicalForm() throws {
        let key = try P256.PrivateKey()
        let id = try DeviceID.generate()
        let target = "/api/sync/keys?session=keynote"
        let signed = try DeviceSignature.sign(method: "GET", target: target, deviceId: id, key: key, at: Self.exampleTimestamp)
        let sig = Base64URL.encode(signed.signature)
        let good = try #require(DeviceSignature.parse(Array("\(id);ts=1796112000;sig=\(sig)".utf8)))
        #expect(good.isValid(for: good.canonical(method: "GET", target: Array(target.utf8), body: nil), key: key.publicKey))
        #expect(good.timestampText == Array("1796112000".utf8))
        for padded in ["01796112000", "001796112000", "00"] {
            #expect(DeviceSignature.parse(Array("\(id);ts=\(padded);sig=\(sig)".utf8)) == nil, "ts=\(padded)")
        }
        // Signed over the padded text as written: still not a canonical decimal, still refused.
        let paddedCanonical = DeviceSignature.canonical(method: "GET", target: Array(target.utf8), timestampText: Array("01796112000".utf8), body: nil)
        let paddedSig = Base64URL.encode(try key.signature(for: paddedCanonical))
        #expect(DeviceSignature.parse(Array("\(id);ts=01796112000;sig=\(paddedSig)".utf8)) == nil)
        // The canonical string is built from the header's bytes, not from the number.
        var reformatted = good
        reformatted.timestampText = Array("01796112000".utf8)
        #expect(!reformatted.isValid(for: reformatted.canonical(method: "GET", target: Array(target.utf8), body: nil), key: key.publicKey))
    }

    /// The header's own base64url decoder (a fast path) agrees with `Base64URL.decode` on every input.
    @Test func theHeadersBase64URLDecoderAgreesWithPulseCrypto() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=. ".utf8)
        var texts: [[UInt8]] = (0..<70).map { Array(Base64URL.encode([UInt8](repeating: 0xa5, count: $0)).utf8) }
        for _ in 0..<20_000 {
            let length = Int.random(in: 1...90, using: &generator)
            // Mostly the base64url alphabet, sometimes a character outside it.
            texts.append((0..<length).map { _ in alphabet[Int.random(in: 0..<(Int.random(in: 0..<20, using: &generator) == 0 ? alphabet.count : 64), using: &generator)] })
        }
        for text in texts where !text.isEmpty {
            let fast = DeviceSignature.decodeBase64URL(text[...])
            #expect(fast == Base64URL.decode(bytes: text), "\(String(decoding: text, as: UTF8.self))")
        }
    }

    /// Every case of Wycheproof's ecdsa_secp256r1_sha256_p1363_test.json through the header path: the
    /// signature goes into an `X-Pulse-Device` value as base64url, is parsed by `DeviceSignature.parse` and
    /// checked by `isValid(for:key:)`, exactly as `deviceRoute` does (the message stands in for the
    /// canonical string). Valid cases verify, invalid ones do not (an empty signature cannot be written
    /// in the header at all, which is a refusal too).
    @Test func everyWycheproofP1363CaseThroughTheHeaderPath() throws {
        let root = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/wycheproof/ecdsa_secp256r1_sha256_p1363_test.json").standardizedFileURL))
        var valid = 0, invalid = 0
        for group in try #require(root["testGroups"]?.arrayValue) {
            let der = try #require(group["publicKeyDer"]?.stringValue.flatMap { Hex.decode($0) })
            let key = try P256.PublicKey(derRepresentation: der)
            for test in try #require(group["tests"]?.arrayValue) {
                let id = try #require(test["tcId"]?.intValue)
                let signature = try #require(test["sig"]?.stringValue.flatMap { Hex.decode($0) })
                let message = try #require(test["msg"]?.stringValue.flatMap { Hex.decode($0) })
                let header = "3f6c1a2b9d8e7f60a1b2c3d4e5f60718;ts=1796112000;sig=\(Base64URL.encode(signature))"
                let verdict = DeviceSignature.parse(Array(header.utf8))?.isValid(for: message, key: key) ?? false
                switch test["result"]?.stringValue {
                case "valid":
                    #expect(verdict, "tcId \(id) must verify")
                    valid += 1
                case "invalid":
                    #expect(!verdict, "tcId \(id) must not verify")
                    invalid += 1
                default:
                    Issue.record("tcId \(id): unexpected result")
                }
            }
        }
        #expect(valid == 173 && invalid == 89)
        #expect(valid + invalid == root["numberOfTests"]?.intValue)
    }
}
