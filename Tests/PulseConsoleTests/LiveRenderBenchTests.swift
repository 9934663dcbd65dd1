import Foundation
import PulseCore
import PulseServerStorage
import Testing
@testable import PulseConsole

/// How long the live view's table takes to render for a room of 10,000 devices (the size), and that
/// a hostile name stays text at that size.
@Suite struct LiveRenderBenchTests {
    @Test func renderBenchLiveViewOfARoomOf10000Devices() {
        let rows: [(String, LiveRow)] = (0..<10_000).map { index in
            let sample = DiagSample(
                sessionId: "keynote", deviceId: "device-\(index)", receivedAt: 1_764_770_000 + Int64(index % 60), build: "2.\(index % 7).0",
                platform: index % 2 == 0 ? "ios" : "android", connection: ["online": .bool(index % 9 != 0), "rttMs": .int(20 + index % 300), "effectiveType": "wifi"])
            return ("device-\(index)", LiveRow(sample, name: index == 0 ? "<img src=x onerror=alert(1)>" : "Phone \(index)"))
        }
        var times: [Double] = []
        var html: [UInt8] = []
        for _ in 0..<11 {
            let start = DispatchTime.now().uptimeNanoseconds
            html = LivePage.view(session: "keynote", title: "Keynote", rows: Array(rows.prefix(LivePage.maxRows)), total: rows.count, streams: 9_000, window: 60, now: 1_764_770_060)
                .content.render()
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        times.sort()
        print("console render bench: live view, 10,000 devices (\(LivePage.maxRows) rows), \(html.count) bytes: median \(times[5]) ms, max \(times.last ?? 0) ms (11 renders, debug build)")
        let text = String(decoding: html, as: UTF8.self)
        #expect(text.contains("&lt;img src=x onerror=alert(1)&gt;") && !text.contains("<img"))
        #expect(text.components(separatedBy: "<tr id=\"device-").count - 1 == LivePage.maxRows)
        #expect(text.contains("Showing the 200 most recently seen of 10000 devices"))
    }
}
