import PulseCore
import PulseServerStorage
import Testing
@testable import PulseSyncAPI

/// `LiveSamples`: only watched sessions keep samples, one per device, bounded, forgotten once taken.
@Suite struct LiveSamplesTests {
    static func sample(_ session: String, _ device: String, at time: Int64) -> DiagSample {
        DiagSample(sessionId: session, deviceId: device, receivedAt: time, build: "1", platform: "ios", connection: ["online": true])
    }

    @Test func keepsTheNewestSamplePerDeviceOfWatchedSessionsOnly() {
        let live = LiveSamples(maxDevices: 2)
        live.note(Self.sample("talk", "a", at: 1))
        #expect(live.take(session: "talk").isEmpty)  // nobody watched

        live.watch(session: "talk")
        live.note(Self.sample("talk", "a", at: 1))
        live.note(Self.sample("talk", "a", at: 2))
        live.note(Self.sample("talk", "b", at: 3))
        live.note(Self.sample("talk", "c", at: 4))  // over the bound: waits for a later look
        live.note(Self.sample("other", "a", at: 5))
        let taken = live.take(session: "talk").sorted { $0.deviceId < $1.deviceId }
        #expect(taken.map(\.deviceId) == ["a", "b"] && taken.first?.receivedAt == 2)
        #expect(live.take(session: "talk").isEmpty)
        #expect(live.take(session: "other").isEmpty)

        live.watch(session: "talk")
        live.unwatch(session: "talk")
        live.note(Self.sample("talk", "c", at: 6))
        #expect(live.take(session: "talk").count == 1)  // one watcher is left
        live.unwatch(session: "talk")
        live.note(Self.sample("talk", "c", at: 7))
        #expect(live.take(session: "talk").isEmpty)
    }
}
