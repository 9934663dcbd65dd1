import CQPDF

/// Serializing source objects into templates, through the filters of `PageIsolation`.
extension PageWriter {
    /// The template of a referenced object, made once per document.
    func template(_ reference: Reference) throws -> ObjectTemplate {
        if case let .glyphs(id) = reference { return try type3Template(id) }
        templateClock += 1
        if let cached = templates[reference] {
            templateUses[reference] = templateClock
            return cached
        }
        var template = ObjectTemplate()
        cycleMet = false
        switch reference {
        case let .object(id): try writeObject(id, into: &template)
        case let .annotation(id): try writeAnnotation(objects.object(id), into: &template)
        case .page, .glyphs: preconditionFailure("written per page")
        }
        template.finish()
        if !cycleMet { keep(template, for: reference) }
        return template
    }

    /// Caches a template; over the budget, drops the least recently used down to half of it.
    private func keep(_ template: ObjectTemplate, for reference: Reference) {
        templates[reference] = template
        templateUses[reference] = templateClock
        templateBytes += template.bytes.count
        guard templateBytes > Self.templateBudget else { return }
        for (old, _) in templateUses.sorted(by: { $0.value < $1.value }) where templateBytes > Self.templateBudget / 2 {
            guard old != reference, let dropped = templates.removeValue(forKey: old) else { continue }
            templateUses[old] = nil
            templateBytes -= dropped.bytes.count
        }
    }

