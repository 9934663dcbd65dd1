import CQPDF

/// The resources a holder of content uses: names its content streams give, and names that the forms,
/// patterns, Type 3 fonts and soft masks it uses leave for it to resolve.
struct HolderUsage {
    /// The names to keep in the holder's resource dictionary.
    var kept = ResourceNames()
    /// Names the holder uses that its own resources lack: viewers look them up in the resources of
    /// whatever draws the holder (a form without resources is how old PDFs inherit the page's), so the
    /// user keeps them.
    var unresolved = ResourceNames()
    /// The Type 3 glyphs the holder and what it draws show.
    var glyphs = GlyphUse()
}

/// Which resources a page, form, tiling pattern, annotation appearance or Type 3 font uses.
///
/// Each holder's resource dictionary is pruned to the names its own content streams give (a Type 3
/// font's are the procedures of the glyphs the page shows), plus the names left unresolved by the
/// holders it uses through them: form XObjects, tiling patterns, Type 3 fonts and the soft-mask groups
/// of graphics states. A page also keeps the names its annotations' appearances leave unresolved. A
/// holder's usage does not depend on the page (only the page's own does), so it is worked out once per
/// document; a Type 3 font's, once per set of glyphs shown.
extension PageWriter {
    /// Whether `owner`'s `/Resources` belong to content it holds: any stream but an image, or a Type 3 font.
    func isResourceHolder(_ owner: qpdf_oh, keys: [[UInt8]]) -> Bool {
        let subtype = objects.value(objects.dictionary(of: owner), "/Subtype")
        if objects.isStream(owner) { return !objects.isName(subtype, "/Image") }
        return keys.contains(Array("/CharProcs".utf8)) && objects.isName(subtype, "/Type3")
    }

    func usage(ofPage page: qpdf_oh, annotations: [qpdf_oh]) throws -> HolderUsage {
        // The page's streams are one content stream: an operator's operands may end one and start the next.
        var content: [UInt8] = []
        let contents = objects.value(page, "/Contents")
        for stream in objects.isArray(contents) ? objects.items(contents) : [contents] where objects.isStream(stream) {
            content += try objects.decodedData(stream)
            content.append(0x0a)
        }
        let resources = objects.value(page, "/Resources")
        var use = ContentScanner.use(of: content) { self.components(ofColorSpace: $0, in: resources) }
        var appearances = GlyphUse()
        for annotation in annotations {
            guard let appearance = normalAppearance(of: annotation) else { continue }
            let states = objects.isStream(appearance) ? [appearance] : objects.keys(appearance).map { objects.value(appearance, $0) }
            for state in states where objects.isStream(state) {
                let usage = try usage(ofHolder: state)
                use.names.formUnion(usage.unresolved)
                appearances.formUnion(usage.glyphs)
            }
        }
        var usage = try usage(of: use, resources: resources)
        usage.glyphs.formUnion(resolved(appearances, in: resources))
        return usage
    }

    /// The usage of a form, pattern or appearance stream (its data is content) or of a Type 3 font with
    /// all its glyphs. Cached for indirect holders; a cycle of forms counts each form once.
    func usage(ofHolder holder: qpdf_oh) throws -> HolderUsage {
        let id = objects.isIndirect(holder) ? objects.id(of: holder) : nil
        if let id {
            if let cached = usages[id] { return cached }
            guard analysing.insert(id).inserted else {
                // Forms that draw each other (no viewer draws them): what this one adds is counted where
                // the cycle started. That depends on where it started, so nothing on it is cached.
                cycleMet = true
                return HolderUsage()
            }
        }
        let outer = cycleMet
        cycleMet = false
        defer {
            if let id { analysing.remove(id) }
            cycleMet = cycleMet || outer
        }
        let usage: HolderUsage
        if objects.isStream(holder) {
            let resources = objects.value(objects.dictionary(of: holder), "/Resources")
            usage = try self.usage(of: try use(of: holder, resources: resources), resources: resources)
        } else {
            usage = try self.usage(ofType3: holder, glyphs: nil)
        }
        if let id, !cycleMet { usages[id] = usage }
        return usage
    }

    /// The usage of a Type 3 font showing `glyphs` (names in `/CharProcs`; nil: all).
    func usage(ofType3 font: qpdf_oh, glyphs: Set<[UInt8]>?) throws -> HolderUsage {
        var use = ContentUse()
        let procedures = objects.value(font, "/CharProcs")
        let resources = objects.value(font, "/Resources")
        if objects.isDictionary(procedures) {
            for name in objects.keys(procedures) where glyphs?.contains(name) ?? true {
                let procedure = objects.value(procedures, name)
                guard objects.isStream(procedure) else { continue }
                let glyph = try self.use(of: procedure, resources: resources)
                use.names.formUnion(glyph.names)
                use.glyphs.formUnion(glyph.glyphs)
            }
        }
        return try usage(of: use, resources: resources)
    }

    /// What a stream's content (drawn with `resources`) uses, once per document.
    private func use(of stream: qpdf_oh, resources: qpdf_oh) throws -> ContentUse {
        let id = objects.id(of: stream)
        if let cached = scans[id] { return cached }
        let use = ContentScanner.use(of: try objects.decodedData(stream)) { self.components(ofColorSpace: $0, in: resources) }
        scans[id] = use
        return use
    }

