import PulseCore
import PulseServerStorage

/// The end-of-event report of one session: one row per device that posted connection samples (app and
/// web clients alike), from every sample the session received.
///
/// | column | meaning |
/// |---|---|
/// | `deviceId`, `name`, `platform` | the device (name as enrolled) |
/// | `build` | the app version of its newest sample (`builds` in JSON: every one seen, in order) |
/// | `samples`, `offlineSamples` | how many samples, how many said `online: false` |
/// | `firstSeen`, `lastSeen` | the server's clock at its first and last sample (UTC) |
/// | `rttMsMedian`, `downlinkKbpsMedian` | medians of the samples that had them (empty: none had) |
/// | `effectiveType` | the newest sample's, if any |
public struct StaffReport: Sendable {
    /// One device of the report (the console's report page reads these).
    public struct Row: Sendable {
        public var deviceId: String
        public var name: String
        public var platform: String
        public var builds: [String] = []
        public var samples = 0
        public var offline = 0
        public var firstSeen: Int64
        public var lastSeen: Int64
        public var rtts: [Double] = []
        public var downlinks: [Double] = []
        public var effectiveType: String?
    }

    /// One slice of "devices over time".
    public struct Slice: Sendable, Equatable {
        /// Its start (the server's clock, Unix seconds).
        public var start: Int64
        /// Devices with at least one sample in it.
        public var devices: Int
    }

    public let session: SessionRecord
    public let rows: [Row]
    public let generatedAt: Int64
    public let sampleCount: Int
    /// Devices over time: `timelineSlices` equal slices of the samples' span (fewer when it is shorter in
    /// seconds), each with the devices that sent a sample in it (the console's chart; not in the JSON or CSV).
    public let timeline: [Slice]
    public static let timelineSlices = 12

