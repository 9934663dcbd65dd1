import Foundation
import PulseCore
import PulseTestSupport
import Synchronization
import Testing
@testable import PulseCrypto

/// P-256 keys and ES256 signatures: round trips, encodings, and what must be refused.
@Suite struct P256Tests {
    @Test func signAndVerifyRoundTrip() throws {
        let key = try P256.PrivateKey()
        let message = Array("GET\n/api/sync/keys\nsession=keynote\n1700000000\ne3b0c442".utf8)
        let signature = try key.signature(for: message)
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        // A fresh nonce each time: two signatures differ, both verify.
        let again = try key.signature(for: message)
        #expect(again != signature && key.publicKey.isValidSignature(again, for: message))
        // Another message, another key, a flipped bit, a wrong length: false.
        #expect(!key.publicKey.isValidSignature(signature, for: message + [0]))
        #expect(!(try P256.PrivateKey()).publicKey.isValidSignature(signature, for: message))
        for index in signature.indices {
            var damaged = signature
            damaged[index] ^= 0x10
            #expect(!key.publicKey.isValidSignature(damaged, for: message), "byte \(index)")
        }
        #expect(!key.publicKey.isValidSignature(Array(signature.dropLast()), for: message))
        #expect(!key.publicKey.isValidSignature(signature + [0], for: message))
        #expect(!key.publicKey.isValidSignature([UInt8](), for: message))
    }

    /// r or s equal to 0 or ≥ n is refused before libcrypto sees it.
    @Test func scalarsOutOfRangeAreRefused() throws {
        let key = try P256.PrivateKey()
        let message = [UInt8](repeating: 7, count: 10)
        let signature = try key.signature(for: message)
        let r = Array(signature[0..<32]), s = Array(signature[32..<64])
        let zero = [UInt8](repeating: 0, count: 32), n = P256.order
        var nPlusS = n  // n + s wraps to s (mod n): a malleable copy a lax parser would accept
        var carry = 0
        for index in (0..<32).reversed() {
            let sum = Int(n[index]) + Int(s[index]) + carry
            nPlusS[index] = UInt8(sum & 0xff)
            carry = sum >> 8
        }
        var cases = [zero + s, r + zero, n + s, r + n, [UInt8](repeating: 0xff, count: 64)]
        if carry == 0 { cases.append(r + nPlusS) }
        for bad in cases {
            #expect(!key.publicKey.isValidSignature(bad, for: message))
            #expect(bad.withUnsafeBytes { P256.derSignature(p1363: $0) } == nil)
        }
        var nMinusOne = n
        nMinusOne[31] -= 1
        #expect((r + nMinusOne).withUnsafeBytes { P256.derSignature(p1363: $0) } != nil)
        #expect(([UInt8](repeating: 0, count: 31) + [1] + s).withUnsafeBytes { P256.derSignature(p1363: $0) } != nil)
    }

    @Test func p1363ToDERMatchesTheDERForm() throws {
        // Wycheproof tcId 1 of both files signs the same message with the same key.
        let r = "2ba3a8be6b94d5ec80a6d9d1190a436effe50d85a1eee859b8cc6af9bd5c2e18"
        let s = "4cd60b855d442f5b3c7b11eb6c4e0ae7525fe710fab9aa7c77a67f79e6fadd76"
        let p1363 = try #require(Hex.decode(r + s))
        let der = try #require(p1363.withUnsafeBytes { P256.derSignature(p1363: $0) })
        #expect(Hex.encode(der) == "304402202ba3a8be6b94d5ec80a6d9d1190a436effe50d85a1eee859b8cc6af9bd5c2e1802204cd60b855d442f5b3c7b11eb6c4e0ae7525fe710fab9aa7c77a67f79e6fadd76")
        #expect(try der.withUnsafeBytes { try P256.p1363Signature(der: $0) } == p1363)
        // High bit set: DER needs a leading zero; small values are short; P1363 pads them back.
        var small = [UInt8](repeating: 0, count: 64)
        small[31] = 1
        small[32] = 0x80
        let smallDER = try #require(small.withUnsafeBytes { P256.derSignature(p1363: $0) })
        #expect(Hex.encode(smallDER) == "3026020101022100" + "80" + String(repeating: "00", count: 31))
        #expect(try smallDER.withUnsafeBytes { try P256.p1363Signature(der: $0) } == small)
    }

