import PulseCrypto
import PulseServer
import PulseServerStorage
import Testing

@Suite struct CredentialSecretTests {
    @Test func deviceCodesAreTwelveCrockfordCharactersInGroups() throws {
        var seen = Set<String>()
        for _ in 0..<200 {
            let code = try CredentialSecret.newDeviceCode()
            #expect(code.count == 14 && code.split(separator: "-").map(\.count) == [4, 4, 4])
            #expect(code.replacingOccurrences(of: "-", with: "").allSatisfy { "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains($0) })
            seen.insert(code)
        }
        #expect(seen.count == 200)
    }

    @Test func typedCodesAreForgiving() throws {
        let code = "0123-4567-89AB"
        let hash = try #require(CredentialSecret.hash(code))
        for typed in ["0123456789ab", "o123 4567 89ab", "OI23-4567-89AB", "0l23-4567-89ab", " 0123-4567-89AB "] {
            #expect(CredentialSecret.hash(typed) == hash, "\(typed)")
        }
        #expect(CredentialSecret.hash("0123-4567-89A") == nil)
        #expect(CredentialSecret.hash("0123-4567-89ABC") == nil)
        #expect(CredentialSecret.hash("0123-4567-89AU") == nil)  // U is not Crockford
        #expect(CredentialSecret.hash("") == nil)
    }

    @Test func tokensAre32RandomBytesInBase64URL() throws {
        let token = try CredentialSecret.newToken()
        #expect(token.count == 43 && CredentialSecret.isTokenShaped(token))
        // The last character carries 4 bits of data and 2 zero bits.
        #expect("AEIMQUYcgkosw048".contains(token.last!))
        #expect(CredentialSecret.hash(token) == SHA256.hash(Array(token.utf8)))
        #expect(CredentialSecret.hash(String(token.dropLast())) == nil)
        #expect(CredentialSecret.hash(token.replacingOccurrences(of: token.prefix(1), with: "+")) == nil)
        #expect(try CredentialSecret.newToken() != token)
    }

    @Test func listingIdsAreAShortHashPrefix() {
        #expect(CredentialSecret.listingId(hash: [0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3]) == "deadbeef0001")
    }
}

@Suite struct LifetimeTests {
    @Test func durationsReadAsSeconds() {
        #expect(Lifetime.seconds("90s") == 90)
        #expect(Lifetime.seconds("30m") == 1800)
        #expect(Lifetime.seconds("2h") == 7200)
        #expect(Lifetime.seconds("7d") == 604_800)
        #expect(Lifetime.seconds("45") == 45)
        for bad in ["", "h", "2x", "-1h", "0s", "1.5h", "367d", "2 h", "99999999999d"] {
            #expect(Lifetime.seconds(bad) == nil, "\(bad)")
        }
    }
}
