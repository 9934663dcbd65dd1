import Foundation
import Testing
@testable import PulseAge
@testable import PulseCrypto

/// The malformed cases c2sp.org/age requires a decrypter to refuse, made by editing valid files.
@Suite struct AgeFormatTests {
    let identity: AgeIdentity
    let recipient: AgeRecipient

    init() throws {
        identity = try AgeIdentity.generate()
        recipient = identity.recipient
    }

    /// A header (any stanzas, correct MAC) and a payload built chunk by chunk with explicit flags.
    private func file(
        stanzas extra: [AgeStanza] = [], chunks: [(plaintext: [UInt8], last: Bool)], fileKey: SecretBytes? = nil
    ) throws -> [UInt8] {
        let fileKey = try fileKey ?? SecretBytes.random(count: 16)
        let stanzas = extra + [try recipient.wrap(fileKey: fileKey)]
        let nonce = try SecureRandom.bytes(16)
        let key = try AgeStream.payloadKey(fileKey: fileKey, nonce: nonce)
        var out = try AgeHeader.encode(stanzas: stanzas, fileKey: fileKey) + nonce
        for (counter, chunk) in chunks.enumerated() {
            out += try ChaCha20Poly1305.seal(
                chunk.plaintext, key: key, nonce: AgeStream.chunkNonce(counter: UInt64(counter), last: chunk.last))
        }
        return out
    }

    /// Header lines of `file` (without their LF) and the payload after them.
    private func split(_ file: [UInt8]) throws -> (lines: [String], payload: [UInt8]) {
        let header = try AgeHeader.parse(file)
        let text = String(decoding: file[..<header.payloadOffset].dropLast(), as: UTF8.self)
        return (text.components(separatedBy: "\n"), Array(file[header.payloadOffset...]))
    }

    private func join(_ lines: [String], _ payload: [UInt8]) -> [UInt8] {
        Array((lines.joined(separator: "\n") + "\n").utf8) + payload
    }

    private func decrypt(_ file: [UInt8]) throws -> [UInt8] {
        try Age.decrypt(file, identities: [identity])
    }

    private func isMalformed(_ file: [UInt8]) -> Bool {
        do { _ = try decrypt(file); return false } catch let error as AgeError {
            if case .malformedHeader = error { return true }
            return false
        } catch { return false }
    }

    private func isDamagedPayload(_ file: [UInt8]) -> Bool {
        do { _ = try decrypt(file); return false } catch let error as AgeError {
            if case .damagedPayload = error { return true }
            return false
        } catch { return false }
    }

    private static let chunk = AgeStream.chunkSize

    // MARK: files that must open

