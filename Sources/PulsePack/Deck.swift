import Foundation
import Synchronization
import PulseCore
import PulseImage
import PulseStore
import PulsePDF
import PulseSystem

/// The slides of a deck, in order: a PDF split into one-page PDFs, or a folder of images.
///
/// Opening a deck checks it as far as can be done cheaply (the PDF parses and has pages; every folder
/// entry is a readable image), before anything is written to the package.
struct Deck: Sendable {
    enum Source: Sendable {
        /// Held once, shared by every reader's qpdf document.
        case pdf(PDFBytes)
        case images([URL])
    }

    let url: URL
    let source: Source
    let slideCount: Int
    /// Files of an image folder left out as well-known junk (`.DS_Store`, `Thumbs.db`, …).
    var ignored: [String] = []
    /// The document opened to check the PDF, handed to the first reader instead of parsing it again.
    private let checked: CheckedDocument?

    /// PDF slides are CPU work: one thread per core. Image slides spend much of their time reading and
    /// flushing files: two threads per core keep the cores busy while others wait on the disk.
    var defaultWorkers: Int {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        if case .pdf = source { return cores }
        return 2 * cores
    }

    /// How many of `threads` read slides (see `SlidePipeline`): every thread for images; one in two for a
    /// PDF, where each reader parses the whole document once more.
    func readers(forThreads threads: Int) -> Int {
        if case .pdf = source { return (threads + 1) / 2 }
        return threads
    }

    var kind: DeckKind {
        if case .pdf = source { .pdf } else { .images }
    }

    static func open(_ url: URL) throws -> Deck {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw InputError(file: url.path, "deck not found")
        }
        return isFolder.boolValue ? try openFolder(url) : try openPDF(url)
    }

    private static func openPDF(_ url: URL) throws -> Deck {
        let bytes: PDFBytes
        do throws(PDFReadError) {
            bytes = try PDFBytes(mappingFile: url.path, changedWhileRead: "pulse-pack: error: \(url.path): changed while it was being read (rewritten in place?); the package is as it was")
        } catch {
            throw InputError(file: url.path, "cannot read (\(error))")
        }
        guard bytes.prefix(1024).firstRange(of: Array("%PDF-".utf8)) != nil else {
            throw InputError(file: url.path, "not a PDF (no %PDF- header)")
        }
        let document: PDFDocument
        do { document = try PDFDocument(shared: bytes, name: url.path) } catch {
            throw InputError(file: url.path, "\(error)")
        }
        guard document.pageCount > 0 else { throw InputError(file: url.path, "the PDF has no pages") }
        return Deck(url: url, source: .pdf(bytes), slideCount: document.pageCount, checked: CheckedDocument(document))
    }

    /// An image folder: every file but well-known junk is a slide, in natural order (`slide2` before
    /// `slide10`, case ignored: as file managers show them). Each is checked before anything is written:
    /// not too large to read (stat), its format from its bytes matching its name, its pixel size sane.
    private static func openFolder(_ url: URL) throws -> Deck {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: url.path) } catch {
            throw InputError(file: url.path, "cannot list the folder (\(Errno.describe(error)))")
        }
        let ignored = names.filter(isJunk).naturallySorted()
        let files = names.filter { !isJunk($0) }.naturallySorted().map { url.appendingPathComponent($0) }
        guard !files.isEmpty else { throw InputError(file: url.path, "the image folder has no slides") }
        for file in files { try checkSlideFile(file) }
        var deck = Deck(url: url, source: .images(files), slideCount: files.count, checked: nil)
        deck.ignored = ignored
        return deck
    }

    /// Files that file managers and editors leave in folders, never slides.
    static func isJunk(_ name: String) -> Bool {
        [".DS_Store", "Thumbs.db", "ehthumbs.db", "desktop.ini", "Desktop.ini", ".directory", ".localized", ".gitkeep"].contains(name)
            || name.hasPrefix("._") || name.hasSuffix("~") || name.hasPrefix(".~lock.")
    }

    /// The slide file's name, size and header: checked from its first bytes only.
    private static func checkSlideFile(_ file: URL) throws {
        let info: FileInfo
        do throws(PathError) { info = try FileInfo.of(file.path) } catch {
            throw InputError(file: file.path, "cannot read (\(error.errno))")
        }
        if info.isFolder { throw InputError(file: file.path, "is a folder, expected a slide image") }
        if info.size > ImageLimits.maxFileBytes {
            throw InputError(file: file.path, "is \(Format.bytes(info.size)), over the \(Format.bytes(ImageLimits.maxFileBytes)) an image may have")
        }
        let head = try readHead(file, count: 4096)
        guard let format = ImageFormat.sniff(head) else {
            let hint = ImageLimits.format(forExtension: file.lastPathComponent) == nil ? " (only images belong in a slide folder)" : ""
            throw InputError(file: file.path, "not a PNG, JPEG or WebP image" + hint)
        }
        if let problem = ImageLimits.nameProblem(format: format, name: file.lastPathComponent) { throw InputError(file: file.path, problem) }
        do {
            // A JPEG whose frame header lies past the first bytes is checked when the slide is read.
            if let header = try ImageHeader.read(head, complete: head.count < 4096), let problem = ImageLimits.sizeProblem(header) {
                throw InputError(file: file.path, problem)
            }
        } catch let error as ImageError { throw InputError(file: file.path, "\(error)") }
    }

    /// The first bytes of a slide file (enough for its header, most of the time).
    private static func readHead(_ file: URL, count: Int) throws -> [UInt8] {
        do throws(PathError) { return try File.open(file.path).read(upTo: count, at: 0) } catch {
            throw InputError(file: file.path, "cannot read (\(error.errno))")
        }
    }

    /// The slide files in order, by name (an image folder), or nil (a PDF).
    var slideFileNames: [String]? {
        if case let .images(files) = source { return files.map(\.lastPathComponent) }
        return nil
    }

    /// Reads slides on one thread; a PDF deck opens its own qpdf document per reader.
    func makeReader() throws -> SlideReader {
        switch source {
        case let .pdf(bytes): .pdf(try checked?.take() ?? openAgain(bytes), url)
        case let .images(files): .images(files)
        }
    }

    /// The PDF opened once more, for another reader, from the bytes `open` checked.
    private func openAgain(_ bytes: PDFBytes) throws -> PDFDocument {
        do { return try PDFDocument(shared: bytes, name: url.path) } catch { throw InputError(file: url.path, "\(error)") }
    }
}