    public init(session: SessionRecord, samples: [DiagSample], devices: [DeviceRecord], generatedAt: Int64) {
        self.session = session
        self.generatedAt = generatedAt
        sampleCount = samples.count
        let names = Dictionary(devices.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        // Rows in first-seen order, each updated in place: a copy of a row per sample would copy its arrays.
        var rows: [Row] = []
        var index: [String: Int] = [:]
        for sample in samples {
            let at = index[sample.deviceId] ?? {
                index[sample.deviceId] = rows.count
                rows.append(Row(deviceId: sample.deviceId, name: names[sample.deviceId] ?? "", platform: sample.platform,
                                firstSeen: sample.receivedAt, lastSeen: sample.receivedAt))
                return rows.count - 1
            }()
            rows[at].samples += 1
            rows[at].platform = sample.platform
            if rows[at].builds.last != sample.build { rows[at].builds.append(sample.build) }
            rows[at].firstSeen = min(rows[at].firstSeen, sample.receivedAt)
            rows[at].lastSeen = max(rows[at].lastSeen, sample.receivedAt)
            if case .bool(false)? = sample.connection["online"] { rows[at].offline += 1 }
            if let rtt = Self.number(sample.connection["rttMs"]) { rows[at].rtts.append(rtt) }
            if let downlink = Self.number(sample.connection["downlinkKbps"]) { rows[at].downlinks.append(downlink) }
            if let type = sample.connection["effectiveType"]?.stringValue { rows[at].effectiveType = type }
        }
        self.rows = rows
        timeline = Self.timeline(samples)
    }

    private static func timeline(_ samples: [DiagSample]) -> [Slice] {
        guard let first = samples.map(\.receivedAt).min(), let last = samples.map(\.receivedAt).max() else { return [] }
        let span = max(1, last - first + 1)
        let count = Int(min(Int64(timelineSlices), span))
        let width = (span + Int64(count) - 1) / Int64(count)
        var devices = Array(repeating: Set<String>(), count: count)
        for sample in samples {
            devices[Int(min(Int64(count - 1), (sample.receivedAt - first) / width))].insert(sample.deviceId)
        }
        return devices.enumerated().map { Slice(start: first + Int64($0.offset) * width, devices: $0.element.count) }
    }

    private static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case let .int(whole)?: Double(whole)
        case let .double(fraction)?: fraction
        default: nil
        }
    }

    public static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    private static func value(_ number: Double?) -> JSONValue {
        guard let number else { return .null }
        return number == number.rounded() && abs(number) < 1e15 ? .int(Int(number)) : .double(number)
    }

    var json: JSONValue {
        [
            "session": .string(session.id), "state": .string(session.state.rawValue),
            "maxShown": session.maxShown.map { .int($0) } ?? .null, "deckVersion": .int(session.deckVersion),
            "generatedAt": .string(TimeText.iso(generatedAt)), "devices": .int(rows.count), "samples": .int(sampleCount),
            "rows": .array(rows.map { row in
                [
                    "deviceId": .string(row.deviceId), "name": .string(row.name), "platform": .string(row.platform),
                    "build": .string(row.builds.last ?? ""), "builds": .array(row.builds.map { .string($0) }),
                    "samples": .int(row.samples), "offlineSamples": .int(row.offline),
                    "firstSeen": .string(TimeText.iso(row.firstSeen)), "lastSeen": .string(TimeText.iso(row.lastSeen)),
                    "rttMsMedian": Self.value(Self.median(row.rtts)), "downlinkKbpsMedian": Self.value(Self.median(row.downlinks)),
                    "effectiveType": row.effectiveType.map { .string($0) } ?? .null,
                ]
            }),
        ]
    }

    static let csvHeader = "deviceId,name,platform,build,samples,offlineSamples,firstSeen,lastSeen,rttMsMedian,downlinkKbpsMedian,effectiveType"

    var csv: String {
        var lines = [Self.csvHeader]
        for row in rows {
            let fields = [
                row.deviceId, row.name, row.platform, row.builds.last ?? "", String(row.samples), String(row.offline),
                TimeText.iso(row.firstSeen), TimeText.iso(row.lastSeen), Self.text(Self.median(row.rtts)),
                Self.text(Self.median(row.downlinks)), row.effectiveType ?? "",
            ]
            lines.append(fields.map(Self.csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    private static func text(_ number: Double?) -> String {
        guard let number else { return "" }
        return number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }

    /// What a spreadsheet may split a CSV line on: the delimiters Excel's and LibreOffice's import offer
    /// (comma, semicolon, tab, space; `|` as the usual "other", and a list separator of a locale), and line ends.
    static let separators: Set<Unicode.Scalar> = [",", ";", "\t", " ", "|", "\r", "\n"]
    /// What makes a cell a formula (or, for tab and CR, lets one through) when it starts with it.
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

    /// One CSV field that stays text in any spreadsheet, whatever it splits on. Device names and builds come
    /// from devices: `phone;=cmd|' /C calc'!A0;x` is one cell with `,` as the delimiter, three with `;`.
    ///
    /// - First, what `DeviceText` escapes in listings (controls, bidirectional controls, line separators) is
    ///   written as `\u{…}`: an export is read by people too.
    /// - The formula guard then runs on every piece a spreadsheet could make of the field, not only its start:
    ///   a `'` goes before each `=`, `+`, `-`, `@`, tab or CR that begins the field or follows a separator or a
    ///   quote (a spreadsheet reading another delimiter may take a quote after one for the start of a quoted
    ///   cell), so no split leaves a cell that starts with one (`phone;'=cmd|' /C calc'!A0;x`).
    /// - Then RFC 4180 quoting for every field holding a separator or a quote, so a spreadsheet that honours
    ///   quotes (all of them, with any delimiter) keeps the field whole.
    static func csvField(_ text: String) -> String {
        var guarded = String.UnicodeScalarView()
        var pieceStarts = true
        var quote = false
        for scalar in DeviceText.escaped(text, quotes: false).unicodeScalars {
            if pieceStarts && formulaStarts.contains(scalar) { guarded.append("'") }
            guarded.append(scalar)
            pieceStarts = separators.contains(scalar) || scalar == "\""
            quote = quote || pieceStarts
        }
        let field = String(guarded)
        guard quote else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
