import Foundation
import PulseCommandLine
import PulseCore
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseAge
@testable import PulsePack
@testable import PulsePackCLI
@testable import PulseCrypto

/// The caps of `AgeLimits`: over them is one clear error, at them everything still works, and a key
/// table for a 1,000-slide deck is far inside them.
@Suite struct AgeLimitsTests {
    let identity: AgeIdentity

    init() throws {
        identity = try AgeIdentity.generate()
    }

    private func isTooLarge(_ body: () throws -> Void) -> Bool {
        do { try body(); return false } catch let error as AgeError {
            if case .tooLarge = error { return true }
            return false
        } catch { return false }
    }

    @Test func aThousandSlideKeyTableFitsEasily() throws {
        let slides = (0..<1000).map { n in
            KeyTable.Slide(n: n, assetHash: Digest(hex: String(repeating: "ab", count: 32))!,
                           keyB64: Data((0..<32).map { UInt8(truncatingIfNeeded: $0 + n) }).base64EncodedString(),
                           nonceB64: Data((0..<12).map { UInt8(truncatingIfNeeded: $0 * n) }).base64EncodedString())
        }
        let table = KeyTable(sessionId: "keynote", deckVersion: 3, packageVersion: String(repeating: "cd", count: 32), slides: slides)
        let sealed = try SealedKeyTable.seal(table, to: [identity.recipient])
        #expect(sealed.count < AgeLimits.maxFileByteCount / 50, "\(sealed.count) bytes")
        #expect(try SealedKeyTable.open(sealed, identities: [identity]) == table)
    }

    @Test func fileSizeCap() throws {
        // Just under the cap: seals and opens.
        let header = try AgeHeader.encode(stanzas: [identity.recipient.wrap(fileKey: SecretBytes.random(count: 16))],
                                          fileKey: SecretBytes.random(count: 16)).count
        var plaintextCount = AgeLimits.maxFileByteCount - header - 16 - 512 * 16
        while header + AgeStream.sealedSize(plaintextByteCount: plaintextCount) > AgeLimits.maxFileByteCount { plaintextCount -= 1 }
        let plaintext = [UInt8](repeating: 0x42, count: plaintextCount)
        let sealed = try Age.encrypt(plaintext, to: [identity.recipient])
        #expect(sealed.count <= AgeLimits.maxFileByteCount && sealed.count > AgeLimits.maxFileByteCount - 64)
        #expect(try Age.decrypt(sealed, identities: [identity]) == plaintext)
        // Over it: refused on both sides, before any parsing or decryption.
        #expect(isTooLarge { _ = try Age.encrypt(plaintext + [UInt8](repeating: 0, count: 64), to: [identity.recipient]) })
        #expect(isTooLarge { _ = try Age.decrypt(sealed + [UInt8](repeating: 0, count: 64), identities: [identity]) })
        let junk = Array("age-encryption.org/v1\n".utf8) + [UInt8](repeating: 0x41, count: AgeLimits.maxFileByteCount)
        #expect(throws: AgeError.tooLarge("the file is \(junk.count) bytes; age files here are at most 32 MiB (33554432 bytes)")) {
            try Age.decrypt(junk, identities: [identity])
        }
    }

    @Test func stanzaCountCap() throws {
        let fileKey = try SecretBytes.random(count: 16)
        let grease = AgeStanza(arguments: ["example.com/grease"], body: [1, 2, 3])
        func file(extra: Int) throws -> [UInt8] {
            let stanzas = [AgeStanza](repeating: grease, count: extra) + [try identity.recipient.wrap(fileKey: fileKey)]
            return try AgeHeader.encode(stanzas: stanzas, fileKey: fileKey) + AgeStream.encrypt([7], fileKey: fileKey)
        }
        #expect(try Age.decrypt(file(extra: AgeLimits.maxStanzaCount - 1), identities: [identity]) == [7])
        #expect(throws: AgeError.tooLarge("the header has more than 64 recipient stanzas")) {
            try Age.decrypt(file(extra: AgeLimits.maxStanzaCount), identities: [identity])
        }
        let recipients = [AgeRecipient](repeating: identity.recipient, count: AgeLimits.maxStanzaCount + 1)
        #expect(isTooLarge { _ = try Age.encrypt([1], to: recipients) })
        #expect(try Age.decrypt(Age.encrypt([1], to: Array(recipients.prefix(AgeLimits.maxStanzaCount))), identities: [identity]) == [1])
    }

    @Test func identityFileCap() throws {
        let line = identity.secretKeyString + "\n"
        let padded = String(repeating: "# comment\n", count: (AgeLimits.maxIdentityFileByteCount - line.utf8.count) / 10) + line
        #expect(padded.utf8.count <= AgeLimits.maxIdentityFileByteCount)
        #expect(try AgeIdentity.parseFile(padded).map(\.recipient) == [identity.recipient])
        let over = String(repeating: "#", count: AgeLimits.maxIdentityFileByteCount) + "\n" + line
        #expect(isTooLarge { _ = try AgeIdentity.parseFile(over) })
    }

    @Test func keysOpenRefusesOversizedFilesWithOneLine() throws {
        let folder = try TestFolder()
        let identityFile = folder.path("id.txt")
        try identity.fileContents().write(toFile: identityFile, atomically: true, encoding: .utf8)
        let big = folder.path("big.age")
        try Data(count: AgeLimits.maxFileByteCount + 1).write(to: URL(fileURLWithPath: big))
        let bigIdentity = folder.path("big-id.txt")
        try (String(repeating: "#", count: AgeLimits.maxIdentityFileByteCount) + "\n" + identity.secretKeyString + "\n")
            .write(toFile: bigIdentity, atomically: true, encoding: .utf8)
        let sealed = folder.path("t.age")
        try Data(Age.encrypt([1], to: [identity.recipient])).write(to: URL(fileURLWithPath: sealed))
        for (arguments, limit) in [(["open", big, "-i", identityFile, "-o", "-"], "32 MiB"),
                                   (["open", sealed, "-i", bigIdentity, "-o", "-"], "64 KiB")] {
            let captured = KeysCommandTests.Captured()
            let code = CommandLineTool.main(
                KeysCommand.make(console: captured.console), arguments: arguments, errorHandler: { _ in 99 },
                print: { line in captured.out.withLock { $0.append(line) } },
                printError: { line in captured.err.withLock { $0.append(line) } })
            let errors = captured.err.withLock { $0 }
            #expect(code == ExitCode.dataError, "\(arguments)")
            #expect(errors.count == 1 && errors[0].contains(limit), "\(errors)")
            #expect(captured.bytes.withLock { $0 }.isEmpty)
        }
    }
}
