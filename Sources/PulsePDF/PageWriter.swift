import CQPDF
import PulseCrypto

/// Writes one page of a parsed document as a standalone PDF whose bytes depend only on what the page
/// draws.
///
/// Isolation (`PageIsolation` lists what is kept and dropped): a slide's blob is readable as soon as its
/// key is released, so it carries only the resources its own content streams name, and nothing reached
/// through another page, the page tree or the catalog.
///
/// Canonical form: objects are numbered by a breadth-first walk from the page (1 is the catalog, 2 the
/// page tree, 3 the page, then each object in the order its first reference is written: dictionary keys
/// sorted bytewise, array items in order), every generation is 0, and the `/ID` is derived from the
/// written content. No source object number, generation or cross-reference layout survives, so a page
/// whose own objects are unchanged is written byte for byte the same after the deck is re-saved,
/// re-assembled, or has pages deleted, moved or added around it: its slide keeps its blob.
///
/// Speed: each source object is serialized once per document into an `ObjectTemplate` whose references
/// are filled in per page, so the fonts and images every page shares are not serialized again.
final class PageWriter {
    let objects: QPDFObjects
    private let version: [UInt8]
    /// Every page of the document, found through the page tree (not by /Type, which a page may lack).
    private let pages: Set<ObjectID>
    private(set) var currentPage: ObjectID = 0
    /// What each referenced object is, decided once per document (each qpdf C call costs about 1000
    /// instructions, and every page refers to the same fonts and images).
    private var targets: [ObjectID: Target] = [:]
    /// Serialized objects, per document: none depends on the page being written. The cache holds at most
    /// `templateBudget` bytes, the least recently used dropped first: keeping every object kept every
    /// image of a deck with an image per page (280 MiB for 2,000 pages of 40 KB), while dropping what one
    /// page drew serialized (and recompressed) each shared font and image twice, 20% of a 300-page build.
    var templates: [Reference: ObjectTemplate] = [:]
    /// When each kept template was last used (`templateClock`), and the bytes they hold.
    var templateUses: [Reference: Int] = [:]
    var templateClock = 0
    var templateBytes = 0
    static let templateBudget = 16 << 20
    /// The resources each form, pattern or Type 3 font uses (see `PageWriter+Resources`).
    var usages: [ObjectID: HolderUsage] = [:]
    var analysing: Set<ObjectID> = []
    /// Set when an analysis met a cycle of forms: its results depend on where it started and are not cached.
    var cycleMet = false
    /// What each content stream uses.
    var scans: [ObjectID: ContentUse] = [:]
    /// The holder of content each resource is (a form, pattern, Type 3 font, soft-mask group), or nil.
    var childHolders: [ObjectID: ObjectID?] = [:]
    /// Type 3 fonts cut down to the glyphs pages show, by the glyph names kept (nil: all).
    var type3Templates: [ObjectID: [Set<[UInt8]>?: ObjectTemplate]] = [:]
    /// Each Type 3 font's encoding: code → glyph name (nil: not a complete /Differences encoding).
    var type3Encodings: [ObjectID: [UInt8: [UInt8]]?] = [:]
    /// The Type 3 glyphs the page being written shows.
    var pageGlyphs = GlyphUse()
    let inflater = Inflater()
    /// Stream data read to decode content, kept until the stream's template is made (on the same page).
    var storedData: [ObjectID: [UInt8]] = [:]
    /// Optional content groups met while serializing: a page that reaches one gets `/OCProperties`.
    var optionalContentGroups: Set<ObjectID> = []
    /// Optional content groups the document's default configuration hides.
    private let hiddenGroups: Set<ObjectID>

    enum Target {
        /// A page: only the page being written may be referred to.
        case page
        /// The page tree or the catalog: never written.
        case structure
        /// A Type 3 font: written with the glyphs each page shows.
        case type3Font
        case other
    }