    /// The page dictionary: its allowed keys, `/Parent` to the new page tree, resources pruned to what
    /// its content streams and annotation appearances name, annotations filtered.
    func template(ofPage page: qpdf_oh) throws -> ObjectTemplate {
        let annotations = objects.items(objects.value(page, "/Annots")).filter(isDrawn(annotation:))
        let usage = try usage(ofPage: page, annotations: annotations)
        pageGlyphs = usage.glyphs
        var keys = Set(objects.keys(page).filter(PageIsolation.pageKeys.contains))
        keys.formUnion([Array("/Parent".utf8), Array("/Type".utf8)])
        if annotations.isEmpty { keys.remove(Array("/Annots".utf8)) }
        var template = ObjectTemplate()
        template.append("<<")
        for key in keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            Self.writeName(key, into: &template.bytes)
            switch key {
            case Array("/Parent".utf8):
                template.bytes += Array(" \(Self.pageTreeNumber) 0 R".utf8)
            case Array("/Type".utf8):
                template.append("/Page")
            case Array("/Resources".utf8):
                try writeResources(objects.value(page, key), keeping: usage.kept, into: &template)
            case Array("/Annots".utf8):
                template.append("[")
                for (index, annotation) in annotations.enumerated() {
                    if index > 0 { template.append(" ") }
                    if objects.isIndirect(annotation) {
                        template.append(reference: .annotation(objects.id(of: annotation)))
                    } else {
                        try writeAnnotation(annotation, into: &template)
                    }
                }
                template.append("]")
            default:
                template.append(" ")
                try writeValue(objects.value(page, key), into: &template)
            }
        }
        template.append(">>")
        template.finish()
        return template
    }

    /// An indirect object's body: a stream (see `streamData`) or any other value.
    private func writeObject(_ id: ObjectID, into template: inout ObjectTemplate) throws {
        let handle = objects.object(id)
        guard objects.isStream(handle) else {
            try writeValue(handle, direct: true, into: &template)
            return
        }
        let (data, recompressed) = try streamData(handle)
        let skipped = recompressed ? PageWriter.recompressedStreamKeys : PageWriter.streamKeys
        try writeDictionary(objects.dictionary(of: handle), of: handle, into: &template, skipping: skipped, adding: recompressed ? PageWriter.flate : [])
        template.bytes.removeLast(2)  // ">>"
        template.bytes += Array("/Length \(data.count)>>\nstream\n".utf8)
        template.bytes += data
        template.append("\nendstream")
    }

    private static let streamKeys: Set<[UInt8]> = PageIsolation.names("/Length")
    private static let recompressedStreamKeys: Set<[UInt8]> = PageIsolation.names("/Length", "/Filter", "/DecodeParms")
    private static let flate: [([UInt8], StaticString)] = [(Array("/Filter".utf8), " /FlateDecode")]

    /// A stream's data in canonical form, and whether it was recompressed: data compressed with
    /// `/FlateDecode` alone, or with a filter qpdf does not decode (images: DCT, JPX, JBIG2, CCITT),
    /// is copied as stored; any other (no filter, LZW, ASCII85, ASCIIHex, RunLength) is decoded and
    /// compressed with `/FlateDecode`. That is what qpdf does to every stream it writes, so a page of a
    /// deck re-saved by qpdf (or split, merged, reordered with it) comes out in the same bytes.
    private func streamData(_ stream: qpdf_oh) throws -> (data: [UInt8], recompressed: Bool) {
        let filter = objects.value(objects.dictionary(of: stream), "/Filter")
        if objects.isName(filter, "/FlateDecode") || objects.isName(filter, "/Fl") { return (try stored(stream), false) }
        if qpdf_oh_is_null(objects.qpdf, filter) != QPDF_FALSE { return (Deflate.compress(try stored(stream)), true) }
        guard let decoded = try objects.decodedDataIfPossible(stream) else { return (try objects.rawData(stream), false) }
        return (Deflate.compress(decoded), true)
    }

    /// A stream's data as stored, read once per page even when its content was decoded first.
    private func stored(_ stream: qpdf_oh) throws -> [UInt8] {
        try storedData.removeValue(forKey: objects.id(of: stream)) ?? objects.rawData(stream)
    }

    /// A content stream's bytes, decoded. Flate without a predictor (nearly every content stream) is
    /// inflated here, and the stored bytes kept for the stream's template; qpdf decodes anything else.
    ///
    /// Content that cannot be decoded draws nothing in a viewer beyond what it could decode: a damaged
    /// Flate stream counts for what inflates before the damage (what viewers draw), any other for nothing.
    /// So its page keeps the resources that part names, and the page is written, not refused.
    func content(of stream: qpdf_oh) throws -> [UInt8] {
        let dictionary = objects.dictionary(of: stream)
        let filter = objects.value(dictionary, "/Filter")
        let isFlate = objects.isName(filter, "/FlateDecode") || objects.isName(filter, "/Fl")
        guard isFlate || qpdf_oh_is_null(objects.qpdf, filter) != QPDF_FALSE else {
            return (try? objects.decodedData(stream)) ?? []
        }
        let data = try objects.rawData(stream)
        storedData[objects.id(of: stream)] = data
        guard isFlate else { return data }
        let predicted = objects.has(dictionary, "/DecodeParms")
        if !predicted, let inflated = inflater.inflate(data) { return inflated }
        if let decoded = try? objects.decodedData(stream) { return decoded }
        return predicted ? [] : inflater.inflate(data, partial: true) ?? []
    }

    /// A value; an indirect one becomes a reference slot (or `null` for the page tree and catalog).
    func writeValue(_ value: qpdf_oh, direct: Bool = false, into template: inout ObjectTemplate) throws {
        if !direct, objects.isIndirect(value) {
            let id = objects.id(of: value)
            switch target(id, value) {
            case .page: template.append(reference: .page(id))
            case .structure: template.append("null")
            case .type3Font: template.append(reference: .glyphs(id))
            case .other: template.append(reference: .object(id))
            }
            return
        }
        switch qpdf_oh_get_type_code(objects.qpdf, value) {
        case ot_array:
            template.append("[")
            for (index, item) in objects.items(value).enumerated() {
                if index > 0 { template.append(" ") }
                try writeValue(item, into: &template)
            }
            template.append("]")
        case ot_dictionary:
            try writeDictionary(value, of: value, into: &template)
        case ot_stream:
            throw PDFError.damaged("a direct stream")
        default:
            try objects.unparse(value, into: &template.bytes)
        }
    }

    /// A dictionary (of `owner`, a stream or the dictionary itself) without the keys dropped everywhere.
    /// The `/Resources` of a form, pattern, annotation appearance or Type 3 font are pruned to what
    /// its content names; any other dictionary's `/Resources` is dropped.
    private func writeDictionary(
        _ dictionary: qpdf_oh, of owner: qpdf_oh, into template: inout ObjectTemplate, skipping skipped: Set<[UInt8]> = [],
        adding added: [([UInt8], StaticString)] = []
    ) throws {
        var keys = objects.keys(dictionary)
        if keys.contains(Array("/Type".utf8)), objects.isName(objects.value(dictionary, "/Type"), "/OCG"), objects.isIndirect(owner) {
            optionalContentGroups.insert(objects.id(of: owner))
        }
        // A holder's resources are pruned; any other dictionary's are dropped (nothing draws them).
        let isHolder = keys.contains(Array("/Resources".utf8)) && isResourceHolder(owner, keys: keys)
        keys.removeAll { skipped.contains($0) || PageIsolation.droppedEverywhere.contains($0) || ($0 == Array("/Resources".utf8) && !isHolder) }
        keys += added.map(\.0)
        template.append("<<")
        for key in keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            Self.writeName(key, into: &template.bytes)
            if let value = added.first(where: { $0.0 == key })?.1 {
                template.append(value)
            } else if key == Array("/Resources".utf8) {
                try writeResources(objects.value(dictionary, key), keeping: try usage(ofHolder: owner).kept, into: &template)
            } else {
                template.append(" ")
                try writeValue(objects.value(dictionary, key), into: &template)
            }
        }
        template.append(">>")
    }

    /// A resource dictionary, written in place (a shared one is pruned differently for each user): the
    /// entries of each category that `names` holds, `/ProcSet`, nothing else. Looked up name by name: a
    /// shared dictionary may have thousands of entries, and each qpdf call costs about a thousand
    /// instructions.
    func writeResources(_ resources: qpdf_oh, keeping names: ResourceNames, into template: inout ObjectTemplate) throws {
        template.append("<<")
        if objects.isDictionary(resources) {
            var sections: [(key: [UInt8], category: ResourceCategory?)] = [(Self.procSet, nil)]
            sections += ResourceCategory.allCases.filter { !names[$0].isEmpty }.map { ($0.key, $0) }
            for (key, category) in sections.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                guard let category else {
                    let procSet = objects.value(resources, key)
                    guard qpdf_oh_is_null(objects.qpdf, procSet) == QPDF_FALSE else { continue }
                    Self.writeName(key, into: &template.bytes)
                    template.append(" ")
                    try writeValue(procSet, into: &template)
                    continue
                }
                let entries = objects.value(resources, key)
                guard objects.isDictionary(entries) else { continue }
                let kept = names[category].sorted { $0.lexicographicallyPrecedes($1) }.compactMap { name -> ([UInt8], qpdf_oh)? in
                    let value = objects.value(entries, name)
                    return qpdf_oh_is_null(objects.qpdf, value) == QPDF_FALSE ? (name, value) : nil
                }
                guard !kept.isEmpty else { continue }
                Self.writeName(key, into: &template.bytes)
                template.append("<<")
                for (name, value) in kept {
                    Self.writeName(name, into: &template.bytes)
                    template.append(" ")
                    try writeValue(value, into: &template)
                }
                template.append(">>")
            }
        }
        template.append(">>")
    }

    private static let procSet = Array("/ProcSet".utf8)

    // MARK: - Type 3 fonts

    /// A Type 3 font with the procedures of the glyphs this page shows (all of them when the codes
    /// shown cannot all be named through its encoding), and the resources those use.
    private func type3Template(_ id: ObjectID) throws -> ObjectTemplate {
        let font = objects.object(id)
        var glyphs: Set<[UInt8]>?
        if !pageGlyphs.all, let encoding = type3Encoding(id, font) {
            let codes = (pageGlyphs.byFont[id] ?? CodeSet()).union(pageGlyphs.inherited).codes
            let names = codes.compactMap { encoding[$0] }
            if names.count == codes.count { glyphs = Set(names) }
        }
        if let cached = type3Templates[id]?[glyphs] { return cached }
        cycleMet = false
        let usage = try usage(ofType3: font, glyphs: glyphs)
        var template = ObjectTemplate()
        template.append("<<")
        for key in objects.keys(font) where !PageIsolation.droppedEverywhere.contains(key) {
            Self.writeName(key, into: &template.bytes)
            let value = objects.value(font, key)
            switch key {
            case Array("/Resources".utf8):
                try writeResources(value, keeping: usage.kept, into: &template)
            case Array("/CharProcs".utf8):
                template.append("<<")
                for name in objects.keys(value) where glyphs?.contains(name) ?? true {
                    Self.writeName(name, into: &template.bytes)
                    template.append(" ")
                    try writeValue(objects.value(value, name), into: &template)
                }
                template.append(">>")
            default:
                template.append(" ")
                try writeValue(value, into: &template)
            }
        }
        template.append(">>")
        template.finish()
        if !cycleMet { type3Templates[id, default: [:]][glyphs] = template }
        return template
    }

    /// Code → glyph name from the font's `/Encoding /Differences`, once per document.
    private func type3Encoding(_ id: ObjectID, _ font: qpdf_oh) -> [UInt8: [UInt8]]? {
        if let known = type3Encodings[id] { return known }
        var map: [UInt8: [UInt8]]?
        let encoding = objects.value(font, "/Encoding")
        if objects.isDictionary(encoding) {
            var codes: [UInt8: [UInt8]] = [:]
            var code = 0
            for item in objects.items(objects.value(encoding, "/Differences")) {
                if let number = objects.integer(item) {
                    code = number
                } else if let name = objects.name(item) {
                    if (0...255).contains(code) { codes[UInt8(code)] = name }
                    code += 1
                }
            }
            map = codes
        }
        type3Encodings[id] = .some(map)
        return map
    }

    // MARK: - Annotations

    /// Whether an annotation is drawn: not hidden, not a popup. (A link to another page stays: viewers
    /// may draw its border; it loses its destination.)
    func isDrawn(annotation: qpdf_oh) -> Bool {
        guard objects.isDictionary(annotation) else { return false }
        if let flags = objects.integer(objects.value(annotation, "/F")), flags & PageIsolation.invisibleFlags != 0 { return false }
        return !objects.isName(objects.value(annotation, "/Subtype"), "/Popup")
    }

    /// The URI a link's action opens, if its action is exactly that.
    private func webAddress(of annotation: qpdf_oh) -> qpdf_oh? {
        let action = objects.value(annotation, "/A")
        guard objects.isDictionary(action), objects.isName(objects.value(action, "/S"), "/URI") else { return nil }
        let uri = objects.value(action, "/URI")
        return qpdf_oh_is_string(objects.qpdf, uri) != QPDF_FALSE ? uri : nil
    }

    /// The normal appearance of an annotation (a stream, or a dictionary of states), or nil.
    func normalAppearance(of annotation: qpdf_oh) -> qpdf_oh? {
        let appearances = objects.value(annotation, "/AP")
        guard objects.isDictionary(appearances) else { return nil }
        let normal = objects.value(appearances, "/N")
        return objects.isStream(normal) || objects.isDictionary(normal) ? normal : nil
    }

    private func writeAnnotation(_ annotation: qpdf_oh, into template: inout ObjectTemplate) throws {
        let appearance = normalAppearance(of: annotation)
        template.append("<<")
        for key in objects.keys(annotation) where PageIsolation.annotationKeys.contains(key) {
            switch key {
            case Array("/A".utf8):
                guard let uri = webAddress(of: annotation) else { continue }
                template.append("/A<</S/URI/URI ")
                try objects.unparse(uri, into: &template.bytes)
                template.append(">>")
            case Array("/AP".utf8):
                guard let appearance else { continue }
                template.append("/AP<</N ")
                try writeValue(appearance, into: &template)
                template.append(">>")
            case Array("/Contents".utf8), Array("/RC".utf8):
                // The text an appearance stream already draws; without one, a viewer draws from it.
                guard appearance == nil else { continue }
                fallthrough
            default:
                Self.writeName(key, into: &template.bytes)
                template.append(" ")
                try writeValue(objects.value(annotation, key), into: &template)
            }
        }
        template.append(">>")
    }

    // MARK: - Syntax

    /// A name as PDF syntax: `#xx` for delimiters, `#` and bytes outside the printable range.
    static func writeName(_ name: [UInt8], into out: inout [UInt8]) {
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
}
