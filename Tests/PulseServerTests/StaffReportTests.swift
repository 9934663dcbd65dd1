import Foundation
import PulseCore
import PulseCrypto
import Testing
@testable import PulseServer
@testable import PulseServerStorage
@testable import PulseStaffAPI
@testable import PulseSyncAPI

/// The report's CSV read as spreadsheets read it (issue 17, item 3): with `,`, `;` or tab as the delimiter,
/// quotes honoured, and also split naively on every separator a spreadsheet offers; no cell may start
/// with `=`, `+`, `-`, `@`, a tab or a CR.
@Suite struct StaffReportTests {
    static let hostileNames = [
        "phone;=cmd|' /C calc'!A0;x", "a,=1+1", "x =HYPERLINK(\"http://example.invalid\",\"y\")", "@SUM(A1)", "-2+3", "+1",
        "ok|=x", "semi;+y", "quote\"=q", "comma,@x", "twice;;=x", "end;", "a;\"=b", "\"=c\"", "x;\"\"=d",
    ]
    /// Names with control characters cannot be enrolled any more; a database from before may hold them.
    static let storedNames = ["tab\t=1", "cr\r=1", "lf\n@x", "crlf\r\n-x", "\t=lead"]

    @Test func noCellStartsAFormulaWhateverTheDelimiter() throws {
        let harness = try SyncHarness(configure: { $0.deviceLimit = RateLimit(rate: 1000, burst: 1000) })
        try harness.seed(["talk"], state: .live)
        var devices: [TestDevice] = []
        for name in Self.hostileNames { devices.append(try harness.enroll(try harness.code(.session("talk")), name: name)) }
        for name in Self.storedNames {
            let code = try harness.code(.session("talk"))
            let key = try P256.PrivateKey()
            let hash = try #require(CredentialSecret.hash(code))
            let record = try #require(try harness.storage.enroll(
                credentialHash: hash,
                device: NewDevice(id: try DeviceID.generate(), publicKey: key.publicKey.derRepresentation, platform: "ios", name: name),
                at: harness.clock.seconds))
            devices.append(TestDevice(id: record.id, key: key))
        }
        for device in devices {
            let body = JSONValue.object(["build": "1.0;=2+2 -x", "platform": "ios", "online": true]).canonicalBytes
            #expect(try harness.client().signed("POST", "/api/sessions/talk/diag", by: device, at: harness.clock.seconds, body: body).status == 204)
        }
        let staff = try harness.staffToken()
        let csv = try harness.client().request("GET", "/api/staff/sessions/talk/report?format=csv", [("Authorization", "Bearer \(staff)")]).text

        for delimiter in [",", ";", "\t"] as [Character] {
            // Read with another delimiter, quoted commas and line ends inside names may split rows: cells all the same.
            let rows = Self.parse(csv, delimiter: delimiter)
            if delimiter == "," { #expect(rows.count == devices.count + 1) }
            for cell in rows.joined() {
                #expect(!Self.startsFormula(cell), "delimiter \(delimiter.debugDescription): cell \(cell.debugDescription)")
            }
        }
        // A reader that ignores quotes, splitting on any separator at all.
        let naive = csv.unicodeScalars.split(whereSeparator: { StaffReport.separators.contains($0) || $0 == "\"" }).map { String($0) }
        for cell in naive {
            #expect(!Self.startsFormula(cell), "naive split: \(cell.debugDescription)")
        }
        // With the comma (the file's own delimiter) each name is one cell, the text kept behind its guards.
        let rows = Self.parse(csv, delimiter: ",")
        for (device, name) in zip(devices, Self.hostileNames + Self.storedNames) {
            let row = try #require(rows.first { $0.first == device.id })
            #expect(row.count == StaffReport.csvHeader.split(separator: ",").count)
            let shown = DeviceText.escaped(name, quotes: false)
            #expect(row[1].replacingOccurrences(of: "'", with: "") == shown.replacingOccurrences(of: "'", with: ""), "\(name.debugDescription) → \(row[1].debugDescription)")
        }
    }

    @Test func plainFieldsStayAsTheyWere() {
        #expect(StaffReport.csvField("Ada") == "Ada")
        #expect(StaffReport.csvField("2.4.1") == "2.4.1")
        #expect(StaffReport.csvField("") == "")
        #expect(StaffReport.csvField("=1") == "'=1")
        #expect(StaffReport.csvField("a;=b") == "\"a;'=b\"")
        #expect(StaffReport.csvField("say \"hi\"") == "\"say \"\"hi\"\"\"")
    }

    static func startsFormula(_ cell: String) -> Bool {
        guard let first = cell.unicodeScalars.first else { return false }
        return StaffReport.formulaStarts.contains(first)
    }

    /// RFC 4180 as spreadsheets read it, with any delimiter: quoted fields may hold anything ("" is a quote).
    static func parse(_ text: String, delimiter: Character) -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], field = ""
        var quoted = false, index = text.unicodeScalars.startIndex
        let scalars = text.unicodeScalars
        let separator = delimiter.unicodeScalars.first!
        while index < scalars.endIndex {
            let scalar = scalars[index]
            index = scalars.index(after: index)
            if quoted {
                if scalar == "\"" {
                    if index < scalars.endIndex, scalars[index] == "\"" { field.unicodeScalars.append("\""); index = scalars.index(after: index) } else { quoted = false }
                } else {
                    field.unicodeScalars.append(scalar)
                }
            } else if scalar == "\"" && field.isEmpty {
                quoted = true
            } else if scalar == separator {
                row.append(field); field = ""
            } else if scalar == "\r" || scalar == "\n" {
                if scalar == "\r", index < scalars.endIndex, scalars[index] == "\n" { index = scalars.index(after: index) }
                row.append(field); field = ""
                rows.append(row); row = []
            } else {
                field.unicodeScalars.append(scalar)
            }
        }
        if !field.isEmpty || !row.isEmpty { row.append(field); rows.append(row) }
        return rows
    }
}

/// `TimeText.iso` (PulseServerStorage's, which the responders use) writes what `ISO8601DateFormatter` with `.withInternetDateTime` wrote, without making one.
@Suite struct TimeTextTests {
    @Test func writesWhatTheFormatterWrote() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        var generator = SystemRandomNumberGenerator()
        let moments: [Int64] = [0, 1, 59, 86_399, 86_400, 951_782_400, 1_796_112_000, 4_102_444_800, 253_402_300_799]
            + (0..<2000).map { _ in Int64.random(in: 0...4_102_444_800, using: &generator) }
        for seconds in moments {
            #expect(PulseServerStorage.TimeText.iso(seconds) == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))), "\(seconds)")
        }
    }
}
