import CQPDF
import Glibc
import PulseCrypto

/// Writes one page of a parsed document as a standalone PDF, much faster than a qpdf copy-and-write
/// per page: objects keep their numbers from the source, so the serialized bytes of objects that every
/// page shares (fonts, images) are made once per document and reused.
///
/// Page isolation is the rule that matters: a slide's blob is readable as soon as its key is released,
/// so it must carry nothing of another page. A reference to any page other than this one, and to the
/// page tree or the catalog, is written as `null`; the walk never enters another page (links,
/// annotations' `/P`, beads and outline destinations all stop there).
final class PageWriter {
    private typealias ObjectID = Int64

    /// A serialized object body, its SHA-256 and the objects it refers to.
    private struct Serialized {
        var body: [UInt8]
        var digest: [UInt8]
        var references: [ObjectID]
    }

    private let qpdf: qpdf_data?
    private let version: [UInt8]
    /// Objects whose bytes do not depend on the page being written.
    private var shared: [ObjectID: Serialized] = [:]
    private var currentPage: ObjectID = 0
    /// Every page of the document, found through the page tree (not by /Type, which a page may lack).
    private let pages: Set<ObjectID>
    /// What each referenced object is, decided once per document (each qpdf C call costs about 1000
    /// instructions, and every page refers to the same fonts and images).
    private var targets: [ObjectID: Target] = [:]

    private enum Target {
        /// A page: only the page being written may be referred to.
        case page
        /// The page tree or the catalog: never written.
        case structure
        case other
    }

    init(qpdf: qpdf_data?, pageCount: Int) {
        self.qpdf = qpdf
        let text = qpdf_get_pdf_version(qpdf).map { String(cString: $0) } ?? "1.4"
        version = Array((text.isEmpty ? "1.4" : text).utf8)
        // Resources, MediaBox, CropBox and Rotate inherited from the page tree move onto each page.
        qpdf_push_inherited_attributes_to_page(qpdf)
        pages = Set((0..<pageCount).map { index in
            let page = qpdf_get_page_n(qpdf, index)
            return Self.id(qpdf_oh_get_object_id(qpdf, page), qpdf_oh_get_generation(qpdf, page))
        })
        qpdf_oh_release_all(qpdf)
    }

    /// Page `index` as a standalone one-page PDF.
    func write(page index: Int) throws -> [UInt8] {
        defer { qpdf_oh_release_all(qpdf) }
        let page = qpdf_get_page_n(qpdf, index)
        guard qpdf_oh_is_dictionary(qpdf, page) != QPDF_FALSE, qpdf_oh_is_indirect(qpdf, page) != QPDF_FALSE else {
            throw PDFError.damaged("page \(index + 1) is not a page dictionary")
        }
        currentPage = Self.id(qpdf_oh_get_object_id(qpdf, page), qpdf_oh_get_generation(qpdf, page))

        // The page dictionary without /Parent; the new page tree node is added once numbers are known.
        var pageBody: [UInt8] = []
        var references: [ObjectID] = []
        var pageDependent = false
        try writeDictionary(page, into: &pageBody, references: &references, pageDependent: &pageDependent, skipping: "/Parent")

        // Every object the page reaches, outside other pages.
        var objects: [ObjectID: [UInt8]] = [:]
        var digests: [ObjectID: [UInt8]] = [:]
        var queue = references
        while let id = queue.popLast() {
            guard objects[id] == nil, id != currentPage else { continue }
            let object = try serialize(id)
            objects[id] = object.body
            digests[id] = object.digest
            queue += object.references
        }
        let highest = Int(max(objects.keys.max() ?? 0, currentPage) >> 16)
        let pagesNumber = highest + 1, catalogNumber = highest + 2
        pageBody.removeLast(2)  // ">>"
        pageBody += Array("/Parent \(pagesNumber) 0 R>>".utf8)
        objects[currentPage] = pageBody
        let pageReference = "\(currentPage >> 16) \(currentPage & 0xffff) R"
        objects[Self.id(Int32(pagesNumber), 0)] = Array("<</Type/Pages/Kids[\(pageReference)]/Count 1>>".utf8)
        objects[Self.id(Int32(catalogNumber), 0)] = Array("<</Type/Catalog/Pages \(pagesNumber) 0 R>>".utf8)
        for id in [currentPage, Self.id(Int32(pagesNumber), 0), Self.id(Int32(catalogNumber), 0)] {
            digests[id] = SHA256.hash(objects[id]!)
        }
        return assemble(objects, digests: digests, size: catalogNumber + 1, root: catalogNumber)
    }

    // MARK: - Objects

    private static func id(_ number: Int32, _ generation: Int32) -> ObjectID { Int64(number) << 16 | Int64(generation & 0xffff) }