    @Test func privateKeyExportsAndImports() throws {
        let key = try P256.PrivateKey()
        let der = try key.pkcs8DERRepresentation()
        let pem = try key.pemRepresentation()
        let pemText = String(decoding: pem.withUnsafeBytes { Array($0) }, as: UTF8.self)
        #expect(pemText.hasPrefix("-----BEGIN PRIVATE KEY-----\n") && pemText.hasSuffix("-----END PRIVATE KEY-----\n"))
        let fromDER = try P256.PrivateKey(pkcs8DERRepresentation: der)
        let fromPEM = try P256.PrivateKey(pemRepresentation: pem)
        #expect(fromDER.publicKey == key.publicKey && fromPEM.publicKey == key.publicKey)
        #expect(try fromPEM.pkcs8DERRepresentation().isEqual(to: der))
        // What the imported key signs, the original public key verifies.
        let message = Array("hello".utf8)
        #expect(key.publicKey.isValidSignature(try fromPEM.signature(for: message), for: message))
        // openssl reads our PEM and gives the same public key.
        let temporary = try TestFolder()
        let folder = temporary.url
        let keyFile = folder.appendingPathComponent("key.pem")
        try Data(pem.withUnsafeBytes { Array($0) }).write(to: keyFile)
        let spki = try runOpenSSL(["pkey", "-in", keyFile.path, "-pubout", "-outform", "DER"])
        #expect(spki == key.publicKey.derRepresentation)
    }

