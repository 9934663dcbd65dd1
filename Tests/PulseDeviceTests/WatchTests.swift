import Foundation
import PulseServer
import PulseServerStorage
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseDevice

@Suite struct WatchTests {
    /// The morning of the sample workshop, 2026-12-04T09:00:00Z: before its `solutions` resource, gated by the
    /// server's clock (`releaseAt` 2026-12-04T11:40:00+01:00), is due.
    static let workshopMorning = 1_796_374_800.0

    /// Every advance reaches the watch, which fetches the keys and opens the new slide: each within a second of
    /// the presenter's advance. A replaced slide reaches it as one blob; the end stops it.
    ///
    /// The server's clock (and the device's, so that no signature goes stale) runs from the workshop's morning,
    /// whatever the day the test runs: on the real clock, from 2026-12-04T10:40Z on, going live also released the
    /// clock-gated resource, a manifest change and a sync of its own before the one slide 3 causes, and the count
    /// of syncs below was 2 (it was never a matter of time: it failed within the 2 s and every time since).
    @Test func eachAdvanceUnlocksItsSlideWithinASecondAndAReplacedSlideCostsOneBlob() throws {
        let work = try TestFolder()
        let package = try SamplePackage.build(in: work.url)
        let started = Date().timeIntervalSince1970
        let clock: @Sendable () -> Double = { Self.workshopMorning + (Date().timeIntervalSince1970 - started) }
        let server = try TestSyncServer(package: package, clock: clock)
        let device = try TestDevice(server.url, token: try server.deviceCode(.session("workshop")), clock: DeviceClock(system: clock))
        _ = try device.sync(.session("workshop"))
        var options = Watcher.Options()
        options.untilEnded = true
        let watch = WatchRun(device, session: "workshop", options: options)
        #expect(eventually(within: 5) { watch.isConnected })
        try server.set("workshop", SessionUpdate(state: .live))
        for slide in 0...3 {
            let advancedAt = Date().timeIntervalSince1970
            try server.advance("workshop", to: slide)
            #expect(eventually(within: 2) { watch.unlocked.contains { $0.slide == slide } }, "slide \(slide) was not unlocked")
            let unlocked = try #require(watch.unlocked.first { $0.slide == slide })
            #expect(unlocked.at - advancedAt < 1, "slide \(slide) took \(unlocked.at - advancedAt) s")
            #expect(unlocked.eventToKey < 1)
        }
        #expect(watch.unlocked.map(\.slide) == [0, 1, 2, 3], "no slide beyond the frontier")
        // Advancing to 3 released the workshop's gated resource (releaseAfterSlide 3): a new manifest, no blob.
        #expect(eventually(within: 2) { watch.syncs.count == 1 }, "\(watch.syncs.count) syncs")
        #expect(watch.syncs.allSatisfy { $0.blobsFetched == 0 })
        let syncsBefore = watch.syncs.count

        try package.replaceWorkshopSlide(2)
        try package.rebuild()
        try server.importPackage(package)
        // The watch reports each slide as it opens it: wait for all four (or the time) before comparing.
        #expect(eventually(within: 5) { watch.unlocked.filter { $0.deck == 2 }.count >= 4 })
        let replaced = watch.syncs.dropFirst(syncsBefore)
        #expect(replaced.count == 1 && replaced.first?.blobsFetched == 1, "one sync, one blob: \(replaced.map(\.blobsFetched))")
        #expect(watch.unlocked.filter { $0.deck == 2 }.map(\.slide) == [0, 1, 2, 3], "the new deck opens up to the same frontier")

        try server.set("workshop", SessionUpdate(state: .ended))
        #expect(watch.finished.wait(timeout: .now() + 5) == .success, "the watch ends with the session")
        #expect(watch.failure == nil)
        #expect(watch.problems.isEmpty, "\(watch.problems)")
    }
}
