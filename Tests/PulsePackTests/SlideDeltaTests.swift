import Foundation
import PulseCrypto
import PulseStore
import PulseTestSupport
import Testing

@testable import PulsePack

/// End to end through `Builder`: a Typst deck (one resource dictionary shared by every page) packaged,
/// decrypted with the key table, then re-assembled by qpdf with its last page replaced.
struct SlideDeltaTests {
    static let typstDeck = Support.fixtures.appendingPathComponent("pdf/typst-deck.pdf")

    /// The plaintext of each slide of session `talk`, through the key table.
    static func slides(_ out: URL) throws -> [[UInt8]] {
        let package = PulsePackage(root: out)
        let version = try #require(try package.readIndex().sessions["talk"]).deckVersion
        let table = try package.readKeyTable(at: package.keyTableURL(sessionId: "talk", deckVersion: version))
        return try table.slides.map { slide in
            let blob = try Data(contentsOf: package.assets.url(for: slide.assetHash))
            return try AES256GCM.open(
                blob, key: Array(try #require(Data(base64Encoded: slide.keyB64))), nonce: Array(try #require(Data(base64Encoded: slide.nonceB64))))
        }
    }

    static func count(_ text: String, in bytes: [UInt8]) -> Int {
        var count = 0, rest = bytes[...]
        while let range = rest.firstRange(of: Array(text.utf8)) {
            count += 1
            rest = rest[range.upperBound...]
        }
        return count
    }

    @Test func aSlideDecryptsToItsOwnPictureOnlyAndAReassembledDeckMakesOneNewBlob() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let deck = folder.appendingPathComponent("deck.pdf")
        try FileManager.default.copyItem(at: Self.typstDeck, to: deck)
        let session = try Support.sessionFile(in: folder, deck: deck)
        let out = folder.appendingPathComponent("pkg")
        let first = try Support.build(session, out: out)
        #expect(first.sessions[0].slides == 6)
        // Pictures are on pages 2, 4 and 6, one each; every page's slide carries its own or none.
        let slides = try Self.slides(out)
        #expect(slides.map { Self.count("/Subtype /Image", in: $0) } == [0, 1, 0, 1, 0, 1])

        // Re-assembled: every object renumbered, the last page replaced by a page of another deck.
        try #require(try Support.run("/usr/bin/qpdf", [
            "--empty", "--pages", Self.typstDeck.path, "1-5", Support.keynotePDF.path, "1", "--", deck.path,
        ]) == 0)
        let second = try Support.build(session, out: out)
        #expect(second.sessions[0].newBlobs == 1)
        #expect(second.sessions[0].reusedBlobs == 5)
        #expect(Array(try Self.slides(out).prefix(5)) == Array(slides.prefix(5)))
    }
}
