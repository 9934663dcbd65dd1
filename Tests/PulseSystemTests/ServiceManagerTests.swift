import Foundation
import PulseSystem
import PulseSystemTesting
import Testing

/// The notification protocol of `Type=notify` units (issue 19 item 4), against a socket bound the way systemd
/// binds its own.
@Suite struct ServiceManagerTests {
    @Test func withoutNotifySocketNothingIsSent() {
        let manager = ServiceManager(environment: [:])
        #expect(!manager.isListening)
        manager.ready(status: "serving")  // does nothing, and does not fail
    }

    @Test(arguments: [false, true])
    func readyReloadingAndStoppingArriveAsSystemdReadsThem(abstract: Bool) throws {
        let socket = try NotifySocket(abstract: abstract)
        let manager = ServiceManager(environment: socket.environment)
        #expect(manager.isListening)
        manager.ready(status: "serving on http://127.0.0.1:8080")
        #expect(socket.next() == ["READY=1", "STATUS=serving on http://127.0.0.1:8080"])

        let before = SystemClock.monotonicNanoseconds() / 1000
        manager.reloading()
        let reloading = try #require(socket.next())
        #expect(reloading.first == "RELOADING=1")
        let stamp = try #require(reloading.last.flatMap { $0.hasPrefix("MONOTONIC_USEC=") ? UInt64($0.dropFirst(15)) : nil })
        #expect(stamp >= before && stamp <= SystemClock.monotonicNanoseconds() / 1000, "MONOTONIC_USEC is CLOCK_MONOTONIC in µs")

        manager.status("two lines\nbecome one")
        #expect(socket.next() == ["STATUS=two lines become one"], "a newline would start a new assignment")
        manager.stopping(status: "SIGTERM")
        #expect(socket.next() == ["STOPPING=1", "STATUS=SIGTERM"])
    }

    @Test func socketNamesAreAPathOrAnAbstractName() {
        #expect(ServiceManager(environment: ["NOTIFY_SOCKET": "/run/systemd/notify"]).isListening)
        #expect(ServiceManager(environment: ["NOTIFY_SOCKET": "@/org/freedesktop/systemd1/notify/123"]).isListening)
        for bad in ["", "relative/path", "/" + String(repeating: "x", count: 200), "/a\u{0}b"] {
            #expect(!ServiceManager(environment: ["NOTIFY_SOCKET": bad]).isListening, "\(bad.debugDescription)")
        }
    }
}
