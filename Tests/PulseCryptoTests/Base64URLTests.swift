import Testing
import PulseCrypto

/// Base64url without padding: RFC 4648 section 10's vectors (padding dropped, as section 3.2 allows
/// and JOSE requires), the URL-safe characters, and the strictness of decoding.
@Suite struct Base64URLTests {
    @Test func rfc4648Section10Vectors() {
        let vectors = [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded, "\(plain)")
            #expect(Base64URL.decode(encoded) == Array(plain.utf8), "\(encoded)")
        }
    }

    @Test func urlSafeAlphabet() {
        // 0xfb 0xff is "+/8" in standard base64 and "-_8" in base64url.
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xfb, 0xff])
        #expect(Base64URL.encode([0xff, 0xff, 0xff]) == "____")
        #expect(Base64URL.encode([0xf8, 0x3e, 0x0f]) == "-D4P")
    }

    @Test func decodingIsStrict() {
        let refused = [
            "Zg==", "Zm8=", "Zg=", "=",            // padding
            "+/8", "Zm9v/w", "Zm 9v", "Zm9v\n", " Zm9v", "Zm9v\t", "Zm9v.", "Zm9\u{e9}", // characters
            "Z", "Zm9vY",                          // 4k+1 characters
            "Zh", "Zm9", "-_9",                    // non-zero unused bits ("Zh" would also give "f")
        ]
        for text in refused {
            #expect(Base64URL.decode(text) == nil, "\(text)")
        }
    }

    @Test func everyLengthRoundTrips() {
        for length in 0..<100 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(text.utf8.count == (length * 4 + 2) / 3)
            #expect(Base64URL.decode(text) == bytes, "length \(length)")
            #expect(Base64URL.decode(bytes: Array(text.utf8)) == bytes)
        }
    }
}
