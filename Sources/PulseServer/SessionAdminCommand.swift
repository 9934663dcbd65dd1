import Foundation
import PulseCore

/// The JSON of a session, shared by the staff API and `pulse-server admin session … --json` (the command
/// itself is in PulseServerCLI, as an extension of this namespace).
public enum SessionAdminCommand {
    public static func json(_ record: SessionRecord) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(record.id), "state": .string(record.state.rawValue), "allowDownload": .bool(record.allowDownload),
            "venueNetworks": .array(record.venueNetworks.map { .string($0.description) }), "packageId": .string(record.packageId),
            "packageVersion": .string(record.packageVersion), "deckVersion": .int(record.deckVersion), "slideCount": .int(record.slideCount),
            "maxShown": record.maxShown.map { .int($0) } ?? .null,
            "rehearsalMaxShown": record.rehearsalMaxShown.map { .int($0) } ?? .null,
            "updatedAt": .string(TimeText.iso(record.updatedAt)),
        ]
        if let series = record.seriesId { fields["seriesId"] = .string(series) }
        return .object(fields)
    }
}
