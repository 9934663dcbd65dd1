/// One event of a `text/event-stream`.
public struct ServerSentEvent: Sendable, Equatable {
    /// The last event id seen so far in the stream (what `Last-Event-ID` resumes from).
    public var id: String?
    /// `event:`, or `message` when the event named none.
    public var event: String
    /// The `data:` lines, joined with newlines.
    public var data: String

    public init(id: String?, event: String, data: String) {
        self.id = id
        self.event = event
        self.data = data
    }
}

/// Parses a `text/event-stream` fed in pieces of any size (the HTML standard's algorithm): lines end in
/// CRLF, LF or CR (a CRLF split across two pieces counts once), `field: value` with one optional space,
/// `:` comments (heartbeats) ignored, an empty line dispatches, `retry:` digits only.
public struct ServerSentEventParser: Sendable {
    public private(set) var lastEventId: String?
    /// The reconnection delay the server asked for, in milliseconds.
    public private(set) var retryMilliseconds: Int?
    private var line: [UInt8] = []
    private var afterCR = false
    private var eventType = ""
    private var data: [String] = []
    private var hasData = false

    public init() {}

    /// The events completed by `bytes`.
    public mutating func feed(_ bytes: [UInt8]) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 0x0a { continue }
            }
            switch byte {
            case 0x0d:
                afterCR = true
                if let event = endLine() { events.append(event) }
            case 0x0a:
                if let event = endLine() { events.append(event) }
            default:
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty { return dispatch() }
        if line[0] == 0x3a { return nil }  // a comment
        let colon = line.firstIndex(of: 0x3a)
        let name = String(decoding: line[..<(colon ?? line.count)], as: UTF8.self)
        var value = colon.map { line[($0 + 1)...] } ?? []
        if value.first == 0x20 { value = value.dropFirst() }
        let text = String(decoding: value, as: UTF8.self)
        switch name {
        case "event": eventType = text
        case "data":
            data.append(text)
            hasData = true
        case "id" where !value.contains(0):
            lastEventId = text
        case "retry" where !value.isEmpty && value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }):
            retryMilliseconds = Int(text)
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            eventType = ""
            data = []
            hasData = false
        }
        guard hasData else { return nil }
        return ServerSentEvent(id: lastEventId, event: eventType.isEmpty ? "message" : eventType, data: data.joined(separator: "\n"))
    }
}