/// A parsed document that one thread may take over (qpdf documents are not shared between threads).
private final class CheckedDocument: Sendable {
    private let document: Mutex<PDFDocument?>

    init(_ document: sending PDFDocument) { self.document = Mutex(document) }

    func take() -> PDFDocument? { document.withLock { $0.take() } }
}

/// Produces the plaintext of slide `n`.
enum SlideReader {
    case pdf(PDFDocument, URL)
    case images([URL])

    /// Slide `n`: a page split from the PDF, or the image file's bytes read into `buffer` (the thread's
    /// own, kept from slide to slide: no allocation and no page faults per slide). The image bytes
    /// returned share the buffer's storage, so they are used up before the next read into it.
    func slide(_ n: Int, buffer: inout [UInt8]) throws -> any ContiguousBytes {
        switch self {
        case let .pdf(document, url):
            do { return try document.page(n) } catch { throw InputError(file: url.path, "page \(n + 1): \(error)") }
        case let .images(files):
            let bytes = try Self.read(files[n], into: &buffer)
            do {
                _ = try ImageFormat.validate(bytes, checksums: false)
                if let header = try ImageHeader.read(bytes), let problem = ImageLimits.sizeProblem(header) {
                    throw InputError(file: files[n].path, problem)
                }
            } catch let error as ImageError { throw InputError(file: files[n].path, "\(error)") }
            return bytes
        }
    }

    /// An image file's bytes, in `buffer`; no larger than an image may be (the file may have grown since
    /// `Deck.open` checked it).
    private static func read(_ file: URL, into buffer: inout [UInt8]) throws -> ArraySlice<UInt8> {
        let count: Int
        do throws(PathError) {
            count = try File.open(file.path).readAll(into: &buffer, limit: ImageLimits.maxFileBytes)
        } catch {
            throw InputError(file: file.path, error.errno == .noSuchFile ? "no such file" : "cannot read (\(error.errno))")
        }
        if count > ImageLimits.maxFileBytes {
            throw InputError(file: file.path, "is over the \(Format.bytes(ImageLimits.maxFileBytes)) an image may have")
        }
        return buffer[..<count]
    }
}

/// File names in natural order, as file managers show them: digit runs compare as numbers (`slide2`
/// before `slide10`) and letters without regard to case (`slide1` before `Slide10`); names equal but for
/// case or zero padding fall back to their bytes, so the order is total.
func naturalOrder(_ a: String, _ b: String) -> Bool { NaturalKey(a) < NaturalKey(b) }

extension Sequence<String> {
    /// Sorted in natural order, each name folded once (not once per comparison: sorting 250 slide
    /// names character by character cost 80 M instructions, 2% of a build).
    func naturallySorted() -> [String] {
        map { (NaturalKey($0), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}

/// A name's bytes with case folded, for natural order; its own bytes break ties.
struct NaturalKey: Comparable {
    let folded: [UInt8]
    let original: [UInt8]

    init(_ name: String) {
        original = Array(name.utf8)
        folded = original.allSatisfy { $0 < 0x80 } ? original.map { $0 &- 65 < 26 ? $0 | 0x20 : $0 } : Array(name.lowercased().utf8)
    }

    static func < (a: NaturalKey, b: NaturalKey) -> Bool {
        let x = a.folded, y = b.folded
        var i = 0, j = 0
        while i < x.count, j < y.count {
            if isDigit(x[i]), isDigit(y[j]) {
                var endI = i, endJ = j
                while endI < x.count, isDigit(x[endI]) { endI += 1 }
                while endJ < y.count, isDigit(y[endJ]) { endJ += 1 }
                var startI = i, startJ = j
                while startI < endI - 1, x[startI] == UInt8(ascii: "0") { startI += 1 }
                while startJ < endJ - 1, y[startJ] == UInt8(ascii: "0") { startJ += 1 }
                if endI - startI != endJ - startJ { return endI - startI < endJ - startJ }
                if !x[startI..<endI].elementsEqual(y[startJ..<endJ]) { return x[startI..<endI].lexicographicallyPrecedes(y[startJ..<endJ]) }
                i = endI
                j = endJ
            } else {
                if x[i] != y[j] { return x[i] < y[j] }
                i += 1
                j += 1
            }
        }
        if (i < x.count) != (j < y.count) { return j < y.count }
        return a.original.lexicographicallyPrecedes(b.original)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
}

/// What a session's deck is: a PDF split into pages, or a folder of images (one per slide).
public enum DeckKind: String, Sendable {
    case pdf, images
}
