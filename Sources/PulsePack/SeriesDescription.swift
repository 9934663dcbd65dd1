import Foundation
import PulseCore

/// A series as its description file gives it: the day-grouped programme, rooms, the sessions it links
/// and the organization's white-label app config.
struct SeriesDescription {
    let id: String
    let sessionFiles: [URL]
    /// Manifest fields except the session refs: series, rooms, days.
    let content: [String: JSONValue]
    /// The app config body (without packageVersion) and its org slug, if the series has an `org`.
    let appConfig: (slug: String, body: JSONValue)?
    /// Session ids the programme links to; each must be one of the built sessions.
    let linkedSessionIds: [(id: String, path: String)]

    init(file: URL, loader: InputLoader) throws {
        let reader = try loader.readJSON(file)
        id = try reader.string("id", matching: Patterns.id, what: "an id of lowercase letters, digits and dashes")
        let title = try reader.string("title")
        let timezone = try reader.timeZone("timezone")
        let rooms = try reader.objects("rooms") { room in
            JSONValue.compact([
                "id": .string(try room.string("id", matching: Patterns.id, what: "a room id")),
                "name": .string(try room.string("name")),
                "capacity": try room.optionalInt("capacity", in: 1...1_000_000).map(JSONValue.int),
            ])
        }
        try checkUniqueIds(rooms, list: "room", in: file.path) { "rooms[\($0)]" }
        let roomIds = Set(rooms.compactMap { $0["id"]?.stringValue })
        var links: [(String, String)] = []
        let days = try reader.objects("days") { day in
            let items = try day.objects("items") { item in
                let room = try item.optionalString("room")
                if let room, !roomIds.contains(room) { throw item.error("room", "names \"\(room)\", which is not in rooms") }
                let session = try item.optionalString("session", matching: Patterns.id, what: "a session id")
                if let session { links.append((session, "\(item.path).session")) }
                return JSONValue.compact([
                    "id": .string(try item.string("id", matching: Patterns.id, what: "an item id")),
                    "start": .string(try item.string("start", matching: Patterns.clock, what: "a clock time HH:MM")),
                    "end": .string(try item.string("end", matching: Patterns.clock, what: "a clock time HH:MM")),
                    "title": .string(try item.string("title")),
                    "kind": .string(try item.string("kind", oneOf: ["talk", "workshop", "break", "social", "other"])),
                    "room": room.map(JSONValue.string),
                    "session": session.map(JSONValue.string),
                ])
            }
            return JSONValue.object([
                "date": .string(try day.date("date")),
                "items": .array(items),
            ])
        }
        var itemPaths: [String] = []
        for (dayIndex, day) in days.enumerated() {
            itemPaths += (day["items"]?.arrayValue ?? []).indices.map { "days[\(dayIndex)].items[\($0)]" }
        }
        try checkUniqueIds(days.flatMap { $0["items"]?.arrayValue ?? [] }, list: "item", in: file.path) { itemPaths[$0] }
        sessionFiles = try reader.strings("sessions").map { InputLoader.resolve($0, relativeTo: file.path) }
        if sessionFiles.isEmpty { throw reader.error("sessions", "must name at least one session file") }
        appConfig = try reader.optionalObject("org").map { org in
            let slug = try org.string("slug", matching: Patterns.id, what: "an org slug")
            let colors = try org.object("colors")
            let color = { (key: String) throws -> JSONValue in
                .string(try colors.string(key, matching: Patterns.color, what: "a colour #RRGGBB"))
            }
            let body = JSONValue.compact([
                "org": .string(slug),
                "productName": .string(try org.string("productName")),
                "colors": .object([
                    "primary": try color("primary"), "accent": try color("accent"),
                    "background": try color("background"), "text": try color("text"),
                ]),
                "theme": .string(try org.string("theme", oneOf: ["light", "dark"])),
                "logo": try loader.optionalImage(org, "logo"),
            ])
            try colors.finish()
            try org.finish()
            return (slug, body)
        }
        try reader.finish()
        linkedSessionIds = links
        content = [
            "series": ["id": .string(id), "title": .string(title), "timezone": .string(timezone)],
            "rooms": .array(rooms), "days": .array(days),
        ]
    }
}