    /// An object's bytes, from the shared cache when it does not depend on the page.
    private func serialize(_ id: ObjectID) throws -> Serialized {
        if let cached = shared[id] { return cached }
        let handle = qpdf_get_object_by_id(qpdf, Int32(id >> 16), Int32(id & 0xffff))
        var body: [UInt8] = []
        var references: [ObjectID] = []
        var pageDependent = false
        if qpdf_oh_is_stream(qpdf, handle) != QPDF_FALSE {
            var data: UnsafeMutablePointer<UInt8>?
            var length = 0
            guard qpdf_oh_get_stream_data(qpdf, handle, qpdf_dl_none, nil, &data, &length) & QPDF_ERRORS == 0 else {
                throw PDFError.damaged(takeError() ?? "cannot read stream \(id >> 16)")
            }
            defer { free(data) }
            try writeDictionary(
                qpdf_oh_get_dict(qpdf, handle), into: &body, references: &references, pageDependent: &pageDependent,
                skipping: "/Length")
            body.removeLast(2)
            body += Array("/Length \(length)>>\nstream\n".utf8)
            if length > 0 { body += UnsafeBufferPointer(start: data, count: length) }
            body += Array("\nendstream".utf8)
        } else {
            try writeValue(handle, direct: true, into: &body, references: &references, pageDependent: &pageDependent)
        }
        let object = Serialized(body: body, digest: SHA256.hash(body), references: references)
        if !pageDependent { shared[id] = object }
        return object
    }

    /// A value; an indirect one becomes a reference (or `null` for another page, the page tree, the catalog).
    private func writeValue(
        _ value: qpdf_oh, direct: Bool = false, into out: inout [UInt8], references: inout [ObjectID], pageDependent: inout Bool
    ) throws {
        if !direct, qpdf_oh_is_indirect(qpdf, value) != QPDF_FALSE {
            let id = Self.id(qpdf_oh_get_object_id(qpdf, value), qpdf_oh_get_generation(qpdf, value))
            switch target(id, value) {
            case .page:
                pageDependent = true
                if id == currentPage { Self.appendReference(id, to: &out) } else { out.append(contentsOf: "null".utf8) }
            case .structure:
                out.append(contentsOf: "null".utf8)
            case .other:
                Self.appendReference(id, to: &out)
                references.append(id)
            }
            return
        }
        switch qpdf_oh_get_type_code(qpdf, value) {
        case ot_array:
            out.append(UInt8(ascii: "["))
            for index in 0..<qpdf_oh_get_array_n_items(qpdf, value) {
                if index > 0 { out.append(UInt8(ascii: " ")) }
                try writeValue(qpdf_oh_get_array_item(qpdf, value, index), into: &out, references: &references, pageDependent: &pageDependent)
            }
            out.append(UInt8(ascii: "]"))
        case ot_dictionary:
            try writeDictionary(value, into: &out, references: &references, pageDependent: &pageDependent)
        case ot_stream:
            throw PDFError.damaged("a direct stream")
        default:
            guard let text = qpdf_oh_unparse_binary(qpdf, value) else { throw PDFError.damaged(takeError() ?? "cannot write a value") }
            let count = qpdf_get_last_string_length(qpdf)
            text.withMemoryRebound(to: UInt8.self, capacity: count) { out += UnsafeBufferPointer(start: $0, count: count) }
        }
    }

    private func target(_ id: ObjectID, _ value: qpdf_oh) -> Target {
        if let known = targets[id] { return known }
        let target: Target
        if pages.contains(id) || qpdf_oh_is_dictionary_of_type(qpdf, value, "/Page", "") != QPDF_FALSE {
            target = .page
        } else if qpdf_oh_is_dictionary_of_type(qpdf, value, "/Pages", "") != QPDF_FALSE
            || qpdf_oh_is_dictionary_of_type(qpdf, value, "/Catalog", "") != QPDF_FALSE
        {
            target = .structure
        } else {
            target = .other
        }
        targets[id] = target
        return target
    }

    /// `12 0 R`
    private static func appendReference(_ id: ObjectID, to out: inout [UInt8]) {
        appendDecimal(Int(id >> 16), to: &out)
        out.append(UInt8(ascii: " "))
        appendDecimal(Int(id & 0xffff), to: &out)
        out.append(contentsOf: " R".utf8)
    }