    init(qpdf: qpdf_data?, pageCount: Int) {
        objects = QPDFObjects(qpdf: qpdf)
        // The version the document declares, but at least 1.7: a re-save that raises it (as tools do)
        // must not change every page. 1.x viewers read 1.7; a 2.0 document stays 2.0.
        let declared = qpdf_get_pdf_version(qpdf).map { String(cString: $0) } ?? ""
        version = Array((declared.hasPrefix("1.") || declared.isEmpty ? "1.7" : declared).utf8)
        // Resources, MediaBox, CropBox and Rotate inherited from the page tree move onto each page.
        qpdf_push_inherited_attributes_to_page(qpdf)
        let objects = objects
        pages = Set((0..<pageCount).map { objects.id(of: qpdf_get_page_n(qpdf, $0)) })
        hiddenGroups = Self.hiddenOptionalContentGroups(objects)
        qpdf_oh_release_all(qpdf)
    }

    /// Page `index` as a standalone one-page PDF.
    func write(page index: Int) throws -> [UInt8] {
        defer {
            qpdf_oh_release_all(objects.qpdf)
            storedData.removeAll(keepingCapacity: true)
        }
        let page = qpdf_get_page_n(objects.qpdf, index)
        guard objects.isDictionary(page), objects.isIndirect(page) else {
            throw PDFError.damaged("page \(index + 1) is not a page dictionary")
        }
        currentPage = objects.id(of: page)
        let pageTemplate = try template(ofPage: page)
        // Breadth-first from the page: a number for each object when its first reference is met.
        var numbers: [Reference: Int] = [:]
        var order: [ObjectTemplate] = [pageTemplate]
        var references: [Reference] = [.page(currentPage)]
        var next = 0
        while next < order.count {
            for slot in order[next].slots where numbers[slot.reference] == nil {
                if case .page = slot.reference { continue }
                numbers[slot.reference] = Self.firstObjectNumber + order.count - 1
                order.append(try template(slot.reference))
                references.append(slot.reference)
            }
            next += 1
        }
        numbers[.page(currentPage)] = Self.pageNumber
        let groups = references.compactMap { reference -> Int? in
            if case let .object(id) = reference, optionalContentGroups.contains(id) { return numbers[reference] }
            return nil
        }
        let hidden = references.compactMap { reference -> Int? in
            if case let .object(id) = reference, optionalContentGroups.contains(id), hiddenGroups.contains(id) { return numbers[reference] }
            return nil
        }
        return assemble(order, numbers: numbers, catalog: Self.catalog(groups: groups, hidden: hidden))
    }

    static let catalogNumber = 1, pageTreeNumber = 2, pageNumber = 3, firstObjectNumber = 4

    private static func catalog(groups: [Int], hidden: [Int]) -> [UInt8] {
        var text = "<<"
        if !groups.isEmpty {
            // The groups this page reaches, hidden as the document hides them by default.
            text += "/OCProperties<</D<<" + (hidden.isEmpty ? "" : "/OFF[\(hidden.map { "\($0) 0 R" }.joined(separator: " "))]")
            text += ">>/OCGs[\(groups.map { "\($0) 0 R" }.joined(separator: " "))]>>"
        }
        return Array((text + "/Pages \(pageTreeNumber) 0 R/Type/Catalog>>").utf8)
    }

    /// The groups that the default configuration (`/OCProperties /D`) turns off.
    private static func hiddenOptionalContentGroups(_ objects: QPDFObjects) -> Set<ObjectID> {
        let properties = objects.value(qpdf_get_root(objects.qpdf), "/OCProperties")
        guard objects.isDictionary(properties) else { return [] }
        let configuration = objects.value(properties, "/D")
        guard objects.isDictionary(configuration) else { return [] }
        func ids(_ array: qpdf_oh) -> Set<ObjectID> {
            Set(objects.items(array).filter { objects.isIndirect($0) }.map { objects.id(of: $0) })
        }
        if objects.isName(objects.value(configuration, "/BaseState"), "/OFF") {
            return ids(objects.value(properties, "/OCGs")).subtracting(ids(objects.value(configuration, "/ON")))
        }
        return ids(objects.value(configuration, "/OFF"))
    }

