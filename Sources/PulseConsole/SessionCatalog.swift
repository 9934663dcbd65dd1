import PulseCore
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

    private struct Held {
        var key: String
        var infos: [String: Info] = [:]
        var eventName: String = ""
    }

    private let held = Mutex<Held?>(nil)

    public init() {}

    /// The sessions' infos by id (an unreadable manifest gives the id as the title).
    public func infos(storage: any ServerStorage) -> [String: Info] { load(storage).infos }

    /// The event's name: the series' titles, "Pulse console" when there is none.
    public func eventName(storage: any ServerStorage) -> String { load(storage).eventName }

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
        held.withLock { $0 = fresh }
        return fresh
    }
}
