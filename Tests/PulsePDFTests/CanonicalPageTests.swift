import Foundation
import PulseCrypto
import PulseTestSupport
import Testing

@testable import PulsePDF

/// A page's bytes depend on the page's own objects only: re-saving, re-assembling, deleting, moving or
/// adding pages around it leaves it as it was, so its slide keeps its blob and phones download nothing
/// again for it.
struct CanonicalPageTests {
    /// Each page's SHA-256 (hex, shortened): what a slide's blob follows from.
    static func pages(_ pdf: [UInt8]) throws -> [String] {
        let document = try PDFDocument(bytes: pdf, name: "deck.pdf")
        return try (0..<document.pageCount).map { String(SHA256.hex(try document.page($0)).prefix(16)) }
    }

    /// `qpdf --empty --pages deck.pdf 1-5 deck.pdf 2 -- new.pdf`: every object renumbered, streams
    /// rewritten as qpdf writes them, only the last page replaced (by a copy of page 2).
    @Test func reassembledDeckChangesOnlyTheReplacedPage() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let deck = SharedResourcesDeck.make()
        let input = try PDFTools.write(deck, "deck.pdf", in: folder)
        let resaved = try PDFTools.qpdf(deck, ["--empty", "--pages", input.path, "1-5", input.path, "2", "--", "OUT"], in: folder)
        let before = try Self.pages(deck), after = try Self.pages(resaved)
        #expect(after.count == 6)
        for n in 0..<5 { #expect(after[n] == before[n], "page \(n + 1) changed") }
        #expect(after[5] != before[5])
        #expect(after[5] == before[1], "a copy of page 2 is written as page 2 is")
    }

    @Test func renumberedDeckGivesTheSamePages() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        for deck in [SharedResourcesDeck.make(), try PDFTools.fixture("three-pages.pdf")] {
            let before = try Self.pages(deck)
            // Objects renumbered and packed into object streams, a cross-reference stream instead of a table.
            let packed = try PDFTools.qpdf(deck, ["--object-streams=generate", "IN", "OUT"], in: folder)
            #expect(try Self.pages(packed) == before)
            // Objects renumbered in another order (qpdf's linearized layout puts the first page first).
            let linearized = try PDFTools.qpdf(deck, ["--linearize", "IN", "OUT"], in: folder)
            #expect(try Self.pages(linearized) == before)
        }
    }

    @Test func deletingPagesChangesNoOtherPage() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let deck = SharedResourcesDeck.make()
        let before = try Self.pages(deck)
        let after = try Self.pages(try PDFTools.qpdf(deck, ["IN", "--pages", ".", "1,3-4,6", "--", "OUT"], in: folder))
        #expect(after == [before[0], before[2], before[3], before[5]])
    }

    @Test func reorderingPagesChangesNoPage() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let deck = SharedResourcesDeck.make()
        let before = try Self.pages(deck)
        let after = try Self.pages(try PDFTools.qpdf(deck, ["IN", "--pages", ".", "z-1", "--", "OUT"], in: folder))
        #expect(after == before.reversed())
    }

    @Test func appendingPagesChangesNoOtherPage() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let deck = SharedResourcesDeck.make()
        let other = PDFTools.fixtures.appendingPathComponent("three-pages.pdf").path
        let before = try Self.pages(deck), otherPages = try Self.pages(try PDFTools.fixture("three-pages.pdf"))
        let after = try Self.pages(try PDFTools.qpdf(deck, ["IN", "--pages", ".", other, "--", "OUT"], in: folder))
        #expect(after == before + otherPages)
    }

    /// No trace of the source's object numbers: every generation is 0 and objects are numbered from 1
    /// without gaps, in one cross-reference section.
    @Test func numbersComeFromThePageAlone() throws {
        let document = try PDFDocument(bytes: SharedResourcesDeck.make(), name: "deck.pdf")
        for page in try (0..<document.pageCount).map({ try document.page($0) }) {
            let text = String(decoding: page, as: UTF8.self)
            let headers = text.matches(of: /(?m)^(\d+) (\d+) obj$/).map { (Int($0.1)!, Int($0.2)!) }
            #expect(headers.map(\.0) == Array(1...headers.count))
            #expect(headers.allSatisfy { $0.1 == 0 })
            #expect(text.contains("xref\n0 \(headers.count + 1)\n"))
        }
    }

    /// Forms that draw each other (broken, but possible): a page is written the same whichever pages
    /// the document wrote before it (the pipeline's threads take pages in any order).
    @Test func cyclicFormsAreWrittenTheSameInAnyPageOrder() throws {
        var pdf = RawPDF()
        pdf.add(1, "<</Type/Catalog/Pages 2 0 R>>")
        pdf.add(2, "<</Type/Pages/Kids[3 0 R 4 0 R]/Count 2/MediaBox[0 0 100 100]>>")
        let fonts = "/Font<</F1 10 0 R/F2 11 0 R>>"
        pdf.add(3, "<</Type/Page/Parent 2 0 R/Contents 5 0 R/Resources<</XObject<</A 7 0 R>>\(fonts)>>>>")
        pdf.add(4, "<</Type/Page/Parent 2 0 R/Contents 6 0 R/Resources<</XObject<</B 8 0 R>>\(fonts)>>>>")
        pdf.addStream(5, text: "/A Do")
        pdf.addStream(6, text: "/B Do")
        pdf.addStream(7, "/Subtype/Form/BBox[0 0 1 1]/Resources<</XObject<</B 8 0 R>>>>", text: "/B Do BT /F1 1 Tf (a) Tj ET")
        pdf.addStream(8, "/Subtype/Form/BBox[0 0 1 1]/Resources<</XObject<</A 7 0 R>>>>", text: "/A Do BT /F2 1 Tf (b) Tj ET")
        pdf.add(10, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
        pdf.add(11, "<</Type/Font/Subtype/Type1/BaseFont/Courier>>")
        let deck = pdf.bytes(root: 1)
        let forwards = try PDFDocument(bytes: deck, name: "cycle.pdf"), backwards = try PDFDocument(bytes: deck, name: "cycle.pdf")
        let first = try [forwards.page(0), forwards.page(1)].map(SHA256.hex)
        let second = try [backwards.page(1), backwards.page(0)].map(SHA256.hex)
        #expect(first == [second[1], second[0]])
    }
}
