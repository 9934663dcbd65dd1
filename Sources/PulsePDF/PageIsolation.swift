/// What a written page keeps of its source, and what it drops.
///
/// A slide's plaintext is readable as soon as its key is released, so it must carry what its page
/// draws and nothing else: no other page's text, pictures or fonts, and nothing that leads to them. A
/// slide viewer renders the page; whatever it does not need for that is dropped, by allow-list where
/// the set of useful keys is small (the page, annotations, resource dictionaries).
///
/// Kept: the page's boxes, rotation, transparency group, content, the resources its content streams
/// name (see `ContentScanner`; pruned the same way inside form XObjects, tiling patterns, Type 3 fonts,
/// soft masks and annotation appearances), the procedures of the Type 3 glyphs it shows, visible
/// annotations with their normal appearance, links to web addresses, and the visibility the document
/// gives the optional content groups the page uses (`/OCProperties` in the new catalog).
///
/// Dropped, and why:
/// - References to any other page, the page tree and the catalog: written as `null`; nothing is ever
///   copied from behind them (links, `/P`, beads, outlines, struct parents all end there).
/// - Page keys outside `pageKeys`: `/Thumb` (a thumbnail image), `/PieceInfo` (an application's private
///   data; Illustrator keeps the whole source document there), `/Metadata` (XMP, often document-wide),
///   `/StructParents` (the key into the document's structure tree), `/B` (article beads, chained to
///   other pages), `/AA` (actions, JavaScript), `/Trans`, `/Dur`, `/PresSteps` (full-screen
///   presentation effects), `/LastModified`, `/ID`, `/PZ`, `/SeparationInfo`, `/Tabs`, `/VP`,
///   `/OutputIntents`, `/AF`, `/DPart`: none is needed to render, several lead elsewhere.
/// - In every dictionary, `droppedEverywhere`: the same private data, metadata and associated files on
///   forms, images and fonts; `/Alternates` (print-time image substitutes); `/OPI` and `/Ref` (proxies
///   for external or embedded documents).
/// - Resource dictionary entries that no content stream of this page names, and categories that are
///   not resources (`resourceCategories` and `/ProcSet` stay).
/// - Type 3 glyph procedures the page does not show (they may draw pictures of their own: color emoji).
/// - Annotations that draw nothing (hidden or no-view, popups), and in the annotations kept every key
///   outside `annotationKeys`: `/P`, `/Popup`, `/IRT`, `/Parent` (the form field, whose `/Kids` are
///   other pages' widgets), `/Dest` and any `/A` but a URI (links to other pages, named destinations,
///   JavaScript, launch actions: a link keeps its rectangle and border, not its target), `/AA`,
///   `/StructParent`, `/FS` and the media keys (embedded files), `/T`, `/M`, `/NM`; the rollover and
///   down appearances (`/AP /R`, `/D`); `/Contents` and `/RC` when an appearance stream already draws
///   the annotation.
enum PageIsolation {
    /// The page keys a viewer needs to render the page (`/Parent` and `/Type` are written anew).
    static let pageKeys: Set<[UInt8]> = names(
        "/MediaBox", "/CropBox", "/BleedBox", "/TrimBox", "/ArtBox", "/Rotate", "/UserUnit", "/Group", "/Resources",
        "/Contents", "/Annots")

    static let droppedEverywhere: Set<[UInt8]> = names(
        "/Metadata", "/PieceInfo", "/LastModified", "/StructParent", "/StructParents", "/AF", "/Alternates", "/OPI", "/Ref",
        "/Thumb")

    /// Annotation keys that matter for drawing it (with or without an appearance stream).
    static let annotationKeys: Set<[UInt8]> = names(
        "/Type", "/Subtype", "/Rect", "/AP", "/AS", "/F", "/Border", "/BS", "/BE", "/C", "/IC", "/CA", "/BM", "/H", "/QuadPoints",
        "/L", "/LE", "/LL", "/LLE", "/LLO", "/CP", "/Vertices", "/InkList", "/Path", "/RD", "/Rotate", "/MK", "/DA", "/DS", "/Q",
        "/Name", "/IT", "/OC", "/Contents", "/RC", "/A")

    /// Annotation flags (§12.5.3) that keep an annotation from being drawn: Hidden (2) and NoView (32).
    static let invisibleFlags = 2 | 32

    static func names(_ names: String...) -> Set<[UInt8]> { Set(names.map { Array($0.utf8) }) }
}
