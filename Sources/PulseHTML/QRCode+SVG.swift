import PulseQR

extension QRCode {
    /// The code as a compact SVG, a PulseHTML node: put it in a page as it is, or render it
    /// (`node.render()`) and serve the bytes as `image/svg+xml`.
    ///
    ///     <svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="…" viewBox="0 0 37 37"
    ///          width="222" height="222" shape-rendering="crispEdges"><title>…</title>
    ///       <rect width="37" height="37" fill="#fff"/><path fill="#000" d="M4 4h7v1h-7z m8 0…"/></svg>
    ///
    /// One unit of the `viewBox` is one module; the dark modules are one `<path>` of horizontal runs, each
    /// `m dx dy h n v1 h-n z` from the previous run's start, so a typical enrollment link is 2–4 KB.
    /// Black on white by presentation attributes, whatever the page's colour scheme (scanners need the
    /// dark modules darker; no `style` attribute, so a strict CSP allows it inline).
    ///
    /// - Parameters:
    ///   - moduleSize: pixels per module of the `width`/`height` (CSS may scale it; crisp edges keep it sharp).
    ///   - quietZone: light modules around the symbol; the standard asks for 4.
    ///   - label: the accessible name (`aria-label` and `<title>`), escaped like all text.
    public func svg(moduleSize: Int = 6, quietZone: Int = 4, label: String) -> Node {
        precondition((1...100).contains(moduleSize) && (0...40).contains(quietZone), "QRCode.svg: moduleSize 1…100, quietZone 0…40")
        let side = size + 2 * quietZone
        let pixels = String(side * moduleSize)
        return PulseHTML.svg(
            Attribute("xmlns", "http://www.w3.org/2000/svg"), .role("img"), Attribute("aria-label", label),
            Attribute("viewBox", "0 0 \(side) \(side)"), .width(pixels), .height(pixels), Attribute("shape-rendering", "crispEdges")
        ) {
            svgTitle(label)
            rect(.width(String(side)), .height(String(side)), Attribute("fill", "#fff"))
            path(Attribute("fill", "#000"), Attribute("d", runs(offset: quietZone)))
        }
    }

    /// The path data of the dark modules, row by row, as runs.
    func runs(offset: Int) -> String {
        var d: [UInt8] = []
        d.reserveCapacity(size * size)
        var previous: (x: Int, y: Int)? = nil
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x, y) else {
                    x += 1
                    continue
                }
                var end = x + 1
                while end < size, isDark(end, y) { end += 1 }
                let length = String(end - x)
                if let previous {
                    d += "m\(x - previous.x) \(y - previous.y)".utf8
                } else {
                    d += "M\(x + offset) \(y + offset)".utf8
                }
                d += "h\(length)v1h-\(length)z".utf8
                previous = (x, y)
                x = end
            }
        }
        return String(decoding: d, as: UTF8.self)
    }
}
