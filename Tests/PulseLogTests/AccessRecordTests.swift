import Foundation
import PulseHTTPServer
import Testing
@testable import PulseLog

@Suite struct AccessRecordTests {
    static let timestamp = Array("2026-12-03T10:52:46.000412Z".utf8)

    static func record(
        method: String = "GET", target: String = "/api/sync/asset/3f9a", status: Int = 200, note: String = "memory", completed: Bool = true
    ) -> AccessRecord {
        AccessRecord(HTTPExchange(
            client: Array("203.0.113.7".utf8), method: method, target: Array(target.utf8), status: status, bodyBytes: 204_800,
            durationNanoseconds: 412_345, note: note, completed: completed))
    }

    @Test func theJSONLineHasTheHTTPConventionsNames() throws {
        let line = Self.record(target: "/api/sync/keys?session=keynote", note: "keys:3")
            .json(timestamp: Self.timestamp, resource: LogLineTests.resource)
        let object = try LogLineTests.parse(line)
        #expect(object["Timestamp"] as? String == "2026-12-03T10:52:46.000412Z")
        #expect(object["SeverityText"] as? String == "INFO" && object["SeverityNumber"] as? Int == 9)
        #expect(object["Body"] as? String == "GET /api/sync/keys 200")
        let attributes = try #require(object["Attributes"] as? [String: Any])
        #expect(attributes["http.request.method"] as? String == "GET")
        #expect(attributes["url.path"] as? String == "/api/sync/keys")
        #expect(attributes["url.query"] as? String == "session=keynote")
        #expect(attributes["http.response.status_code"] as? Int == 200)
        #expect(attributes["http.response.body.size"] as? Int == 204_800)
        #expect(attributes["http.server.request.duration"] as? Double == 0.000412)
        #expect(attributes["client.address"] as? String == "203.0.113.7")
        #expect(attributes["pulse.note"] as? String == "keys:3")
        #expect(attributes["pulse.aborted"] == nil)
        #expect(Set(attributes.keys).count == 8)
        let resource = try #require(object["Resource"] as? [String: Any])
        #expect(resource["service.name"] as? String == "pulse-test" && resource["service.version"] as? String == "9.9.9")
    }

    @Test func theRouteTemplateIsAnAttributeWhenTheServerNamesIt() throws {
        var record = Self.record(target: "/api/sync/asset/3f9a")
        record.route = "/api/sync/asset/:hash"
        let attributes = try #require(try LogLineTests.parse(record.json(timestamp: Self.timestamp, resource: .unnamed))["Attributes"] as? [String: Any])
        #expect(attributes["http.route"] as? String == "/api/sync/asset/:hash")
        #expect(attributes["url.path"] as? String == "/api/sync/asset/3f9a")
    }

    @Test func anAbortedRefusedOrFailedRequest() throws {
        let aborted = try LogLineTests.parse(Self.record(status: 503, completed: false).json(timestamp: Self.timestamp, resource: .unnamed))
        #expect(aborted["SeverityText"] as? String == "WARN")
        #expect((aborted["Attributes"] as? [String: Any])?["pulse.aborted"] as? Bool == true)
        #expect((aborted["Resource"] as? [String: Any])?["service.name"] as? String == "unknown_service")
        let refused = try LogLineTests.parse(Self.record(method: "", target: "", status: 0, note: "refused").json(timestamp: Self.timestamp, resource: .unnamed))
        #expect(refused["Body"] as? String == "- - 0")
        let attributes = try #require(refused["Attributes"] as? [String: Any])
        #expect(attributes["http.request.method"] == nil && attributes["url.path"] == nil && attributes["http.response.status_code"] as? Int == 0)
    }

    /// What a hostile client puts in the method and the target cannot break the line, fake a field or move the
    /// cursor: the target is percent-encoded, the method escaped.
    @Test func hostileMethodAndTarget() throws {
        var record = Self.record(method: "\u{1b}[2J\"GET\u{202E}", note: "bad-request:method")
        record.exchange.target = Array("/x\"},\"SeverityText\":\"ERROR\n{\"a b".utf8) + [0xff, 0xc3] + Array("?q=\u{202E}\r\n".utf8)
        let line = record.json(timestamp: Self.timestamp, resource: .unnamed)
        let object = try LogLineTests.parse(line)
        #expect(object["SeverityText"] as? String == "INFO")
        let attributes = try #require(object["Attributes"] as? [String: Any])
        #expect(attributes["http.request.method"] as? String == "\u{1b}[2J\"GET\u{202E}")
        #expect(attributes["url.path"] as? String == "/x\"},\"SeverityText\":\"ERROR%0A{\"a%20b%FF%C3")
        #expect(attributes["url.query"] as? String == "q=%E2%80%AE%0D%0A")
        #expect(object["Body"] as? String == "\u{1b}[2J\"GET\u{202E} /x\"},\"SeverityText\":\"ERROR%0A{\"a%20b%FF%C3 200")
    }
}
