import Foundation
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseAge

/// Interoperability with the reference implementation, both ways.
@Suite struct AgeInteropTests {
    static let sizes = [0, 1, 100, AgeStream.chunkSize - 1, AgeStream.chunkSize, AgeStream.chunkSize + 1, 3 * AgeStream.chunkSize + 17]

    private func plaintext(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// An identity made by age-keygen, and its recipient as age-keygen -y prints it.
    private func keygen(_ folder: TestFolder, _ name: String) throws -> (file: String, recipient: String) {
        let file = folder.path(name)
        let made = try AgeTool.run(AgeTool.ageKeygen, ["-o", file])
        try #require(made.status == 0, "age-keygen failed: \(made.stderr)")
        let shown = try AgeTool.run(AgeTool.ageKeygen, ["-y", file])
        try #require(shown.status == 0, "age-keygen -y failed: \(shown.stderr)")
        return (file, String(decoding: shown.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func ageOpensWhatWeSeal() throws {
        try AgeTool.requireInstalled()
        let folder = try TestFolder()
        let (identityFile, recipient) = try keygen(folder, "id.txt")
        for size in Self.sizes {
            let message = plaintext(size)
            let sealed = try Age.encrypt(message, to: [recipient])
            let opened = try AgeTool.run(AgeTool.age, ["-d", "-i", identityFile], stdin: sealed)
            #expect(opened.status == 0, "size \(size): age -d failed: \(opened.stderr)")
            #expect(opened.stdout == message, "size \(size)")
        }
    }

    @Test func weOpenWhatAgeSeals() throws {
        try AgeTool.requireInstalled()
        let folder = try TestFolder()
        let (identityFile, recipient) = try keygen(folder, "id.txt")
        let identityText = try String(contentsOfFile: identityFile, encoding: .utf8)
        for size in Self.sizes {
            let message = plaintext(size)
            let sealed = try AgeTool.run(AgeTool.age, ["-r", recipient], stdin: message)
            try #require(sealed.status == 0, "age -r failed: \(sealed.stderr)")
            #expect(try Age.decrypt(sealed.stdout, identities: [identityText]) == message, "size \(size)")
        }
    }

    @Test func recipientDerivationMatchesAgeKeygen() throws {
        try AgeTool.requireInstalled()
        let folder = try TestFolder()
        let (identityFile, recipient) = try keygen(folder, "id.txt")
        let identities = try AgeIdentity.parseFile(String(contentsOfFile: identityFile, encoding: .utf8))
        #expect(identities.count == 1)
        #expect(identities[0].recipient.description == recipient)
        #expect(try AgeRecipient(parsing: recipient).description == recipient)
    }

    @Test func ageUsesOurIdentityFile() throws {
        try AgeTool.requireInstalled()
        let folder = try TestFolder()
        let identity = try AgeIdentity.generate()
        let file = folder.path("ours.txt")
        try identity.fileContents().write(toFile: file, atomically: true, encoding: .utf8)
        let shown = try AgeTool.run(AgeTool.ageKeygen, ["-y", file])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(String(decoding: shown.stdout, as: UTF8.self) == "\(identity.recipient)\n")
        let message = Array("{\"sessionId\":\"keynote\"}\n".utf8)
        let sealed = try AgeTool.run(AgeTool.age, ["-r", identity.recipient.description], stdin: message)
        try #require(sealed.status == 0, "\(sealed.stderr)")
        #expect(try Age.decrypt(sealed.stdout, identities: [identity]) == message)
        let opened = try AgeTool.run(AgeTool.age, ["-d", "-i", file], stdin: try Age.encrypt(message, to: [identity.recipient]))
        #expect(opened.status == 0 && opened.stdout == message, "\(opened.stderr)")
    }

    @Test func multipleRecipientsBothWays() throws {
        try AgeTool.requireInstalled()
        let folder = try TestFolder()
        let first = try keygen(folder, "a.txt")
        let second = try keygen(folder, "b.txt")
        let message = plaintext(1000)
        let ours = try Age.encrypt(message, to: [first.recipient, second.recipient])
        for identityFile in [first.file, second.file] {
            let opened = try AgeTool.run(AgeTool.age, ["-d", "-i", identityFile], stdin: ours)
            #expect(opened.status == 0 && opened.stdout == message, "\(opened.stderr)")
        }
        let theirs = try AgeTool.run(AgeTool.age, ["-r", first.recipient, "-r", second.recipient], stdin: message)
        try #require(theirs.status == 0)
        let secondText = try String(contentsOfFile: second.file, encoding: .utf8)
        #expect(try Age.decrypt(theirs.stdout, identities: [secondText]) == message)
    }

    @Test func wrongIdentityIsRefusedBothWays() throws {
        try AgeTool.requireInstalled()
        let folder = try TestFolder()
        let right = try keygen(folder, "right.txt")
        let wrong = try keygen(folder, "wrong.txt")
        let theirs = try AgeTool.run(AgeTool.age, ["-r", right.recipient], stdin: [1, 2, 3])
        try #require(theirs.status == 0)
        let wrongText = try String(contentsOfFile: wrong.file, encoding: .utf8)
        #expect(throws: AgeError.noMatchingIdentity) { try Age.decrypt(theirs.stdout, identities: [wrongText]) }
        let ours = try Age.encrypt([1, 2, 3], to: [right.recipient])
        let opened = try AgeTool.run(AgeTool.age, ["-d", "-i", wrong.file], stdin: ours)
        #expect(opened.status != 0)
    }
}
