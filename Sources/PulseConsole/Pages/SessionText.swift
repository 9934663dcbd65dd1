import PulseServerStorage

/// How the pages write a session's facts.
enum SessionText {
    /// "2026-12-03 09:30–10:30 Europe/Berlin": the times as imported, in the session's own timezone (the
    /// manifest's RFC 3339 times carry its offset), without converting them to the server's.
    static func time(_ info: SessionCatalog.Info?) -> String {
        guard let info, let start = info.startsAt, let (day, from) = split(start) else { return "—" }
        var text = "\(day) \(from)"
        if let end = info.endsAt, let (endDay, to) = split(end) {
            text += endDay == day ? "–\(to)" : " – \(endDay) \(to)"
        }
        if let zone = info.timezone { text += " \(zone)" } else if let offset = offset(start) { text += " UTC\(offset)" }
        return text
    }

    /// ("2026-12-03", "09:30") of an RFC 3339 time.
    static func split(_ rfc3339: String) -> (String, String)? {
        let bytes = Array(rfc3339.utf8)
        guard bytes.count >= 16, bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: " ") else { return nil }
        return (String(decoding: bytes[0..<10], as: UTF8.self), String(decoding: bytes[11..<16], as: UTF8.self))
    }

    /// "+01:00" of an RFC 3339 time ("" for Z).
    static func offset(_ rfc3339: String) -> String? {
        guard rfc3339.utf8.count >= 25 else { return rfc3339.hasSuffix("Z") ? "" : nil }
        return String(rfc3339.suffix(6))
    }

    static func state(_ state: SessionState) -> String {
        switch state {
        case .draft: "Draft"
        case .scheduled: "Scheduled"
        case .rehearsal: "Rehearsal"
        case .live: "Live"
        case .ended: "Ended"
        }
    }
}