    /// What a reference to `id` is: another page, the document's structure, or an object to copy.
    func target(_ id: ObjectID, _ value: qpdf_oh) -> Target {
        if let known = targets[id] { return known }
        let target: Target
        if pages.contains(id) || qpdf_oh_is_dictionary_of_type(objects.qpdf, value, "/Page", "") != QPDF_FALSE {
            target = .page
        } else if qpdf_oh_is_dictionary_of_type(objects.qpdf, value, "/Pages", "") != QPDF_FALSE
            || qpdf_oh_is_dictionary_of_type(objects.qpdf, value, "/Catalog", "") != QPDF_FALSE
        {
            target = .structure
        } else if objects.isDictionary(value), objects.isName(objects.value(value, "/Subtype"), "/Type3"),
            objects.isDictionary(objects.value(value, "/CharProcs"))
        {
            target = .type3Font
        } else {
            target = .other
        }
        targets[id] = target
        return target
    }

    // MARK: - File

    /// Header, catalog, page tree, the page and its objects in number order, cross-reference table,
    /// trailer with a content-derived /ID.
    ///
    /// The /ID is the SHA-256 (first 16 bytes) of the version, the catalog and, for the page and each
    /// object in number order, its template's digest and the numbers filled into it: everything else in
    /// the file follows from these, so it names the content as a hash of the whole file would, while a
    /// shared object's digest is computed once per document instead of once per page.
    private func assemble(_ order: [ObjectTemplate], numbers: [Reference: Int], catalog: [UInt8]) -> [UInt8] {
        let identity = SHA256Hasher()
        identity.update(version)
        identity.update(catalog)
        var out = Array("%PDF-".utf8) + version + [0x0a, 0x25, 0xe2, 0xe3, 0xcf, 0xd3, 0x0a]
        // One allocation for the whole file: bodies plus per-object framing and the xref (20 bytes a line).
        out.reserveCapacity(order.reduce(512 + catalog.count) { $0 + $1.bytes.count + $1.slots.count * 8 + 48 })
        var offsets: [Int] = []
        offsets.reserveCapacity(order.count + 2)
        func begin(_ number: Int) {
            offsets.append(out.count)
            Self.appendDecimal(number, to: &out)
            out.append(contentsOf: " 0 obj\n".utf8)
        }
        let end = Array("\nendobj\n".utf8)
        begin(Self.catalogNumber)
        out += catalog + end
        begin(Self.pageTreeNumber)
        out += Array("<</Count 1/Kids[\(Self.pageNumber) 0 R]/Type/Pages>>".utf8) + end
        var filled: [UInt8] = []
        for (index, template) in order.enumerated() {
            begin(Self.pageNumber + index)
            filled.removeAll(keepingCapacity: true)
            var start = 0
            for slot in template.slots {
                out += template.bytes[start..<slot.offset]
                start = slot.offset
                let number = number(of: slot.reference, numbers)
                if number == 0 {
                    out.append(contentsOf: "null".utf8)
                } else {
                    Self.appendDecimal(number, to: &out)
                    out.append(contentsOf: " 0 R".utf8)
                }
                withUnsafeBytes(of: UInt32(number).littleEndian) { filled += $0 }
            }
            out += template.bytes[start...]
            out += end
            identity.update(template.digest)
            identity.update(filled)
        }
        let xref = out.count
        out += Array("xref\n0 \(offsets.count + 1)\n0000000000 65535 f \n".utf8)
        for offset in offsets {
            Self.appendDecimal(offset, width: 10, to: &out)
            out.append(contentsOf: " 00000 n \n".utf8)
        }
        let identifier = Hex.encode(identity.finalize().prefix(16))
        out += Array("trailer\n<</ID[<\(identifier)><\(identifier)>]/Root \(Self.catalogNumber) 0 R/Size \(offsets.count + 1)>>\nstartxref\n\(xref)\n%%EOF\n".utf8)
        return out
    }

    /// The number a reference gets on this page; 0 for `null` (another page).
    private func number(of reference: Reference, _ numbers: [Reference: Int]) -> Int {
        if case let .page(id) = reference { return id == currentPage ? Self.pageNumber : 0 }
        return numbers[reference]!
    }

    /// `value` (not negative) in decimal.
    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value >= 10 { appendDecimal(value / 10, to: &out) }
        out.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// `value` in decimal, zero-padded to `width` digits (the fixed-width fields of an xref entry).
    private static func appendDecimal(_ value: Int, width: Int, to out: inout [UInt8]) {
        var digits = [UInt8](repeating: UInt8(ascii: "0"), count: width)
        var rest = value, index = width - 1
        while rest > 0, index >= 0 {
            digits[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            index -= 1
        }
        out += digits
    }
}