    /// How many components a color space resource has (for sizing inline images), nil if unknown.
    private func components(ofColorSpace name: [UInt8], in resources: qpdf_oh) -> Int? {
        guard objects.isDictionary(resources) else { return nil }
        let spaces = objects.value(resources, "/ColorSpace")
        guard objects.isDictionary(spaces) else { return nil }
        let space = objects.value(spaces, name)
        let items = objects.items(space)
        switch (objects.name(space) ?? items.first.flatMap(objects.name)).map({ String(decoding: $0, as: UTF8.self) }) {
        case "/DeviceGray", "/CalGray", "/Indexed", "/I", "/Separation": return 1
        case "/DeviceRGB", "/CalRGB", "/Lab": return 3
        case "/DeviceCMYK": return 4
        case "/ICCBased": return items.count > 1 ? objects.integer(objects.value(objects.dictionary(of: items[1]), "/N")) : nil
        case "/DeviceN": return items.count > 1 ? objects.items(items[1]).count : nil
        default: return nil
        }
    }

    /// `use` completed with what the holders it reaches leave unresolved, until nothing new comes.
    private func usage(of use: ContentUse, resources: qpdf_oh) throws -> HolderUsage {
        var used = use.names
        for name in ResourceNames.defaultColorSpaces { used.insert(name, in: .colorSpace) }
        let hasResources = objects.isDictionary(resources)
        var glyphs = resolved(use.glyphs, in: resources)
        var visited: Set<ObjectID> = []
        var grew = hasResources
        while grew {
            grew = false
            for category in [ResourceCategory.xObject, .pattern, .font, .extGState] {
                let entries = objects.value(resources, category.key)
                guard objects.isDictionary(entries) else { continue }
                for name in used[category].sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    guard let child = childHolder(objects.value(entries, name), category), visited.insert(objects.id(of: child)).inserted
                    else { continue }
                    let usage = try usage(ofHolder: child)
                    if used.formUnion(usage.unresolved) { grew = true }
                    glyphs.formUnion(resolved(usage.glyphs, in: resources))
                }
            }
        }
        // Looked up name by name: a shared resource dictionary may have thousands of entries.
        var unresolved = ResourceNames()
        for category in ResourceCategory.allCases where !used[category].isEmpty {
            let entries = hasResources ? objects.value(resources, category.key) : resources
            let isDictionary = hasResources && objects.isDictionary(entries)
            for name in used[category] where !(isDictionary && objects.has(entries, name)) && !ResourceNames.defaultColorSpaces.contains(name) {
                unresolved.insert(name, in: category)
            }
        }
        return HolderUsage(kept: used, unresolved: unresolved, glyphs: glyphs)
    }

    /// `glyphs` with the font names that `resources` resolves replaced by their fonts (only Type 3 fonts
    /// matter: other fonts' glyphs are in their font programs, which are written whole).
    private func resolved(_ glyphs: GlyphUse, in resources: qpdf_oh) -> GlyphUse {
        guard !glyphs.byName.isEmpty else { return glyphs }
        var result = glyphs
        result.byName = [:]
        let fonts = objects.isDictionary(resources) ? objects.value(resources, "/Font") : resources
        let hasFonts = objects.isDictionary(resources) && objects.isDictionary(fonts)
        for (name, codes) in glyphs.byName {
            guard hasFonts, objects.has(fonts, name) else {
                result.byName[name, default: CodeSet()].formUnion(codes)
                continue
            }
            // A Type 3 font written in place is written whole (see writeDictionary): no codes needed.
            let font = objects.value(fonts, name)
            if objects.isIndirect(font), objects.isDictionary(font), objects.isName(objects.value(font, "/Subtype"), "/Type3") {
                result.byFont[objects.id(of: font), default: CodeSet()].formUnion(codes)
            }
        }
        return result
    }

    /// The holder of content a resource is, if any: forms, patterns and soft-mask groups are streams
    /// (so indirect); a Type 3 font written in place is left out (its names stay its own).
    private func childHolder(_ value: qpdf_oh, _ category: ResourceCategory) -> qpdf_oh? {
        let child: qpdf_oh
        switch category {
        case .xObject:
            guard objects.isStream(value), objects.isName(objects.value(objects.dictionary(of: value), "/Subtype"), "/Form") else { return nil }
            child = value
        case .pattern:
            guard objects.isStream(value), objects.integer(objects.value(objects.dictionary(of: value), "/PatternType")) == 1 else { return nil }
            child = value
        case .font:
            guard objects.isDictionary(value), objects.isName(objects.value(value, "/Subtype"), "/Type3") else { return nil }
            child = value
        case .extGState:
            guard objects.isDictionary(value) else { return nil }
            let mask = objects.value(value, "/SMask")
            guard objects.isDictionary(mask) else { return nil }
            child = objects.value(mask, "/G")
            guard objects.isStream(child) else { return nil }
        default:
            return nil
        }
        return objects.isIndirect(child) ? child : nil
    }
}
