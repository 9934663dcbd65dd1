import Foundation
import PulseTestSupport
import Testing

@testable import PulsePDF

/// A slide is readable as soon as its key is released: it must hold what its page draws and nothing of
/// any other page.
struct PageIsolationTests {
    @Test func eachSlideHoldsOnlyWhatItsPageDraws() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let deck = SharedResourcesDeck.make()
        let document = try PDFDocument(bytes: deck, name: "shared-resources.pdf")
        try #require(document.pageCount == SharedResourcesDeck.pageCount)
        let reference = try PDFTools.prunedSplit(deck, in: folder)
        for n in 1...document.pageCount {
            let page = try document.page(n - 1)
            let ours = try Inventory(page, in: folder), qpdfs = try Inventory(reference[n - 1], in: folder)
            let expected = SharedResourcesDeck.expected[n]!
            #expect(ours.images == Set(expected.images.map { Data(SharedResourcesDeck.image($0)).base64EncodedString() }), "page \(n)")
            #expect(ours.fonts == expected.fonts, "page \(n)")
            #expect(ours.images.isSubset(of: qpdfs.images), "page \(n) holds an image qpdf's pruned split does not")
            #expect(ours.fonts.isSubset(of: qpdfs.fonts), "page \(n) holds a font qpdf's pruned split does not")

            let text = try PDFTools.expanded(page, in: folder)
            #expect(PDFTools.contains(text, "PAGE-\(n)-TEXT"))
            for other in 1...document.pageCount where other != n {
                #expect(!PDFTools.contains(text, "PAGE-\(other)-TEXT"), "page \(n) carries page \(other)'s text")
            }
            #expect(PDFTools.contains(text, "FORM-B-TEXT") == (n == 2), "page \(n)")
            #expect(PDFTools.contains(text, "https://example.com/slides") == (n == 4), "page \(n): the web link stays on its page")
            for secret in SharedResourcesDeck.neverWritten {
                #expect(!PDFTools.contains(text, secret), "page \(n) carries \(secret)")
            }
        }
    }

    /// Pruning changes nothing that is drawn: each slide renders as its page does in the whole deck
    /// (also the content of the group the deck hides, which qpdf's split would show).
    @Test func eachSlideRendersLikeItsPageInTheDeck() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let deck = SharedResourcesDeck.make()
        let document = try PDFDocument(bytes: deck, name: "shared-resources.pdf")
        for n in 1...document.pageCount {
            let slide = try PDFTools.render(try document.page(n - 1), in: folder)
            #expect(slide == (try PDFTools.render(deck, page: n, in: folder)), "page \(n) renders differently")
        }
    }

    /// Links and outlines pointing at other pages must not drag those pages' content into a slide, also
    /// when a page lacks its /Type.
    @Test(arguments: ["links.pdf", "links-untyped.pdf"])
    func linksToOtherPagesCarryNothingOfThem(_ fixture: String) throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let document = try PDFDocument(bytes: try PDFTools.fixture(fixture), name: fixture)
        #expect(document.pageCount == 3)
        let first = try PDFTools.expanded(try document.page(0), in: folder)
        let second = try PDFTools.expanded(try document.page(1), in: folder)
        let third = try PDFTools.expanded(try document.page(2), in: folder)
        #expect(PDFTools.contains(first, "PAGE-ONE-TEXT"))
        #expect(PDFTools.contains(first, "/Caf#e9"), "a non-UTF-8 name is copied byte for byte")
        #expect(!PDFTools.contains(first, "SECRET-PAGE-TWO") && !PDFTools.contains(first, "SECRET-PAGE-THREE"))
        #expect(PDFTools.contains(second, "SECRET-PAGE-TWO") && !PDFTools.contains(second, "SECRET-PAGE-THREE"))
        #expect(!PDFTools.contains(second, "PAGE-ONE-TEXT"))
        #expect(PDFTools.contains(third, "SECRET-PAGE-THREE") && !PDFTools.contains(third, "SECRET-PAGE-TWO"))
    }

    /// Content that cannot be decoded to its end draws what a viewer can decode: its page is written
    /// (not refused) with the resources that part names, and nothing else.
    @Test func damagedContentKeepsWhatItsReadablePartNames() throws {
        var pdf = RawPDF()
        pdf.add(1, "<</Type/Catalog/Pages 2 0 R>>")
        pdf.add(2, "<</Type/Pages/Kids[3 0 R 4 0 R 8 0 R]/Count 3/MediaBox[0 0 100 100]/Resources 5 0 R>>")
        pdf.add(5, "<</XObject<</Im1 11 0 R/Im2 12 0 R/Im3 13 0 R>>>>")
        for n in 1...3 {
            pdf.addStream(10 + n, "/Subtype/Image/Width 2/Height 2/ColorSpace/DeviceGray/BitsPerComponent 8", data: SharedResourcesDeck.image(n))
        }
        // Page 1: a wrong checksum after the whole content; page 2: cut after its first image; page 3: not
        // zlib data at all (viewers draw nothing).
        var checksummed = Zlib.stored(Array("q 50 0 0 50 0 0 cm /Im1 Do Q".utf8))
        checksummed[checksummed.count - 1] ^= 0xff
        let cut = Array(Zlib.stored(Array("q 50 0 0 50 0 0 cm /Im2 Do Q q 50 0 0 50 50 50 cm /Im3 Do Q".utf8)).prefix(40))
        pdf.add(3, "<</Type/Page/Parent 2 0 R/Contents 6 0 R>>")
        pdf.add(4, "<</Type/Page/Parent 2 0 R/Contents 7 0 R>>")
        pdf.addStream(6, "/Filter/FlateDecode", data: checksummed)
        pdf.addStream(7, "/Filter/FlateDecode", data: cut)
        pdf.add(8, "<</Type/Page/Parent 2 0 R/Contents 9 0 R>>")
        pdf.addStream(9, "/Filter/FlateDecode", text: "/Im3 Do, not deflated")
        let temporary = try TestFolder()
        let folder = temporary.url
        let document = try PDFDocument(bytes: pdf.bytes(root: 1), name: "damaged.pdf")
        let image = { (n: Int) in Data(SharedResourcesDeck.image(n)).base64EncodedString() }
        #expect(try Inventory(try document.page(0), in: folder).images == [image(1)])
        #expect(try Inventory(try document.page(1), in: folder).images == [image(2)])
        #expect(try Inventory(try document.page(2), in: folder).images == [])
    }
}
