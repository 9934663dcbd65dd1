import Foundation
import Testing
@testable import PulseAge
@testable import PulseCrypto

/// The C2SP CCTV age test vectors (Tests/Fixtures/cctv-age, from C2SP/CCTV age/testdata; licence in
/// its LICENSE, format in its README.md). Every vector whose identities are X25519 runs through the
/// decrypt path and must end in its `expect:` class; for `success` and `payload failure` the SHA-256
/// of the plaintext released chunk by chunk must equal `payload:`. Vectors that need a passphrase
/// (scrypt) or a post-quantum hybrid identity are skipped, one by one and counted.
@Suite struct CCTVTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/cctv-age").standardizedFileURL

    /// One vector: its header fields (a key may repeat) and the age file after the blank line.
    struct Vector {
        let name: String
        let fields: [(key: String, value: String)]
        let file: [UInt8]

        func values(_ key: String) -> [String] { fields.filter { $0.key == key }.map(\.value) }
        func value(_ key: String) -> String? { values(key).first }

        init(name: String, bytes: [UInt8]) throws {
            self.name = name
            guard let blank = bytes.indices.dropLast().first(where: { bytes[$0] == 0x0a && bytes[$0 + 1] == 0x0a }) else {
                throw VectorError("\(name): no blank line after the header")
            }
            var fields: [(String, String)] = []
            for line in bytes[..<blank].split(separator: 0x0a) {
                let text = String(decoding: line, as: UTF8.self)
                guard let colon = text.range(of: ": ") else { throw VectorError("\(name): header line \"\(text)\" is not \"key: value\"") }
                fields.append((String(text[..<colon.lowerBound]), String(text[colon.upperBound...])))
            }
            self.fields = fields
            let body = Array(bytes[(blank + 2)...])
            switch fields.first(where: { $0.0 == "compressed" })?.1 {
            case nil: file = body
            case "zlib": file = try Inflate.zlib(body)
            case let other?: throw VectorError("\(name): unknown compression \(other)")
            }
        }
    }

    struct VectorError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The result classes of the README, and how each shows in our API.
    enum Expect: String, CaseIterable {
        case success
        case noMatch = "no match"
        case hmacFailure = "HMAC failure"
        case headerFailure = "header failure"
        case payloadFailure = "payload failure"
        case armorFailure = "armor failure"

        func matches(_ error: AgeError) -> Bool {
            switch (self, error) {
            case (.noMatch, .noMatchingIdentity), (.hmacFailure, .headerMACMismatch),
                 (.headerFailure, .malformedHeader), (.headerFailure, .unsupportedVersion), (.headerFailure, .notAgeFile),
                 (.payloadFailure, .damagedPayload), (.armorFailure, .malformedArmor):
                true
            default:
                false
            }
        }
    }

    static func vectorNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { !$0.hasPrefix(".") && $0 != "README.md" && $0 != "LICENSE" }.sorted()
    }

    @Test func everyX25519AndArmorVector() throws {
        let names = try Self.vectorNames()
        #expect(names.count == 143, "the vendored set")
        var ran: [Expect: Int] = [:]
        var skipped: [String] = []
        for name in names {
            let vector = try Vector(name: name, bytes: Array(Data(contentsOf: Self.folder.appendingPathComponent(name))))
            let expectText = try #require(vector.value("expect"), "\(name): no expect")
            let expect = try #require(Expect(rawValue: expectText), "\(name): unknown expect \(expectText)")
            // Not ours: passphrase (scrypt) files and post-quantum hybrid identities.
            let identityTexts = vector.values("identity")
            if !vector.values("passphrase").isEmpty || identityTexts.contains(where: { !$0.hasPrefix("AGE-SECRET-KEY-1") }) {
                skipped.append(name)
                continue
            }
            // A vector with no identity fails before one is needed; any identity will do.
            let identities = try identityTexts.isEmpty ? [AgeIdentity.generate()] : identityTexts.map { try AgeIdentity(parsing: $0) }
            // Our decrypt detects armor by itself; it must agree with the vector's flag.
            #expect(AgeArmor.looksArmored(vector.file) == (vector.value("armored") == "yes"), "\(name): armored flag")
            let hasher = SHA256Hasher()
            var released = 0
            var failure: AgeError?
            do {
                try Age.decrypt(vector.file, identities: identities) { chunk in
                    hasher.update(chunk)
                    released += chunk.count
                }
            } catch let error as AgeError {
                failure = error
            }
            switch (expect, failure) {
            case (.success, nil):
                break
            case let (_, error?) where expect.matches(error):
                break
            default:
                Issue.record("\(name): expected \(expect.rawValue), got \(failure.map { "\($0)" } ?? "success")")
            }
            // What was released must be exactly the authenticated plaintext the vector names.
            if let payload = vector.value("payload") {
                #expect(Hex.encode(hasher.finalize()) == payload, "\(name): released \(released) bytes with another hash")
            } else {
                #expect(released == 0, "\(name): released \(released) bytes where nothing should be")
            }
            // The whole-file API agrees and releases nothing on failure.
            let whole = Result { try Age.decrypt(vector.file, identities: identities) }
            if case let .success(plaintext) = whole {
                #expect(expect == .success && SHA256.hex(plaintext) == vector.value("payload"), "\(name)")
            }
            ran[expect, default: 0] += 1
        }
        let total = ran.values.reduce(0, +)
        #expect(total + skipped.count == names.count)
        #expect(skipped.count == 45, "skipped: \(skipped)")
        #expect(skipped.allSatisfy { $0.hasPrefix("scrypt") || $0.hasPrefix("hybrid") || $0 == "armor_scrypt" || $0 == "armor_hybrid" },
                "skipped: \(skipped)")
        #expect(total == 98)
        for expect in Expect.allCases {
            #expect(ran[expect, default: 0] > 0, "no \(expect.rawValue) vector ran")
        }
    }

    @Test func inflateMatchesKnownStreams() throws {
        // zlib.compress(b"hello hello hello hello") from Python (fixed Huffman, one back-reference).
        let fixed: [UInt8] = [0x78, 0x9c, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x57, 0xc8, 0x40, 0x27, 0x01, 0x68, 0x03, 0x08, 0xb1]
        #expect(try Inflate.zlib(fixed) == Array("hello hello hello hello".utf8))
        var damaged = fixed
        damaged[damaged.count - 1] ^= 1
        #expect(throws: Inflate.Failure.self) { try Inflate.zlib(damaged) }
        #expect(throws: Inflate.Failure.self) { try Inflate.zlib(Array(fixed.dropLast(5))) }
        #expect(Inflate.adler32(Array("Wikipedia".utf8)) == 0x11e6_0398)
    }
}
