import PulseCore
import PulseHTML
import PulseServerStorage
import Synchronization

/// What people call a session (title, room, times, timezone) and the event's name, read from the imported
/// manifests (storage holds them as JSON) and kept until the next import: 200 sessions are parsed once,
/// not on every page.
public final class SessionCatalog: Sendable {
    /// A session as its manifest describes it; every string came from a package and is only ever text.
    public struct Info: Sendable, Equatable {
        public var title: String
        public var room: String?
        /// RFC 3339 with the session's own offset, as imported (`2026-12-03T09:30:00+01:00`).
        public var startsAt: String?
        public var endsAt: String?
        public var timezone: String?
    }

    /// The sessions and series as the console's forms offer them, built once per catalog version (200
    /// sessions are 200 `<option>`s: made on import, not on every page).
    public struct Choices: Sendable {
        /// Session ids, in the catalog's order.
        public var sessions: [String] = []
        public var series: [String] = []
        /// `<option value="session:<id>">Session: <title></option>` for each session, then `series:<id>` for each
        /// series (a device code's scope).
        var scopeOptions: Node = .empty
        /// `<option value="<id>"><title> (<id>)</option>` for each session (a staff token's session).
        var sessionOptions: Node = .empty
        /// `<option value="<id>"><id></option>` for each series (an attendee link's series).
        var seriesOptions: Node = .empty
    }

    private struct Held {
        var key: String
        var infos: [String: Info] = [:]
        var eventName: String = ""
        var choices = Choices()
    }

    private let held = Mutex<Held?>(nil)

    public init() {}

    /// The sessions' infos by id (an unreadable manifest gives the id as the title).
    public func infos(storage: any ServerStorage) -> [String: Info] { load(storage).infos }

    /// The event's name: the series' titles, "Pulse console" when there is none.
    public func eventName(storage: any ServerStorage) -> String { load(storage).eventName }

    /// The sessions and series the forms offer, with their `<option>`s made.
    public func choices(storage: any ServerStorage) -> Choices { load(storage).choices }

    private func load(_ storage: any ServerStorage) -> Held {
        let key = (try? storage.generation()).map { "\($0.content)" } ?? "-"
        if let current = held.withLock({ $0 }), current.key == key { return current }
        var fresh = Held(key: key)
        let sessions = (try? storage.sessions()) ?? []
        var seriesIds: [String] = []
        var rooms: [String: String] = [:]
        for id in Set(sessions.compactMap(\.seriesId)).sorted() {
            guard let series = try? storage.series(id: id), let manifest = try? JSONValue.parse(series.manifest) else { continue }
            seriesIds.append(manifest["series"]?["title"]?.stringValue ?? id)
            for room in manifest["rooms"]?.arrayValue ?? [] {
                if let roomId = room["id"]?.stringValue, let name = room["name"]?.stringValue { rooms[roomId] = name }
            }
        }
        for session in sessions {
            var info = Info(title: session.id)
            if let content = try? storage.sessionContent(id: session.id), let manifest = try? JSONValue.parse(content.manifest),
               let fields = manifest["session"]
            {
                info.title = fields["title"]?.stringValue ?? session.id
                info.room = fields["room"]?.stringValue.map { rooms[$0] ?? $0 }
                info.startsAt = fields["startsAt"]?.stringValue
                info.endsAt = fields["endsAt"]?.stringValue
                info.timezone = fields["timezone"]?.stringValue
            }
            fresh.infos[session.id] = info
        }
        fresh.eventName = seriesIds.isEmpty ? "Pulse console" : seriesIds.joined(separator: " · ")
        fresh.choices = Self.choices(sessions.map(\.id), series: Set(sessions.compactMap(\.seriesId)).sorted(), infos: fresh.infos)
        held.withLock { $0 = fresh }
        return fresh
    }

    static func choices(_ sessions: [String], series: [String], infos: [String: Info]) -> Choices {
        Choices(
            sessions: sessions, series: series,
            scopeOptions: .fragment {
                for id in sessions { option(.value("session:" + id)) { "Session: " + (infos[id]?.title ?? id) } }
                for id in series { option(.value("series:" + id)) { "Series: \(id)" } }
            },
            sessionOptions: .fragment {
                for id in sessions { option(.value(id)) { (infos[id]?.title).map { "\($0) (\(id))" } ?? id } }
            },
            seriesOptions: .fragment {
                for id in series { option(.value(id)) { id } }
            })
    }
}
