import Foundation
import PulseCommandLine
import PulseCore
import PulseServerStorage
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseDevice
@testable import PulseDeviceCLI

/// `pulse-device enroll --link`: the console's enrollment link (docs/console.md) against the in-process server.
@Suite struct EnrollLinkCommandTests {
    func run(_ arguments: [String]) -> (code: Int32, output: DeviceCommandTests.Captured) {
        let captured = DeviceCommandTests.Captured()
        return (DeviceCommand.main(arguments, console: captured.console), captured)
    }

    @Test func enrollsFromADeviceCodeLinkAndAnAttendeeLink() throws {
        let work = try TestFolder()
        let server = try TestSyncServer(package: try SamplePackage.build(in: work.url))
        let temporary = try TestFolder()

        let code = try EnrollmentLink(server: server.url.absoluteString, credential: .deviceCode(try server.deviceCode(.session("keynote"))))
        let phone = run(["enroll", "--link", code.text, "--device-dir", temporary.path("phone"), "--json"])
        #expect(phone.code == 0, "\(phone.output.errors)")
        let phoneReply = try JSONValue.parse(Array(phone.output.lastOut.utf8))
        #expect(phoneReply["scope"]?["kind"]?.stringValue == "session" && phoneReply["scope"]?["id"]?.stringValue == "keynote")
        #expect(phoneReply["server"]?.stringValue == server.url.absoluteString)

        // A device code is single-use: the same link again is the flat 404.
        let again = run(["enroll", "--link", code.text, "--device-dir", temporary.path("again")])
        #expect(again.code != 0 && again.output.errors.first?.contains("refused the token") == true, "\(again.output.errors)")

        let attendee = try EnrollmentLink(
            server: server.url.absoluteString, credential: .registrationToken(try server.registrationToken(series: "devconf-2026")))
        for name in ["ada", "grace"] {
            let enrolled = run(["enroll", "--link", attendee.text, "--device-dir", temporary.path(name), "--json"])
            #expect(enrolled.code == 0, "\(enrolled.output.errors)")
            let reply = try JSONValue.parse(Array(enrolled.output.lastOut.utf8))
            #expect(reply["scope"]?["kind"]?.stringValue == "series" && reply["scope"]?["id"]?.stringValue == "devconf-2026")
        }
    }

    @Test func aHostileLinkIsOneLineWithoutTheSecretAndMixingOptionsIsAUsageError() throws {
        let temporary = try TestFolder()
        let bad = run(["enroll", "--link", "pulse://enroll?code=ABCD-EFGH-JKMN", "--device-dir", temporary.path("a")])
        #expect(bad.code == 65, "\(bad.output.errors)")
        #expect(bad.output.errors.count == 1 && bad.output.errors[0].contains("--link: the enrollment link has no #code="))
        #expect(!bad.output.errors[0].contains("ABCD-EFGH-JKMN"))

        let both = run(["enroll", "--link", "https://h/console/enroll#code=ABCD-EFGH-JKMN", "--server", "https://h", "--device-dir", temporary.path("b")])
        #expect(both.code == 64 && both.output.errors.first?.contains("not both") == true, "\(both.output.errors)")
        let neither = run(["enroll", "--device-dir", temporary.path("c")])
        #expect(neither.code == 64 && neither.output.errors.first?.contains("missing --server") == true, "\(neither.output.errors)")
        #expect(!FileManager.default.fileExists(atPath: temporary.path("a") + "/device.json"))
    }
}
