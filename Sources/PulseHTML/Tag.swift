/// A known element: its name's bytes and how it renders. Internal, so a page can only name the
/// elements this module lists (`Node+Elements.swift`), never a tag spelled from data.
final class Tag: Sendable {
    enum Kind {
        /// Children between a start and an end tag.
        case normal
        /// An HTML void element (`<br>`, `<img>`, `<input>`, `<meta>`, `<link>`): no children, no end tag.
        case void
        /// An SVG element: `<path …/>` when it has no children (valid in HTML's foreign content and in
        /// XML, so the same bytes serve inline and as an `image/svg+xml` file).
        case foreign
    }

    /// `<td`: attributes follow.
    let start: [UInt8]
    /// `<td>`
    let startClosed: [UInt8]
    /// `</td>`
    let end: [UInt8]
    let kind: Kind

    init(_ name: String, _ kind: Kind = .normal) {
        start = Array("<\(name)".utf8)
        startClosed = Array("<\(name)>".utf8)
        end = Array("</\(name)>".utf8)
        self.kind = kind
    }

    // Document and metadata.
    static let html = Tag("html"), head = Tag("head"), body = Tag("body"), title = Tag("title")
    static let meta = Tag("meta", .void), link = Tag("link", .void), script = Tag("script")
    // Sections and grouping.
    static let main = Tag("main"), header = Tag("header"), footer = Tag("footer"), nav = Tag("nav")
    static let section = Tag("section"), article = Tag("article"), aside = Tag("aside")
    static let h1 = Tag("h1"), h2 = Tag("h2"), h3 = Tag("h3"), h4 = Tag("h4")
    static let p = Tag("p"), div = Tag("div"), hr = Tag("hr", .void), pre = Tag("pre")
    static let ul = Tag("ul"), ol = Tag("ol"), li = Tag("li"), dl = Tag("dl"), dt = Tag("dt"), dd = Tag("dd")
    static let figure = Tag("figure"), figcaption = Tag("figcaption"), details = Tag("details"), summary = Tag("summary")
    static let dialog = Tag("dialog")
    // Text.
    static let a = Tag("a"), span = Tag("span"), em = Tag("em"), strong = Tag("strong"), small = Tag("small")
    static let code = Tag("code"), kbd = Tag("kbd"), time = Tag("time"), bdi = Tag("bdi"), br = Tag("br", .void)
    static let img = Tag("img", .void)
    // Tables.
    static let table = Tag("table"), caption = Tag("caption"), thead = Tag("thead"), tbody = Tag("tbody")
    static let tfoot = Tag("tfoot"), tr = Tag("tr"), th = Tag("th"), td = Tag("td")
    // Forms.
    static let form = Tag("form"), label = Tag("label"), input = Tag("input", .void), button = Tag("button")
    static let select = Tag("select"), option = Tag("option"), textarea = Tag("textarea")
    static let fieldset = Tag("fieldset"), legend = Tag("legend"), output = Tag("output")
    static let progress = Tag("progress"), meter = Tag("meter")
    // SVG (charts, the QR code).
    static let svg = Tag("svg", .foreign), g = Tag("g", .foreign), path = Tag("path", .foreign)
    static let rect = Tag("rect", .foreign), circle = Tag("circle", .foreign), line = Tag("line", .foreign)
    static let polyline = Tag("polyline", .foreign), text = Tag("text", .foreign), svgTitle = Tag("title", .foreign)
    static let desc = Tag("desc", .foreign)
}