    @Test func roundTripsAcrossChunkBoundaries() throws {
        for size in [0, 1, Self.chunk - 1, Self.chunk, Self.chunk + 1, 2 * Self.chunk, 2 * Self.chunk + 1] {
            let message = [UInt8]((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let sealed = try Age.encrypt(message, to: [recipient])
            let chunks = max(1, (size + Self.chunk - 1) / Self.chunk)
            #expect(sealed.count == (try AgeHeader.parse(sealed).payloadOffset) + 16 + size + 16 * chunks, "size \(size)")
            #expect(try decrypt(sealed) == message, "size \(size)")
        }
    }

    @Test func unknownStanzasAreIgnored() throws {
        let grease = AgeStanza(arguments: ["example.com/grease", "a", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"], body: Array(repeating: 7, count: 100))
        let empty = AgeStanza(arguments: ["x25519"], body: []) // lowercase: not ours, not X25519
        let sealed = try file(stanzas: [grease, empty], chunks: [(Array("hi".utf8), true)])
        #expect(try decrypt(sealed) == Array("hi".utf8))
    }

    @Test func secondIdentityIsTried() throws {
        let other = try AgeIdentity.generate()
        let sealed = try Age.encrypt([9], to: [recipient])
        #expect(try Age.decrypt(sealed, identities: [other, identity]) == [9])
    }

    @Test func fullFinalChunkIsValid() throws {
        let sealed = try file(chunks: [(Array(repeating: 1, count: Self.chunk), false), (Array(repeating: 2, count: Self.chunk), true)])
        #expect(try decrypt(sealed).count == 2 * Self.chunk)
    }

    // MARK: not an age file, other versions

    @Test func notAgeFiles() {
        for text in ["", "hello", "{\"sessionId\": \"keynote\"}", "age-encryption.org", "\u{0}\u{1}"] {
            #expect(throws: AgeError.notAgeFile, "\(text)") { try decrypt(Array(text.utf8)) }
        }
        #expect(throws: AgeError.unsupportedVersion("v2")) { try decrypt(Array("age-encryption.org/v2\n-> X\n\n--- x\n".utf8)) }
        #expect(throws: AgeError.self) { try decrypt(Array("-----BEGIN AGE ENCRYPTED FILE-----\nYWdl\n".utf8)) }
    }

    // MARK: header grammar

    @Test func headerGrammarViolations() throws {
        let (lines, payload) = try split(try file(chunks: [([1, 2, 3], true)]))
        // lines: version, "-> X25519 <share>", body, "--- <mac>"
        #expect(lines.count == 4)
        var cases: [String: [String]] = [:]
        cases["stanza without arguments"] = [lines[0], "-> ", lines[2], lines[3]]
        cases["stanza line without space"] = [lines[0], "->X25519 " + lines[1].dropFirst(10), lines[2], lines[3]]
        cases["empty argument"] = [lines[0], lines[1].replacingOccurrences(of: "X25519 ", with: "X25519  "), lines[2], lines[3]]
        cases["non-printable argument"] = [lines[0], lines[1] + " caf\u{e9}", lines[2], lines[3]]
        cases["spurious CR"] = [lines[0], lines[1] + "\r", lines[2], lines[3]]
        cases["padding in body"] = [lines[0], lines[1], lines[2] + "=", lines[3]]
        cases["bad line start"] = [lines[0], "=> X25519", lines[2], lines[3]]
        cases["missing body"] = [lines[0], lines[1], lines[3]]
        cases["two short body lines"] = [lines[0], lines[1], lines[2], "AAAA", lines[3]]
        cases["no stanzas"] = [lines[0], lines[3]]
        cases["MAC no space"] = [lines[0], lines[1], lines[2], "---" + lines[3].dropFirst(4)]
        cases["MAC extra space"] = [lines[0], lines[1], lines[2], "---  " + lines[3].dropFirst(4)]
        cases["MAC trailing space"] = [lines[0], lines[1], lines[2], lines[3] + " "]
        cases["MAC truncated"] = [lines[0], lines[1], lines[2], String(lines[3].dropLast())]
        cases["MAC missing"] = [lines[0], lines[1], lines[2], "---"]
        cases["MAC garbage"] = [lines[0], lines[1], lines[2], "--- " + String(repeating: "!", count: 43)]
        cases["CRLF version line"] = [lines[0] + "\r", lines[1], lines[2], lines[3]]
        for (name, edited) in cases {
            #expect(isMalformed(join(edited, payload)) || (try? decrypt(join(edited, payload))) == nil, "\(name)")
            #expect(throws: AgeError.self, "\(name)") { try decrypt(join(edited, payload)) }
        }
        // Cases that reach stanza checks must say "malformed header", not a later error.
        for name in ["stanza without arguments", "empty argument", "non-printable argument", "spurious CR",
                     "padding in body", "missing body", "two short body lines", "no stanzas", "MAC no space",
                     "MAC extra space", "MAC trailing space", "MAC truncated", "MAC garbage", "bad line start"] {
            #expect(isMalformed(join(cases[name]!, payload)), "\(name)")
        }
    }

    @Test func nonCanonicalBase64() throws {
        let (lines, payload) = try split(try file(chunks: [([1], true)]))
        // Flip an unused low bit of the last character: same bytes, non-canonical text.
        func flipLast(_ text: String) -> String {
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
            let last = alphabet.firstIndex(of: text.last!)!
            return String(text.dropLast()) + String(alphabet[last ^ 1])
        }
        #expect(isMalformed(join([lines[0], flipLast(lines[1]), lines[2], lines[3]], payload)), "share")
        #expect(isMalformed(join([lines[0], lines[1], flipLast(lines[2]), lines[3]], payload)), "body")
        #expect(isMalformed(join([lines[0], lines[1], lines[2], flipLast(lines[3])], payload)), "MAC")
    }

    @Test func x25519StanzaRules() throws {
        let fileKey = try SecretBytes.random(count: 16)
        let good = try recipient.wrap(fileKey: fileKey)
        var extra = good; extra.arguments.append("extra")
        var missing = good; missing.arguments.removeLast()
        var shortShare = good; shortShare.arguments[1] = AgeBase64.encode([UInt8](repeating: 9, count: 31))
        var longShare = good; longShare.arguments[1] = AgeBase64.encode([UInt8](repeating: 9, count: 33))
        var longBody = good; longBody.body.append(0)
        var shortBody = good; shortBody.body.removeLast()
        var lowOrder = good; lowOrder.arguments[1] = AgeBase64.encode([UInt8](repeating: 0, count: 32))
        for (name, stanza) in [("extra argument", extra), ("missing share", missing), ("short share", shortShare),
                               ("long share", longShare), ("long body", longBody), ("short body", shortBody),
                               ("low-order share", lowOrder)] {
            let header = try AgeHeader.encode(stanzas: [stanza], fileKey: fileKey)
            let sealed = try header + AgeStream.encrypt([1], fileKey: fileKey)
            #expect(isMalformed(sealed), "\(name)")
        }
    }

    @Test func scryptStanzas() throws {
        let fileKey = try SecretBytes.random(count: 16)
        let scrypt = AgeStanza(arguments: ["scrypt", AgeBase64.encode([UInt8](repeating: 1, count: 16)), "18"], body: Array(repeating: 0, count: 32))
        let alone = try AgeHeader.encode(stanzas: [scrypt], fileKey: fileKey) + AgeStream.encrypt([1], fileKey: fileKey)
        #expect(throws: AgeError.unsupported("passphrase-encrypted (scrypt) age files are not supported: seal to a recipient")) {
            try decrypt(alone)
        }
        let mixed = try AgeHeader.encode(stanzas: [recipient.wrap(fileKey: fileKey), scrypt], fileKey: fileKey)
            + AgeStream.encrypt([1], fileKey: fileKey)
        #expect(isMalformed(mixed))
    }

    // MARK: keys and MAC

    @Test func wrongIdentityAndDamagedStanza() throws {
        let sealed = try Age.encrypt([1, 2, 3], to: [recipient])
        #expect(throws: AgeError.noMatchingIdentity) { try Age.decrypt(sealed, identities: [AgeIdentity.generate()]) }
        var (lines, payload) = try split(sealed)
        var body = AgeBase64.decode(lines[2])!
        body[0] ^= 1
        lines[2] = AgeBase64.encode(body)
        #expect(throws: AgeError.noMatchingIdentity) { try decrypt(join(lines, payload)) }
    }

    @Test func headerMACMismatch() throws {
        var (lines, payload) = try split(try Age.encrypt([1, 2, 3], to: [recipient]))
        var mac = AgeBase64.decode(lines[3].dropFirst(4).utf8)!
        mac[5] ^= 0x80
        lines[3] = "--- " + AgeBase64.encode(mac)
        #expect(throws: AgeError.headerMACMismatch) { try decrypt(join(lines, payload)) }
        // An extra (ignored) stanza added by an attacker changes the MAC input.
        let (original, payload2) = try split(try Age.encrypt([1, 2, 3], to: [recipient]))
        let injected = [original[0], "-> example.com/x", "", original[1], original[2], original[3]]
        #expect(throws: AgeError.headerMACMismatch) { try decrypt(join(injected, payload2)) }
    }

    // MARK: payload

    @Test func payloadTruncationAndTrailingData() throws {
        let two = try Age.encrypt(Array(repeating: 5, count: Self.chunk + 10), to: [recipient])
        let offset = try AgeHeader.parse(two).payloadOffset
        #expect(isDamagedPayload(Array(two.dropLast())), "one byte short")
        #expect(isDamagedPayload(Array(two.dropLast(26))), "final chunk gone")
        #expect(isMalformed(Array(two.prefix(offset))), "no nonce")  // CCTV stream_no_nonce: a header failure
        #expect(isMalformed(Array(two.prefix(offset + 10))), "short nonce")
        #expect(isDamagedPayload(Array(two.prefix(offset + 16))), "no chunks")
        #expect(isDamagedPayload(Array(two.prefix(offset + 16 + 15))), "short chunk")
        #expect(isDamagedPayload(two + [0]), "one trailing byte")
        #expect(isDamagedPayload(two + Array(repeating: 0, count: 100_000)), "long trailing data")
        let one = try Age.encrypt([1, 2, 3], to: [recipient])
        #expect(isDamagedPayload(one + one.suffix(19)), "trailing copy of the final chunk")
    }

    @Test func chunkFlagRules() throws {
        let full = [UInt8](repeating: 3, count: Self.chunk)
        let cases: [(String, [(plaintext: [UInt8], last: Bool)])] = [
            ("no final flag", [([1], false)]),
            ("no final flag, full", [(full, false)]),
            ("no final flag, two chunks", [(full, false), ([1], false)]),
            ("two final chunks", [(full, true), ([1], true)]),
            ("empty final chunk after a full one", [(full, false), ([], true)]),
            ("short first chunk", [([1], false), ([1], true)]),
        ]
        for (name, chunks) in cases {
            #expect(isDamagedPayload(try file(chunks: chunks)), "\(name)")
        }
        #expect(try decrypt(try file(chunks: [([], true)])) == [], "empty payload")
    }

    @Test func everyFlippedByteIsCaught() throws {
        let sealed = try Age.encrypt(Array("{\"slides\":[]}".utf8), to: [recipient])
        for index in sealed.indices {
            var damaged = sealed
            damaged[index] ^= 0x04
            #expect(throws: AgeError.self, "byte \(index)") { try decrypt(damaged) }
        }
    }
}
