import PulseHTML
import Testing

@Suite struct PageTests {
    struct DeviceRow {
        let name: String
        let platform: String
        let rtt: Int?
    }

    /// A small page in the shape of the console's, with every kind of node: doctype, void elements,
    /// boolean attributes on and off, a conditional, a loop, hostile data, SVG.
    func page(_ devices: [DeviceRow], live: Bool) -> Node {
        .document(lang: "en") {
            title("Live view · Keynote")
            link(.rel("stylesheet"), .href("/console/static/app.3f9a.css"))
            script(src: "/console/static/app.77c1.js", .defer())
        } body: {
            main {
                h1 { "Live view" }
                p(Attribute("aria-live", "polite")) { "\(devices.count) devices, " ; live ? "live" : "not live" }
                form(.method("post"), .action("/console/sessions/keynote/advance")) {
                    input(.type("hidden"), .name("csrf"), .value("t&k"))
                    label(.for("note")) { "Note" }
                    input(.id("note"), .name("note"), .required(), .disabled(false))
                    button(.type("submit"), .hidden(!live)) { "Next slide" }
                }
                table {
                    caption { "Devices in the room" }
                    thead { tr { th(.scope("col")) { "Name" }; th(.scope("col")) { "Platform" }; th(.scope("col")) { "RTT" } } }
                    tbody {
                        for device in devices {
                            tr {
                                td { bdi { device.name } }
                                td { device.platform }
                                if let rtt = device.rtt { td(.class("num")) { "\(rtt) ms" } } else { td { "—" } }
                            }
                        }
                    }
                }
                br()
                svg(.role("img"), Attribute("viewBox", "0 0 2 1")) {
                    svgTitle("RTT")
                    rect(.width("1"), .height("1"))
                    g(Attribute("fill", "none"), .boolean("hidden")) {}
                }
            }
        }
    }

    @Test func goldenPage() {
        let html = page([DeviceRow(name: "<b>Zoë</b>", platform: "ios", rtt: 42), DeviceRow(name: "Pixel", platform: "android", rtt: nil)], live: true)
            .renderedString
        let golden = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">\
            <title>Live view · Keynote</title><link rel="stylesheet" href="/console/static/app.3f9a.css">\
            <script src="/console/static/app.77c1.js" defer></script></head><body><main><h1>Live view</h1>\
            <p aria-live="polite">2 devices, live</p><form method="post" action="/console/sessions/keynote/advance">\
            <input type="hidden" name="csrf" value="t&amp;k"><label for="note">Note</label><input id="note" name="note" required>\
            <button type="submit">Next slide</button></form><table><caption>Devices in the room</caption><thead><tr>\
            <th scope="col">Name</th><th scope="col">Platform</th><th scope="col">RTT</th></tr></thead><tbody>\
            <tr><td><bdi>&lt;b&gt;Zoë&lt;/b&gt;</bdi></td><td>ios</td><td class="num">42 ms</td></tr>\
            <tr><td><bdi>Pixel</bdi></td><td>android</td><td>—</td></tr></tbody></table><br>\
            <svg role="img" viewBox="0 0 2 1"><title>RTT</title><rect width="1" height="1"/><g fill="none" hidden="hidden"/></svg>\
            </main></body></html>
            """
        #expect(html == golden)
        #expect(page([], live: false).renderedString.contains("<button type=\"submit\" hidden>Next slide</button>"))
    }

    @Test func renderIntoAppendsAndFragmentsNest() {
        var out = Array("HTTP body: ".utf8)
        Node.fragment([.text("a"), .fragment([.text("<"), .empty]), em { "b" }]).render(into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "HTTP body: a&lt;<em>b</em>")
        #expect(Node.empty.render().isEmpty)
        #expect(Node.doctype.renderedString == "<!doctype html>")
        #expect(div(.none, .class("x"), .none).renderedString == "<div class=\"x\"></div>")
    }

    /// Elements write into their children's buffers in place when they can: a node kept and used again
    /// must still be what it was (copy on write).
    @Test func aNodeUsedSeveralTimesStaysItself() {
        let cell = td { "x" }
        let row = tr { cell; cell }
        let body = tbody { row; tr { cell }; [cell, cell] }
        #expect(body.renderedString == "<tbody><tr><td>x</td><td>x</td></tr><tr><td>x</td></tr><td>x</td><td>x</td></tbody>")
        #expect(cell.renderedString == "<td>x</td>")
        #expect(row.renderedString == "<tr><td>x</td><td>x</td></tr>")
        let text = Node.text("a<b")
        #expect(p { text; text }.renderedString == "<p>a&lt;ba&lt;b</p>" && text.renderedString == "a&lt;b")
    }

    @Test func refusedAttributeNamesTrap() async {
        await #expect(processExitsWith: .failure) { _ = Attribute("onclick", "x") }
        await #expect(processExitsWith: .failure) { _ = Attribute("ONLOAD", "x") }
        await #expect(processExitsWith: .failure) { _ = Attribute("style", "color: red") }
        await #expect(processExitsWith: .failure) { _ = Attribute("srcdoc", "<script>") }
        await #expect(processExitsWith: .failure) { _ = Attribute("a b", "x") }
        await #expect(processExitsWith: .failure) { _ = Attribute.boolean("x=\"y\"") }
        await #expect(processExitsWith: .failure) { _ = Attribute("", "x") }
    }
}
