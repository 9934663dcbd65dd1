// The vocabulary: one function per known element, named as the element, for @NodeBuilder blocks:
//
//     table {
//         caption { "Devices in the room" }
//         for device in devices { tr { td { bdi { device.name } } } }
//     }
//
// (Functions, not `Node.div` static members: in a builder block a line that starts with `.` would
// continue the line before it.) Normal elements take attributes and a block of children; void elements
// only attributes; `title`, `textarea`, SVG's `svgTitle` and `desc` only text; `script` only a source
// (the console's CSP allows no inline script, so there is nothing to put in it).

/// `<title>`: text only.
public func title(_ text: String) -> Node { .element(.title, [], NodeList(.text(text))) }
/// `<script src="…">`, with `.defer()` or `.type("module")`: never inline code.
public func script(src: String, _ attributes: Attribute...) -> Node { .element(.script, [.src(src)] + attributes) }
/// `<textarea>`: its initial text only.
public func textarea(_ attributes: Attribute..., text: String = "") -> Node { .element(.textarea, attributes, NodeList(.text(text))) }
/// SVG's `<title>` (the accessible name of a chart, shown as its tooltip): text only.
public func svgTitle(_ text: String) -> Node { .element(.svgTitle, [], NodeList(.text(text))) }
/// SVG's `<desc>` (a chart's longer description): text only.
public func desc(_ text: String) -> Node { .element(.desc, [], NodeList(.text(text))) }
/// SVG's `<text>`.
public func svgText(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.text, attributes, content()) }

public func html(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.html, attributes, content()) }
public func head(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.head, attributes, content()) }
public func body(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.body, attributes, content()) }
public func main(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.main, attributes, content()) }
public func header(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.header, attributes, content()) }
public func footer(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.footer, attributes, content()) }
public func nav(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.nav, attributes, content()) }
public func section(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.section, attributes, content()) }
public func article(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.article, attributes, content()) }
public func aside(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.aside, attributes, content()) }
public func h1(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.h1, attributes, content()) }
public func h2(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.h2, attributes, content()) }
public func h3(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.h3, attributes, content()) }
public func h4(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.h4, attributes, content()) }
public func p(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.p, attributes, content()) }
public func div(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.div, attributes, content()) }
public func pre(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.pre, attributes, content()) }
public func ul(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.ul, attributes, content()) }
public func ol(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.ol, attributes, content()) }
public func li(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.li, attributes, content()) }
public func dl(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.dl, attributes, content()) }
public func dt(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.dt, attributes, content()) }
public func dd(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.dd, attributes, content()) }
public func figure(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.figure, attributes, content()) }
public func figcaption(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.figcaption, attributes, content()) }
public func details(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.details, attributes, content()) }
public func summary(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.summary, attributes, content()) }
public func dialog(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.dialog, attributes, content()) }
public func a(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.a, attributes, content()) }
public func span(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.span, attributes, content()) }
public func em(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.em, attributes, content()) }
public func strong(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.strong, attributes, content()) }
public func small(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.small, attributes, content()) }
public func code(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.code, attributes, content()) }
public func kbd(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.kbd, attributes, content()) }
public func time(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.time, attributes, content()) }
public func bdi(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.bdi, attributes, content()) }
public func table(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.table, attributes, content()) }
public func caption(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.caption, attributes, content()) }
public func thead(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.thead, attributes, content()) }
public func tbody(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.tbody, attributes, content()) }
public func tfoot(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.tfoot, attributes, content()) }
public func tr(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.tr, attributes, content()) }
public func th(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.th, attributes, content()) }
public func td(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.td, attributes, content()) }
public func form(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.form, attributes, content()) }
public func label(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.label, attributes, content()) }
public func button(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.button, attributes, content()) }
public func select(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.select, attributes, content()) }
public func option(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.option, attributes, content()) }
public func fieldset(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.fieldset, attributes, content()) }
public func legend(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.legend, attributes, content()) }
public func output(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.output, attributes, content()) }
public func progress(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.progress, attributes, content()) }
public func meter(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.meter, attributes, content()) }
public func svg(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.svg, attributes, content()) }
public func g(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.g, attributes, content()) }
public func path(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.path, attributes, content()) }
public func rect(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.rect, attributes, content()) }
public func circle(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.circle, attributes, content()) }
public func line(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.line, attributes, content()) }
public func polyline(_ attributes: Attribute..., @NodeBuilder content: () -> NodeList = { NodeList() }) -> Node { .element(.polyline, attributes, content()) }

public func meta(_ attributes: Attribute...) -> Node { .element(.meta, attributes) }
public func link(_ attributes: Attribute...) -> Node { .element(.link, attributes) }
public func hr(_ attributes: Attribute...) -> Node { .element(.hr, attributes) }
public func br(_ attributes: Attribute...) -> Node { .element(.br, attributes) }
public func img(_ attributes: Attribute...) -> Node { .element(.img, attributes) }
public func input(_ attributes: Attribute...) -> Node { .element(.input, attributes) }