    private func writeDictionary(
        _ dictionary: qpdf_oh, into out: inout [UInt8], references: inout [ObjectID], pageDependent: inout Bool,
        skipping skipped: String? = nil
    ) throws {
        // The key iterator is one per document: collect the keys before descending into the values.
        // Keys stay raw bytes: a PDF name need not be UTF-8.
        var keys: [[CChar]] = []
        qpdf_oh_begin_dict_key_iter(qpdf, dictionary)
        while qpdf_oh_dict_more_keys(qpdf) != QPDF_FALSE {
            if let key = qpdf_oh_dict_next_key(qpdf) {
                keys.append(Array(UnsafeBufferPointer(start: key, count: strlen(key) + 1)))  // with its NUL
            }
        }
        let skippedKey = skipped.map { Array($0.utf8CString) }
        out.append(contentsOf: "<<".utf8)
        for key in keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) where key != skippedKey {
            Self.writeName(key.dropLast().map { UInt8(bitPattern: $0) }, into: &out)
            out.append(UInt8(ascii: " "))
            let value = key.withUnsafeBufferPointer { qpdf_oh_get_key(qpdf, dictionary, $0.baseAddress) }
            try writeValue(value, into: &out, references: &references, pageDependent: &pageDependent)
        }
        out.append(contentsOf: ">>".utf8)
    }

    /// A name as PDF syntax: `#xx` for delimiters, `#` and bytes outside the printable range.
    private static func writeName(_ name: [UInt8], into out: inout [UInt8]) {
        for (position, byte) in name.enumerated() {
            if position == 0 && byte == UInt8(ascii: "/") {
                out.append(byte)
            } else if needsEscapeInName(byte) {
                out.append(UInt8(ascii: "#"))
                appendHex(byte, to: &out)
            } else {
                out.append(byte)
            }
        }
    }

    private static func needsEscapeInName(_ byte: UInt8) -> Bool {
        switch byte {
        case 0..<33, 127...255: true
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "["), UInt8(ascii: "]"),
            UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "/"), UInt8(ascii: "%"), UInt8(ascii: "#"):
            true
        default: false
        }
    }

    private static func appendHex(_ byte: UInt8, to out: inout [UInt8]) {
        let digits: StaticString = "0123456789abcdef"
        out.append(digits.utf8Start[Int(byte >> 4)])
        out.append(digits.utf8Start[Int(byte & 0xf)])
    }

    private func takeError() -> String? {
        guard qpdf_has_error(qpdf) != QPDF_FALSE, let error = qpdf_get_error(qpdf) else { return nil }
        return qpdf_get_error_message_detail(qpdf, error).map { String(cString: $0) }
    }

    // MARK: - File

    /// Header, objects in number order, cross-reference table, trailer with a content-derived /ID.
    ///
    /// The /ID is the SHA-256 (first 16 bytes) of the version and, for each object in number order, its
    /// number, generation and the SHA-256 of its bytes: everything else in the file follows from these,
    /// so it names the content as a hash of the whole file would, while a shared object's digest is
    /// computed once per document instead of once per page.
    private func assemble(_ objects: [ObjectID: [UInt8]], digests: [ObjectID: [UInt8]], size: Int, root: Int) -> [UInt8] {
        let identity = SHA256Hasher()
        identity.update(version)
        var out = Array("%PDF-".utf8) + version + [0x0a, 0x25, 0xe2, 0xe3, 0xcf, 0xd3, 0x0a]
        // One allocation for the whole file: bodies plus per-object framing and the xref (20 bytes a line).
        out.reserveCapacity(objects.values.reduce(256) { $0 + $1.count + 64 })
        var offsets: [(number: Int, generation: Int, offset: Int)] = []
        for id in objects.keys.sorted() {
            let number = Int(id >> 16), generation = Int(id & 0xffff)
            offsets.append((number, generation, out.count))
            var label: [UInt8] = [0x0a]
            Self.appendReference(id, to: &label)
            label.removeLast()  // "n g R" -> "n g "
            identity.update(label + digests[id]!)
            label.removeFirst()
            out.append(contentsOf: label)
            out.append(contentsOf: "obj\n".utf8)
            out.append(contentsOf: objects[id]!)
            out.append(contentsOf: "\nendobj\n".utf8)
        }
        let xref = out.count
        out += Array("xref\n0 1\n0000000000 65535 f \n".utf8)
        var start = 0
        while start < offsets.count {
            var end = start
            while end + 1 < offsets.count, offsets[end + 1].number == offsets[end].number + 1 { end += 1 }
            out += Array("\(offsets[start].number) \(end - start + 1)\n".utf8)
            for entry in offsets[start...end] {
                Self.appendDecimal(entry.offset, width: 10, to: &out)
                out.append(UInt8(ascii: " "))
                Self.appendDecimal(entry.generation, width: 5, to: &out)
                out += [UInt8(ascii: " "), UInt8(ascii: "n"), UInt8(ascii: " "), 0x0a]
            }
            start = end + 1
        }
        let identifier = Hex.encode(identity.finalize().prefix(16))
        out += Array("trailer\n<</Size \(size)/Root \(root) 0 R/ID[<\(identifier)><\(identifier)>]>>\nstartxref\n\(xref)\n%%EOF\n".utf8)
        return out
    }

    /// `value` (not negative) in decimal.
    private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
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
