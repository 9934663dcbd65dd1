import Foundation
import PulseHTML

/// A row of the console's live view.
struct DeviceRow {
    let name: String
    let platform: String
    let build: String
    let rttMilliseconds: Int
    let lastSeen: String
}

struct HTMLBench {
    let rows: Int
    let runs: Int

    /// Device names as they come: mostly plain, one in fifty hostile (escaped on the slow path).
    func model() -> [DeviceRow] {
        (0..<rows).map { index in
            DeviceRow(
                name: index % 50 == 0 ? "<img src=x onerror=alert(\(index))> & \"Zoë\"" : "Phone \(index) of the front row",
                platform: index % 3 == 0 ? "android" : "ios", build: "2026.11.\(index % 30)", rttMilliseconds: 20 + index % 180,
                lastSeen: "2026-11-29T17:\(10 + index % 50):00Z")
        }
    }

    /// The view as the console would write it.
    func view(_ devices: [DeviceRow]) -> Node {
        table {
            caption { "Devices in the room" }
            thead { tr { th { "Name" }; th { "Platform" }; th { "Build" }; th { "RTT" }; th { "Last seen" } } }
            tbody {
                for device in devices {
                    tr {
                        td { bdi { device.name } }
                        td { device.platform }
                        td { device.build }
                        td(.class("num")) { String(device.rttMilliseconds) }
                        td { time(.datetime(device.lastSeen)) { device.lastSeen } }
                    }
                }
            }
        }
    }

    /// The same bytes appended to one buffer by hand, each text still escaped through the public API
    /// (`Node.text(…).render(into:)`): the builder's cost without elements and children.
    func byHand(_ devices: [DeviceRow]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        out += "<table><caption>Devices in the room</caption><thead><tr><th>Name</th><th>Platform</th><th>Build</th><th>RTT</th><th>Last seen</th></tr></thead><tbody>".utf8
        for device in devices {
            out += "<tr><td><bdi>".utf8
            Node.text(device.name).render(into: &out)
            out += "</bdi></td><td>".utf8
            Node.text(device.platform).render(into: &out)
            out += "</td><td>".utf8
            Node.text(device.build).render(into: &out)
            out += "</td><td class=\"num\">".utf8
            out += String(device.rttMilliseconds).utf8
            out += "</td><td><time datetime=\"".utf8
            Node.text(device.lastSeen).render(into: &out)
            out += "\">".utf8
            Node.text(device.lastSeen).render(into: &out)
            out += "</time></td></tr>".utf8
        }
        out += "</tbody></table>".utf8
        return out
    }

    /// `count` builds and renders (or hand-written tables), no clock.
    func count(_ count: Int, byHand: Bool) -> Int32 {
        let devices = model()
        var bytes = 0
        for _ in 0..<count { bytes += byHand ? self.byHand(devices).count : view(devices).render().count }
        print("count=\(count) bytes=\(bytes)")
        return 0
    }

    func run() throws -> Int32 {
        let devices = model()
        let expected = byHand(devices)
        guard view(devices).render() == expected else {
            FileHandle.standardError.write(Data("pulse-bench-blocks: the builder and the hand-written table differ\n".utf8))
            return 1
        }
        var build: [Double] = [], render: [Double] = [], both: [Double] = [], hand: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<runs {
            // Interleaved, so load from other processes falls on both sides alike.
            var start = clock.now
            let node = view(devices)
            let built = clock.now
            let bytes = node.render()
            let rendered = clock.now
            build.append(milliseconds(built - start))
            render.append(milliseconds(rendered - built))
            both.append(milliseconds(rendered - start))
            start = clock.now
            let handBytes = byHand(devices)
            hand.append(milliseconds(clock.now - start))
            precondition(bytes.count == handBytes.count)
        }
        let ratio = median(both) / median(hand)
        print("rows=\(rows) bytes=\(expected.count) runs=\(runs) (milliseconds: median, min)")
        print(String(format: "view(devices): the Node, markup written   %7.2f %7.2f", median(build), build.min() ?? 0))
        print(String(format: "node.render(): its bytes                   %7.2f %7.2f", median(render), render.min() ?? 0))
        print(String(format: "both                                       %7.2f %7.2f", median(both), both.min() ?? 0))
        print(String(format: "the same bytes appended by hand            %7.2f %7.2f", median(hand), hand.min() ?? 0))
        print(String(format: "ratio builder / by hand %.2f", ratio))
        return 0
    }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
