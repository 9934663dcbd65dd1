import Foundation
import PulseCore

/// A session as its description file gives it (docs/session-schema.md), already checked and turned
/// into the manifest fields that do not depend on the deck.
struct SessionDescription {
    let id: String
    let title: String
    let file: URL
    /// The deck named in the file, resolved against it; `--deck` overrides it.
    let deck: URL?
    /// The series the file says it belongs to (`series`), if any.
    let seriesId: String?
    /// Manifest fields: session, agenda, speakers, branding, resources, survey.
    let content: [String: JSONValue]
    /// Timeline-gated resources with their content and release rule (for `server/gated/`), each with the
    /// JSON path of its entry (`resources[2]`) for error messages.
    let gated: [(resource: GatedResources.Resource, path: String)]

    /// Reads and checks a session file. Images it refers to are loaded into `loader`.
    init(file: URL, loader: InputLoader) throws {
        let reader = try loader.readJSON(file)
        self.file = file
        id = try reader.string("id", matching: Patterns.id, what: "an id of lowercase letters, digits and dashes")
        title = try reader.string("title")
        deck = try reader.optionalString("deck").map { InputLoader.resolve($0, relativeTo: file.path) }
        seriesId = try reader.optionalString("series", matching: Patterns.id, what: "a series id")
        let startsAt = try reader.time("startsAt"), endsAt = try reader.time("endsAt")
        if endsAt.seconds <= startsAt.seconds {
            throw reader.error("endsAt", "\(endsAt.text) is not after startsAt \(startsAt.text)")
        }

        let basics = JSONValue.compact([
            "id": .string(id),
            "title": .string(title),
            "subtitle": try reader.optionalString("subtitle").map(JSONValue.string),
            "abstract": try reader.optionalString("abstract").map(JSONValue.string),
            "language": try reader.optionalString("language").map(JSONValue.string),
            "seriesId": seriesId.map(JSONValue.string),
            "room": try reader.optionalString("room").map(JSONValue.string),
            "startsAt": .string(startsAt.text),
            "endsAt": .string(endsAt.text),
            "timezone": try reader.optionalTimeZone("timezone").map(JSONValue.string),
        ])

        let speakers = try reader.objects("speakers") { speaker in
            JSONValue.compact([
                "id": .string(try speaker.string("id", matching: Patterns.id, what: "a speaker id")),
                "name": .string(try speaker.string("name")),
                "role": try speaker.optionalString("role").map(JSONValue.string),
                "company": try speaker.optionalString("company").map(JSONValue.string),
                "bio": try speaker.optionalString("bio").map(JSONValue.string),
                "photo": try loader.optionalImage(speaker, "photo"),
            ])
        }
        try checkUniqueIds(speakers, list: "speaker", in: file.path) { "speakers[\($0)]" }
        let speakerIds = Set(speakers.compactMap { $0["id"]?.stringValue })

        let agenda = try reader.objects("agenda") { entry in
            let names = try entry.strings("speakers", required: false)
            for name in names where !speakerIds.contains(name) {
                throw entry.error("speakers", "names \"\(name)\", which is not in speakers")
            }
            return JSONValue.object([
                "start": .string(try entry.string("start", matching: Patterns.clock, what: "a clock time HH:MM")),
                "durationMinutes": .int(try entry.int("durationMinutes", in: 1...1440)),
                "title": .string(try entry.string("title")),
                "speakers": .array(names.map(JSONValue.string)),
            ])
        }

        let brandingReader = try reader.object("branding")
        let branding = JSONValue.compact([
            "primaryColor": .string(try brandingReader.string("primaryColor", matching: Patterns.color, what: "a colour #RRGGBB")),
            "accentColor": .string(try brandingReader.string("accentColor", matching: Patterns.color, what: "a colour #RRGGBB")),
            "backgroundColor": try brandingReader.optionalString("backgroundColor", matching: Patterns.color, what: "a colour #RRGGBB")
                .map(JSONValue.string),
            "theme": .string(try brandingReader.string("theme", oneOf: ["light", "dark"])),
            "logo": try loader.optionalImage(brandingReader, "logo"),
        ])
        try brandingReader.finish()

        let resources = try reader.objects("resources", required: false, Self.resource)
        try checkUniqueIds(resources.map(\.entry), list: "resource", in: file.path) { "resources[\($0)]" }
        gated = resources.compactMap { $0.gated }
        let survey = try reader.optionalObject("survey").map { survey in
            let questions = try survey.objects("questions", Self.question)
            try checkUniqueIds(questions, list: "question", in: file.path) { "survey.questions[\($0)]" }
            let value = JSONValue.object([
                "id": .string(try survey.string("id", matching: Patterns.id, what: "a survey id")),
                "title": .string(try survey.string("title")),
                "questions": .array(questions),
            ])
            try survey.finish()
            return value
        }
        try reader.finish()

        var content: [String: JSONValue] = [
            "session": basics, "agenda": .array(agenda), "speakers": .array(speakers),
            "branding": branding, "resources": .array(resources.map(\.entry)),
        ]
        content["survey"] = survey
        self.content = content
    }

    /// A resource as the manifest lists it; a timeline-gated one is metadata only there, and its full
    /// entry and release rule go to the server part.
    private static func resource(_ entry: JSONReader) throws -> (entry: JSONValue, gated: (resource: GatedResources.Resource, path: String)?) {
        let id = try entry.string("id", matching: Patterns.id, what: "a resource id")
        let title = try entry.string("title")
        let kind = try entry.string("kind", oneOf: ["link", "file", "note"])
        let url = try entry.optionalString("url")
        let body = try entry.optionalString("body")
        let releaseAt = try entry.optionalTime("releaseAt")
        let afterSlide = try entry.optionalInt("releaseAfterSlide", in: 0...100_000)
        if kind == "link", url == nil { throw entry.error("url", "missing (a link resource needs a url)") }
        if kind == "note", body == nil { throw entry.error("body", "missing (a note resource needs a body)") }
        let visible = JSONValue.compact([
            "id": .string(id), "title": .string(title), "kind": .string(kind), "gated": false,
            "url": url.map(JSONValue.string), "body": body.map(JSONValue.string),
        ])
        guard releaseAt != nil || afterSlide != nil else { return (visible, nil) }
        let gated = GatedResources.Resource(id: id, releaseAfterSlide: afterSlide, releaseAt: releaseAt, entry: visible)
        return (["id": .string(id), "title": .string(title), "kind": .string(kind), "gated": true], (gated, entry.path))
    }

    private static func question(_ entry: JSONReader) throws -> JSONValue {
        let kind = try entry.string("kind", oneOf: ["rating", "single", "multiple", "text"])
        let options = try entry.strings("options", required: kind == "single" || kind == "multiple")
        let scale = try entry.optionalInt("scale", in: 2...10)
        if kind == "rating", scale == nil { throw entry.error("scale", "missing (a rating question needs a scale)") }
        return JSONValue.compact([
            "id": .string(try entry.string("id", matching: Patterns.id, what: "a question id")),
            "kind": .string(kind),
            "prompt": .string(try entry.string("prompt")),
            "options": options.isEmpty ? nil : .array(options.map(JSONValue.string)),
            "scale": scale.map(JSONValue.int),
        ])
    }
}
