import Foundation
import Testing
@testable import PulseAge

/// ASCII-armored files as `age -a` writes them, and the strictness the spec asks of the armor parser.
@Suite struct AgeArmorTests {
    @Test func weOpenAgeArmoredOutput() throws {
        try AgeTool.requireInstalled()
        let identity = try AgeIdentity.generate()
        for size in [0, 1, 47, 48, 100, AgeStream.chunkSize + 3] {
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let armored = try AgeTool.run(AgeTool.age, ["-a", "-r", identity.recipient.description], stdin: message)
            try #require(armored.status == 0, "\(armored.stderr)")
            #expect(armored.stdout.starts(with: AgeArmor.begin))
            #expect(try Age.decrypt(armored.stdout, identities: [identity]) == message, "size \(size)")
            // CRLF line ends and surrounding whitespace are accepted.
            let crlf = Array(String(decoding: armored.stdout, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8)
            #expect(try Age.decrypt(Array("\n  ".utf8) + crlf + Array(" \n\n".utf8), identities: [identity]) == message)
        }
    }

    @Test func malformedArmorIsRefused() throws {
        let identity = try AgeIdentity.generate()
        let binary = try Age.encrypt(Array(repeating: 1, count: 200), to: [identity.recipient])
        var base64 = Data(binary).base64EncodedString()
        func armor(_ body: String) -> [UInt8] {
            var lines: [String] = []
            var rest = Substring(body)
            while !rest.isEmpty { lines.append(String(rest.prefix(64))); rest = rest.dropFirst(64) }
            return Array(("-----BEGIN AGE ENCRYPTED FILE-----\n" + lines.joined(separator: "\n") + "\n-----END AGE ENCRYPTED FILE-----\n").utf8)
        }
        #expect(try Age.decrypt(armor(base64), identities: [identity]) == Array(repeating: 1, count: 200))
        let good = String(decoding: armor(base64), as: UTF8.self)
        let bad: [(String, String)] = [
            ("garbage before", "x" + good),
            ("garbage after", good + "x"),
            ("lowercase label", good.replacingOccurrences(of: "BEGIN AGE", with: "BEGIN age")),
            ("PEM header", good.replacingOccurrences(of: "FILE-----\n", with: "FILE-----\nComment: hi\n")),
            ("empty line after BEGIN", good.replacingOccurrences(of: "FILE-----\n", with: "FILE-----\n\n")),
            ("empty line before END", good.replacingOccurrences(of: "\n-----END", with: "\n\n-----END")),
            ("space at end of line", good.replacingOccurrences(of: "\n-----END", with: " \n-----END")),
            ("space at start of line", good.replacingOccurrences(of: "FILE-----\n", with: "FILE-----\n ")),
            ("short middle line", String(decoding: armor(String(base64.dropFirst(1))), as: UTF8.self)
                .replacingOccurrences(of: "FILE-----\n", with: "FILE-----\nA")),
            ("no END", String(good.prefix(good.count - 33))),
        ]
        for (name, text) in bad {
            #expect(throws: AgeError.self, "\(name)") { try Age.decrypt(Array(text.utf8), identities: [identity]) }
        }
        // Unpadded base64 (this file size always needs padding: the header length is fixed for one recipient).
        while base64.hasSuffix("=") { base64.removeLast() }
        #expect(throws: AgeError.self) { try Age.decrypt(armor(base64), identities: [identity]) }
    }
}
