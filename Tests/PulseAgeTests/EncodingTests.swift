import Testing
@testable import PulseAge

/// Bech32 (BIP 173 vectors), strict unpadded base64, and the recipient/identity string rules.
@Suite struct EncodingTests {
    @Test func bech32ValidVectorsFromBIP173() throws {
        // Checksums must verify; the data of some vectors is not whole bytes, which is a padding error, not a checksum one.
        for text in ["A12UEL5L", "a12uel5l",
                     "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
                     "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
                     "11" + String(repeating: "q", count: 82) + "c8247j", // 90 characters
                     "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w", "?1ezyfcl"] {
            do { _ = try Bech32.decode(text) } catch {
                #expect(error == .badPadding, "\(text): \(error)")
            }
        }
        let decoded = try Bech32.decode("abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw")
        #expect(decoded.hrp == "abcdef")
        #expect(decoded.data == [0x00, 0x44, 0x32, 0x14, 0xc7, 0x42, 0x54, 0xb6, 0x35, 0xcf, 0x84, 0x65, 0x3a, 0x56, 0xd7, 0xc6, 0x75, 0xbe, 0x77, 0xdf])
        #expect(Bech32.encode(hrp: "abcdef", data: decoded.data) == "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw")
        #expect(try Bech32.decode("A12UEL5L").wasUppercase)
    }

    @Test func bech32InvalidVectorsFromBIP173() {
        let cases: [(String, Bech32.Failure)] = [
            ("pzry9x0s0muk", .noSeparator), ("1pzry9x0s0muk", .emptyHRP), ("x1b4n0q5v", .badCharacter),
            ("li1dgmt3", .badChecksum), ("A1G7SGD8", .badChecksum), ("10a06t8", .emptyHRP), ("1qzzfhee", .emptyHRP),
            ("A12uEL5L", .mixedCase), ("a12uel5m", .badChecksum), ("\u{7f}1axkwrx", .badCharacter),
        ]
        for (text, failure) in cases {
            #expect(throws: failure, "\(text)") { try Bech32.decode(text) }
        }
    }

    @Test func base64IsStrict() {
        #expect(AgeBase64.encode([UInt8]()) == "")
        #expect(AgeBase64.encode(Array("f".utf8)) == "Zg")
        #expect(AgeBase64.encode(Array("fo".utf8)) == "Zm8")
        #expect(AgeBase64.encode(Array("foo".utf8)) == "Zm9v")
        #expect(AgeBase64.encode([0xfb, 0xff]) == "+/8")
        #expect(AgeBase64.decode("Zm8") == Array("fo".utf8))
        #expect(AgeBase64.decode("") == [])
        for bad in ["Zg==", "Zm8=", "Zh", "Zm9", "Z", "Zm9v\n", "Zm 9", "Zm-_", "Zm9vA"] {
            #expect(AgeBase64.decode(bad) == nil, "\(bad)")
        }
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(AgeBase64.decode(AgeBase64.encode(bytes)) == bytes)
        }
    }

    @Test func specExampleIdentityAndRecipient() throws {
        // c2sp.org/age, "The X25519 recipient type": the example identity encodes 32 bytes of 0x42... checked
        // against our round trip; its recipient is checked against age-keygen in AgeInteropTests.
        let identity = try AgeIdentity(parsing: "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
        #expect(identity.secretKeyString == "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
        let recipient = try AgeRecipient(parsing: "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj")
        #expect(recipient.description == "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj")
    }

    @Test func recipientRules() throws {
        let recipient = try AgeIdentity.generate().recipient.description
        #expect(try AgeRecipient(parsing: "  \(recipient)\n").description == recipient)
        let bad = [
            "", "age", "age1", recipient.uppercased(), String(recipient.dropLast()) + (recipient.last == "q" ? "p" : "q"),
            Bech32.encode(hrp: "age", data: [UInt8](repeating: 1, count: 31)),
            Bech32.encode(hrp: "age", data: [UInt8](repeating: 1, count: 33)),
            Bech32.encode(hrp: "agx", data: [UInt8](repeating: 1, count: 32)),
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
        ]
        for text in bad {
            #expect(throws: AgeError.self, "\(text)") { try AgeRecipient(parsing: text) }
        }
    }

    @Test func identityRulesAndFiles() throws {
        let identity = try AgeIdentity.generate()
        let secret = identity.secretKeyString
        #expect(secret.hasPrefix("AGE-SECRET-KEY-1") && secret == secret.uppercased())
        #expect(try AgeIdentity(parsing: secret).recipient == identity.recipient)
        #expect(throws: AgeError.self) { try AgeIdentity(parsing: secret.lowercased()) }
        #expect(throws: AgeError.self) { try AgeIdentity(parsing: identity.recipient.description) }
        #expect(throws: AgeError.self) { try AgeIdentity(parsing: Bech32.encode(hrp: "age-secret-key-", data: [1, 2]).uppercased()) }
        // Files: comments and blank lines skipped, several identities, CRLF tolerated.
        let other = try AgeIdentity.generate()
        let text = "# created: now\r\n# public key: \(identity.recipient)\r\n\r\n\(secret)\r\n\(other.secretKeyString)\n"
        let parsed = try AgeIdentity.parseFile(text)
        #expect(parsed.map(\.recipient) == [identity.recipient, other.recipient])
        #expect(throws: AgeError.missing("identity file holds no AGE-SECRET-KEY-1… identity")) { try AgeIdentity.parseFile("# only a comment\n") }
        // A broken line is reported by number, never by content.
        let broken = "# comment\n\(secret.dropLast())\(secret.last == "X" ? "Y" : "X")\n"  // a different last character
        do {
            _ = try AgeIdentity.parseFile(broken)
            Issue.record("a damaged identity was accepted")
        } catch {
            #expect(error.description.contains("line 2"))
            #expect(!error.description.contains(secret.dropFirst(16).prefix(10)))
        }
        // Printing an identity shows only its recipient.
        for shown in ["\(identity)", String(describing: identity), String(reflecting: identity)] {
            #expect(!shown.contains(secret) && !shown.contains(secret.dropFirst(16).prefix(10)), "\(shown)")
            #expect(shown.contains(identity.recipient.description))
        }
        var dumped = ""
        dump(identity, to: &dumped)
        #expect(!dumped.contains(secret.dropFirst(16).prefix(10)))
    }
}
