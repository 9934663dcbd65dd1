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
            content += try self.content(of: stream)
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
        let use = ContentScanner.use(of: try content(of: stream)) { self.components(ofColorSpace: $0, in: resources) }
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
    /// Each name is looked up once, on its own: a shared resource dictionary may have thousands of
    /// entries, and each qpdf call costs about a thousand instructions.
    private func usage(of use: ContentUse, resources: qpdf_oh) throws -> HolderUsage {
        var used = use.names
        for name in ResourceNames.defaultColorSpaces { used.insert(name, in: .colorSpace) }
        var looked = ResourceNames()
        var unresolved = ResourceNames()
        var glyphs = use.glyphs
        glyphs.byName = [:]
        let hasResources = objects.isDictionary(resources)
        var entries: [ResourceCategory: qpdf_oh?] = [:]
        var grew = true
        while grew {
            grew = false
            for category in ResourceCategory.allCases {
                for name in used[category].subtracting(looked[category]).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    looked.insert(name, in: category)
                    let codes = category == .font ? use.glyphs.byName[name] : nil
                    if entries[category] == nil {
                        let dictionary = hasResources ? objects.value(resources, category.key) : resources
                        entries[category] = .some(hasResources && objects.isDictionary(dictionary) ? dictionary : nil)
                    }
                    let value = entries[category]!.map { objects.value($0, name) }
                    guard let value, qpdf_oh_is_null(objects.qpdf, value) == QPDF_FALSE else {
                        if !ResourceNames.defaultColorSpaces.contains(name) { unresolved.insert(name, in: category) }
                        if let codes { glyphs.byName[name, default: CodeSet()].formUnion(codes) }
                        continue
                    }
                    guard let child = childHolder(value, category) else { continue }
                    if let codes, category == .font { glyphs.byFont[child, default: CodeSet()].formUnion(codes) }
                    let usage = try usage(ofHolder: objects.object(child))
                    if used.formUnion(usage.unresolved) { grew = true }
                    glyphs.formUnion(resolved(usage.glyphs, in: resources))
                }
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
            let font = hasFonts ? objects.value(fonts, name) : fonts
            if !hasFonts || qpdf_oh_is_null(objects.qpdf, font) != QPDF_FALSE {
                result.byName[name, default: CodeSet()].formUnion(codes)
            } else if let type3 = childHolder(font, .font) {
                // A Type 3 font written in place is written whole (see writeDictionary): no codes needed.
                result.byFont[type3, default: CodeSet()].formUnion(codes)
            }
        }
        return result
    }

    /// The holder of content a resource is, if any: a form, a tiling pattern, a Type 3 font, the
    /// soft-mask group of a graphics state. Forms, patterns and groups are streams (so indirect); a Type 3
    /// font written in place is left out (its names stay its own). Decided once per object.
    private func childHolder(_ value: qpdf_oh, _ category: ResourceCategory) -> ObjectID? {
        guard category == .xObject || category == .pattern || category == .font || category == .extGState else { return nil }
        guard objects.isIndirect(value) else { return category == .extGState ? maskGroup(value) : nil }
        let id = objects.id(of: value)
        if let known = childHolders[id] { return known }
        var child: ObjectID?
        switch category {
        case .xObject:
            if objects.isStream(value), objects.isName(objects.value(objects.dictionary(of: value), "/Subtype"), "/Form") { child = id }
        case .pattern:
            if objects.isStream(value), objects.integer(objects.value(objects.dictionary(of: value), "/PatternType")) == 1 { child = id }
        case .font:
            if target(id, value) == .type3Font { child = id }
        default:
            child = maskGroup(value)
        }
        childHolders[id] = child
        return child
    }

    private func maskGroup(_ graphicsState: qpdf_oh) -> ObjectID? {
        guard objects.isDictionary(graphicsState) else { return nil }
        let mask = objects.value(graphicsState, "/SMask")
        guard objects.isDictionary(mask) else { return nil }
        let group = objects.value(mask, "/G")
        return objects.isStream(group) && objects.isIndirect(group) ? objects.id(of: group) : nil
    }
}