    @Test func opensslKeysImportAndInteroperate() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let keyFile = folder.appendingPathComponent("key.pem")
        _ = try runOpenSSL(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyFile.path])
        let key = try P256.PrivateKey(pemRepresentation: Data(contentsOf: keyFile))
        let spki = try runOpenSSL(["pkey", "-in", keyFile.path, "-pubout", "-outform", "DER"])
        #expect(try P256.PublicKey(derRepresentation: spki) == key.publicKey)
        // openssl verifies our signature (as DER) over the message.
        let message = Array("GET\n/api/sync/manifest\n\n1700000000\n".utf8)
        let signature = try key.signature(for: message)
        let der = try #require(signature.withUnsafeBytes { P256.derSignature(p1363: $0) })
        try Data(message).write(to: folder.appendingPathComponent("message"))
        try Data(der).write(to: folder.appendingPathComponent("sig.der"))
        try Data(spki).write(to: folder.appendingPathComponent("pub.der"))
        let verified = try runOpenSSL(["dgst", "-sha256", "-verify", folder.appendingPathComponent("pub.der").path, "-keyform", "DER",
                                       "-signature", folder.appendingPathComponent("sig.der").path, folder.appendingPathComponent("message").path])
        #expect(String(decoding: verified, as: UTF8.self).contains("Verified OK"))
        // And we verify openssl's.
        let theirs = try runOpenSSL(["dgst", "-sha256", "-sign", keyFile.path, folder.appendingPathComponent("message").path])
        #expect(key.publicKey.isValidDERSignature(theirs, for: message))
        #expect(key.publicKey.isValidSignature(try theirs.withUnsafeBytes { try P256.p1363Signature(der: $0) }, for: message))
    }

    @Test func badPrivateKeysAreRefused() throws {
        let key = try P256.PrivateKey()
        let der = try key.pkcs8DERRepresentation().withUnsafeBytes { Array($0) }
        #expect(throws: CryptoError.self) { try P256.PrivateKey(pkcs8DERRepresentation: der + [0]) }
        #expect(throws: CryptoError.self) { try P256.PrivateKey(pkcs8DERRepresentation: Array(der.dropLast())) }
        #expect(throws: CryptoError.self) { try P256.PrivateKey(pkcs8DERRepresentation: [UInt8]()) }
        #expect(throws: CryptoError.badKey("no PEM block")) { try P256.PrivateKey(pemRepresentation: Array("not a key".utf8)) }
        #expect(throws: CryptoError.badKey("no PEM block (empty input)")) { try P256.PrivateKey(pemRepresentation: [UInt8]()) }
        let pem = String(decoding: try key.pemRepresentation().withUnsafeBytes { Array($0) }, as: UTF8.self)
        #expect(throws: CryptoError.self) {
            try P256.PrivateKey(pemRepresentation: Array(pem.replacingOccurrences(of: "PRIVATE KEY", with: "EC PRIVATE KEY").utf8))
        }
        // Other curves and algorithms, made by openssl.
        let temporary = try TestFolder()
        let folder = temporary.url
        for (name, options) in [("p384", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"]),
                                ("k256", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp256k1"]),
                                ("ed25519", ["-algorithm", "ED25519"]), ("x25519", ["-algorithm", "X25519"])] {
            let file = folder.appendingPathComponent("\(name).pem")
            _ = try runOpenSSL(["genpkey"] + options + ["-out", file.path])
            #expect(throws: CryptoError.badKey("not a P-256 (prime256v1) key"), "\(name)") {
                try P256.PrivateKey(pemRepresentation: Data(contentsOf: file))
            }
            let spki = try runOpenSSL(["pkey", "-in", file.path, "-pubout", "-outform", "DER"])
            #expect(throws: CryptoError.self, "\(name)") { try P256.PublicKey(derRepresentation: spki) }
        }
    }

    @Test func badPublicKeysAreRefused() throws {
        let key = try P256.PrivateKey().publicKey
        let der = key.derRepresentation
        #expect(der.count == 91)
        #expect(try P256.PublicKey(derRepresentation: der) == key)
        #expect(try P256.PublicKey(x963Representation: key.x963Representation) == key)
        // Compressed: accepted, decompressed to the same key.
        let compressed = [key.y.last! & 1 == 0 ? 0x02 : 0x03] + key.x
        #expect(try P256.PublicKey(x963Representation: compressed) == key)
        #expect(try P256.PublicKey(derRepresentation: P256.spkiPrefixCompressed + compressed) == key)
        // The other parity is a different (valid) point; the wrong one is refused if its x has no y.
        #expect(try P256.PublicKey(x963Representation: [compressed[0] ^ 1] + key.x) != key)
        var bad: [(String, [UInt8])] = [
            ("empty", []), ("trailing byte", der + [0]), ("truncated", Array(der.dropLast())),
            ("point at infinity", [0x30, 0x19] + Array(der[2..<23]) + [0x03, 0x02, 0x00, 0x00]),
            ("hybrid form", Array(der.prefix(26)) + [key.y.last! & 1 == 0 ? 0x06 : 0x07] + key.x + key.y),
            ("raw point instead of SPKI", key.x963Representation),
        ]
        var offCurve = der
        offCurve[90] ^= 1
        bad.append(("point off the curve", offCurve))
        var zero = Array(der.prefix(27))
        zero += [UInt8](repeating: 0, count: 64)
        bad.append(("(0, 0)", zero))
        for (name, bytes) in bad {
            #expect(throws: CryptoError.self, "\(name)") { try P256.PublicKey(derRepresentation: bytes) }
        }
        for (name, bytes) in [("infinity", [UInt8](arrayLiteral: 0)), ("short", Array(key.x963Representation.dropLast())),
                              ("hybrid", [0x06] + Array(key.x963Representation.dropFirst())), ("no prefix", key.x + key.y)] {
            #expect(throws: CryptoError.self, "\(name)") { try P256.PublicKey(x963Representation: bytes) }
        }
    }

    /// One parsed key verifies from many threads at once (the server caches one per device); the
    /// pooled contexts must never mix up results.
    @Test func concurrentVerifiesOnOneKey() throws {
        let key = try P256.PrivateKey()
        let messages = (0..<32).map { Array("request \($0)".utf8) }
        let signatures = try messages.map { try key.signature(for: $0) }
        let publicKey = try P256.PublicKey(derRepresentation: key.publicKey.derRepresentation)
        let wrong = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<100 {
                let index = (thread * 7 + round) % messages.count
                // Every other check pairs a signature with the wrong message.
                let other = round % 2 == 0 ? index : (index + 1) % messages.count
                if publicKey.isValidSignature(signatures[index], for: messages[other]) != (other == index) {
                    wrong.withLock { $0 += 1 }
                }
            }
        }
        #expect(wrong.withLock { $0 } == 0)
    }

    @Test func jwkAndThumbprint() throws {
        // RFC 7517 appendix A.1's EC key. Its RFC 7638 thumbprint was computed independently with
        // Python's hashlib and base64 over the canonical JSON below.
        let x = try #require(Base64URL.decode("MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4"))
        let y = try #require(Base64URL.decode("4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"))
        let key = try P256.PublicKey(x963Representation: [0x04] + x + y)
        let jwk = key.jwk(kid: "1")
        #expect(jwk == "{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4\",\"y\":\"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM\",\"kid\":\"1\",\"alg\":\"ES256\",\"use\":\"sig\"}")
        let canonical = "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4\",\"y\":\"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM\"}"
        #expect(key.jwkThumbprint == Base64URL.encode(SHA256.hash(Array(canonical.utf8))))
        #expect(key.jwkThumbprint == "cn-I_WNMClehiVp51i_0VpOENW1upEerA8sEam5hn-s")
        // The default kid is the thumbprint; a kid with quotes stays valid JSON.
        #expect(try JSONValue.parse(Data(key.jwk().utf8))["kid"]?.stringValue == key.jwkThumbprint)
        #expect(try JSONValue.parse(Data(key.jwk(kid: "a\"b\\c\n").utf8))["kid"]?.stringValue == "a\"b\\c\n")
    }

    @Test func privateKeysNeverPrint() throws {
        let key = try P256.PrivateKey()
        let der = try key.pkcs8DERRepresentation().withUnsafeBytes { Array($0) }
        let scalar = Hex.encode(der.suffix(from: 36).prefix(16))  // inside the private key octet string
        var dumped = ""
        dump(key, to: &dumped)
        for shown in ["\(key)", String(reflecting: key), dumped] {
            #expect(!shown.contains(scalar) && !shown.lowercased().contains(scalar))
            #expect(shown.contains("P256.PrivateKey") || shown.contains("PrivateKey"))
        }
        #expect("\(try key.pemRepresentation())".hasPrefix("<secret: "))
    }
}

/// Runs the `openssl` command line tool; its stdout.
func runOpenSSL(_ arguments: [String]) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw CryptoError.library("openssl \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
    }
    return Array(data)
}
