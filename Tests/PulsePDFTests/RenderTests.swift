import Foundation
import PulseTestSupport
import Testing

@testable import PulsePDF

/// Written pages against the truth: every page must render to the same pixels as the same page of
/// the whole document, and as qpdf's own pruned split of it (where that split renders the page right:
/// it loses the document's optional content settings, which a page writer must keep).
enum RenderComparison {
    static func check(_ deck: [UInt8], name: String, in folder: URL) throws {
        let document = try PDFDocument(bytes: deck, name: name), reference = try PDFDocument(bytes: deck, name: name)
        let split = try PDFTools.prunedSplit(deck, in: folder)
        #expect(split.count == document.pageCount)
        for n in 0..<document.pageCount {
            let page = try document.pageWrittenByPageWriter(n)
            #expect(try PDFDocument(bytes: page, name: "page").pageCount == 1)
            let ours = try PDFTools.render(page, in: folder)
            let original = try PDFTools.render(deck, page: n + 1, in: folder)
            #expect(ours == original, "\(name) page \(n + 1) renders differently from the page in the document")
            let pruned = try PDFTools.render(split[n], in: folder)
            #expect(ours == pruned || pruned != original, "\(name) page \(n + 1) renders differently from qpdf's pruned split")
            // qpdf's unpruned copy of the page (in process), as the packager compared against before pruning.
            let unpruned = try PDFTools.render(try reference.pageWrittenByQPDF(n), in: folder)
            #expect(ours == unpruned || unpruned != original, "\(name) page \(n + 1) renders differently from qpdf's copy")
        }
    }
}

struct RenderTests {
    @Test(arguments: ["Samples/decks/keynote.pdf", "Tests/Fixtures/pdf/links.pdf", "Tests/Fixtures/pdf/three-pages.pdf",
        "Tests/Fixtures/pdf/typst-deck.pdf"])
    func pagesRenderLikeTheDocument(_ path: String) throws {
        let bytes = Array(try Data(contentsOf: PDFTools.repository.appendingPathComponent(path)))
        let folder = try TestFolder()
        try RenderComparison.check(bytes, name: path, in: folder.url)
    }
}

/// The same comparison on real decks made by others, when `PULSE_CORPUS` names a folder of PDFs
/// (`Scripts/system/corpus` sets it to ../shared/decks; a fresh clone has none, so plain `swift test` skips it).
struct CorpusRenderTests {
    static let folder = ProcessInfo.processInfo.environment["PULSE_CORPUS"]

    @Test(.enabled(if: folder != nil, "set PULSE_CORPUS to a folder of PDF decks"))
    func everyCorpusPageRendersLikeTheDocument() throws {
        let decks = try FileManager.default.contentsOfDirectory(atPath: try #require(Self.folder)).filter { $0.hasSuffix(".pdf") }
        #expect(!decks.isEmpty)
        let workFolder = try TestFolder()
        let work = workFolder.url
        for deck in decks.sorted() {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.folder!).appendingPathComponent(deck)))
            try RenderComparison.check(bytes, name: deck, in: work)
        }
    }
}
