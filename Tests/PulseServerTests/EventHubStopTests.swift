import Foundation
import PulseTestSupport
import Synchronization
import Testing
@testable import PulseServer
@testable import PulseSyncAPI

/// The event hub's watcher thread and `stop()`: SIGTERM stops the hub before the writes drain, so no tick may
/// still be reading storage when `stop()` returns.
@Suite struct EventHubStopTests {
    @Test func stopReturnsOnlyWhenTheWatcherHasEndedAlsoAfterARestart() throws {
        let harness = try SyncHarness(configure: { $0.eventPollSeconds = 0.01 })
        let hub = harness.sync.hub
        let ticks = Mutex((started: 0, ended: 0))
        hub.onTick {
            ticks.withLock { $0.started += 1 }
            Thread.sleep(forTimeInterval: 0.3)  // a slow tick: stop() comes while it runs
            ticks.withLock { $0.ended += 1 }
        }
        for round in 1...2 {
            let before = ticks.withLock { $0.started }
            #expect(eventually(within: 5) { ticks.withLock { $0.started } > before }, "round \(round): the watcher ticks")
            hub.stop()
            let stopped = ticks.withLock { $0 }
            #expect(stopped.started == stopped.ended, "round \(round): a tick still ran after stop() returned")
            Thread.sleep(forTimeInterval: 0.1)
            #expect(ticks.withLock { $0.started } == stopped.started, "round \(round): a tick started after stop()")
            if round == 1 { hub.start() }
        }
    }
}
