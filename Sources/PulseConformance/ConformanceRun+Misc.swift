import Foundation
import PulseCore

extension ConformanceRun {
    /// §4 time (display only, public) and §5 diagnostics (signed samples; replays refused).
    func timeAndDiagRules() {
        rule("time.display") { evidence in
            let answer = try send("GET", "/api/sync/time")
            evidence.add("GET /api/sync/time without credentials → \(answer.summary)")
            try expect(answer.status == 200, "the time is not public")
            let seconds = try need(answer.json?["unixSeconds"]?.intValue, "unixSeconds in the answer")
            evidence.add("the server's clock is \(seconds - Int(Date().timeIntervalSince1970)) s from the suite's (display only: never a reason to refuse)")
        }

        rule("diag.sample") { evidence in
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            let target = "/api/sessions/\(session)/diag"
            let build = "pulse-conformance \(Int(Date().timeIntervalSince1970))"
            let body = JSONValue.object(["build": .string(build), "platform": "conformance", "online": true, "rttMs": 12]).canonicalBytes
            let answer = try signed("POST", target, by: device, body: body)
            evidence.add("signed POST \(target) → \(answer.summary)")
            try expect((200..<300).contains(answer.status), "a signed sample was refused")
            let unsigned = try send("POST", target, headers: [("Content-Type", "application/json")], body: body)
            evidence.add("the same sample unsigned → \(unsigned.summary)")
            try expect(unsigned.status == 404, "an unsigned sample was answered \(unsigned.status), not the flat 404")
            if let staff {
                let live = try staff.live(session)
                let seen = live["devices"]?.arrayValue?.contains { $0["deviceId"]?.stringValue == device.id && $0["build"]?.stringValue == build } ?? false
                evidence.add("the staff live view \(seen ? "shows" : "does not show") the device with build \"\(build)\"")
                try expect(seen, "the sample is not in the moderator's live view")
            }
        }

        rule("diag.replay") { evidence in
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            let target = "/api/sessions/\(session)/diag"
            let body = JSONValue.object(["build": "pulse-conformance replay", "platform": "conformance", "online": true]).canonicalBytes
            let header = try device.header("POST", wire.prefix + target, body: body, at: serverNow)
            let first = try send("POST", target, headers: [("Content-Type", "application/json"), header], body: body)
            evidence.add("a signed sample → \(first.summary)")
            try expect((200..<300).contains(first.status), "the first send was refused")
            let again = try send("POST", target, headers: [("Content-Type", "application/json"), header], body: body)
            evidence.add("the same bytes again → \(again.summary)")
            try expect(again.status == 404, "a replayed signed POST was answered \(again.status), not the flat 404")
        }
    }
}
