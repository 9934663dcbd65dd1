import PulseHTML

/// A horizontal bar chart drawn on the server as SVG, with the same numbers as a table beside it: the
/// report's charts. Each bar carries its label and its number as text, so nothing is told by colour alone;
/// bars and text are `currentColor`, so the chart follows the page's light or dark scheme.
struct BarChart {
    struct Bar {
        let label: String
        let value: Int
    }

    let title: String
    /// The chart's longer description (`<desc>`): what it shows, in words, for a screen reader.
    let description: String
    /// The table's header of the label column and of the value column.
    let labelHeader: String
    let valueHeader: String
    let bars: [Bar]

    static let width = 640, labelWidth = 220, valueWidth = 80, rowHeight = 34, barHeight = 22

    /// The chart and its table, side by side on a wide screen, one above the other on a phone.
    var node: Node {
        div(.class("report-pair")) {
            figure(.class("chart")) {
                svgNode
            }
            div(.class("table-wrap")) {
                table {
                    caption { title }
                    thead {
                        tr {
                            th(.scope("col")) { labelHeader }
                            th(.scope("col"), .class("num")) { valueHeader }
                        }
                    }
                    tbody {
                        for bar in bars {
                            tr {
                                th(.scope("row")) { bdi { bar.label } }
                                td(.class("num")) { "\(bar.value)" }
                            }
                        }
                    }
                }
            }
        }
    }

    var svgNode: Node {
        let height = max(1, bars.count) * Self.rowHeight + 8
        let maximum = max(1, bars.map(\.value).max() ?? 1)
        let room = Self.width - Self.labelWidth - Self.valueWidth
        return svg(
            Attribute("xmlns", "http://www.w3.org/2000/svg"), .role("img"), Attribute("viewBox", "0 0 \(Self.width) \(height)"),
            Attribute("preserveAspectRatio", "xMinYMin meet"), .class("bar-chart")
        ) {
            svgTitle(title)
            desc(description)
            if bars.isEmpty {
                svgText(Attribute("x", "0"), Attribute("y", "24"), Attribute("fill", "currentColor")) { "No data" }
            }
            for (index, bar) in bars.enumerated() {
                let y = 4 + index * Self.rowHeight
                let length = bar.value <= 0 ? 0 : max(2, Int((Double(bar.value) / Double(maximum) * Double(room)).rounded()))
                g {
                    svgText(
                        Attribute("x", "\(Self.labelWidth - 10)"), Attribute("y", "\(y + Self.barHeight - 6)"), Attribute("text-anchor", "end"),
                        Attribute("fill", "currentColor")
                    ) { Self.short(bar.label) }
                    rect(
                        Attribute("x", "\(Self.labelWidth)"), Attribute("y", "\(y)"), Attribute("width", "\(length)"),
                        Attribute("height", "\(Self.barHeight)"), Attribute("fill", "currentColor"), Attribute("fill-opacity", "0.75"))
                    svgText(
                        Attribute("x", "\(Self.labelWidth + length + 8)"), Attribute("y", "\(y + Self.barHeight - 6)"), Attribute("fill", "currentColor")
                    ) { "\(bar.value)" }
                }
            }
        }
    }

    /// A label cut to fit its column (the table beside holds it whole).
    static func short(_ label: String) -> String {
        label.count > 24 ? String(label.prefix(23)) + "…" : label
    }
}
