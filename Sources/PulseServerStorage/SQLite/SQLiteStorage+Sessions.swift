import PulseSQLite

extension SQLiteStorage {
    static let sessionColumns = """
        SELECT id, state, max_shown, rehearsal_max_shown, allow_download, package_id, series_id, package_version,
            deck_version, slide_count, change_sequence, updated_at FROM sessions
        """

    static func session(_ row: Statement, venueNetworks: [IPNetwork]) throws -> SessionRecord {
        let id = row.string(0)
        return SessionRecord(
            id: id, state: SessionState(rawValue: row.string(1)) ?? .draft, maxShown: row.optionalInt(2),
            rehearsalMaxShown: row.optionalInt(3), allowDownload: row.bool(4), venueNetworks: venueNetworks,
            packageId: try .stored(row.string(5), of: "session \(id)"), seriesId: row.optionalString(6), packageVersion: row.string(7), deckVersion: row.int(8),
            slideCount: row.int(9), changeSequence: row.int64(10), updatedAt: row.int64(11))
    }

    /// Reads one session on `db` (inside or outside a transaction).
    static func session(id: String, on db: Database) throws -> SessionRecord? {
        // A stored network that no longer parses is an error, never dropped: dropping the last one
        // would turn a venue-locked session into an unlocked one.
        let networks = try db.cached("SELECT network FROM venue_networks WHERE session_id = ? ORDER BY network")
            .rows([.text(id)]) { $0.string(0) }
            .map { text in
                do { return try IPNetwork(parsing: text) } catch {
                    throw ServerError(.storage, "session \(id) has an unreadable venue network in the database: \(error)")
                }
            }
        return try db.cached(sessionColumns + " WHERE id = ?").first([.text(id)]) { row in Result { try session(row, venueNetworks: networks) } }?.get()
    }

    public func session(id: String) throws -> SessionRecord? {
        try read { db in try Self.session(id: id, on: db) }
    }

    public func sessions() throws -> [SessionRecord] {
        try read { db in
            let ids = try db.cached("SELECT id FROM sessions ORDER BY id").rows { $0.string(0) }
            return try ids.compactMap { try Self.session(id: $0, on: db) }
        }
    }

    /// The SQL expression that moves a frontier column to `max(column, min(?slide, slide_count - 1))`,
    /// leaving it NULL when that is below 0 (an empty deck).
    private static func raised(_ column: String, parameter: Int) -> String {
        "nullif(max(coalesce(\(column), -1), min(?\(parameter), slide_count - 1)), -1)"
    }

    public func updateSession(id: String, _ update: SessionUpdate, at now: Int64, audit: [AuditEntry]) throws -> SessionRecord? {
        if let slide = update.maxShown, slide < 0 { throw ServerError.badInput("the frontier must be 0 or more, got \(slide)") }
        return try write { db -> SessionRecord? in
            guard let before = try Self.session(id: id, on: db) else { return nil }
            if let state = update.state, state != before.state {
                try db.cached("UPDATE sessions SET state = ?, updated_at = ? WHERE id = ?").run([.text(state.rawValue), .integer(now), .text(id)])
                try Self.recordChange(.state(state), session: id, at: now, on: db)
            }
            if let slide = update.maxShown {
                try db.cached("UPDATE sessions SET max_shown = \(Self.raised("max_shown", parameter: 1)), updated_at = ?2 WHERE id = ?3")
                    .run([.int(slide), .integer(now), .text(id)])
                let after = try db.scalarInteger("SELECT max_shown FROM sessions WHERE id = ?", [.text(id)]).map(Int.init)
                if let after, after != before.maxShown {
                    try Self.recordChange(.advance(maxShown: after, deckVersion: before.deckVersion), session: id, at: now, on: db)
                }
            }
            var settingsChanged = false
            if let allow = update.allowDownload, allow != before.allowDownload {
                try db.cached("UPDATE sessions SET allow_download = ?, updated_at = ? WHERE id = ?").run([.bool(allow), .integer(now), .text(id)])
                settingsChanged = true
            }
            if let networks = update.venueNetworks, Set(networks) != Set(before.venueNetworks) {
                try db.cached("DELETE FROM venue_networks WHERE session_id = ?").run([.text(id)])
                for network in Set(networks) {
                    try db.cached("INSERT INTO venue_networks (session_id, network) VALUES (?, ?)").run([.text(id), .text(network.description)])
                }
                try db.cached("UPDATE sessions SET updated_at = ? WHERE id = ?").run([.integer(now), .text(id)])
                settingsChanged = true
            }
            if settingsChanged { try Self.recordChange(.settings, session: id, at: now, on: db) }
            try Self.appendAudit(audit, on: db)
            return try Self.session(id: id, on: db)
        }
    }

    public func advance(sessionId: String, to slide: Int, at now: Int64, audit: [AuditEntry]) throws -> AdvanceOutcome {
        guard slide >= 0 else { throw ServerError.badInput("the frontier must be 0 or more, got \(slide)") }
        return try write { db -> AdvanceOutcome in
            guard let before = try Self.session(id: sessionId, on: db) else { return .noSuchSession }
            // One statement, the database decides: max() on the frontier the state names, nothing in other states.
            try db.cached("""
                UPDATE sessions SET
                    max_shown = CASE WHEN state = 'live' THEN \(Self.raised("max_shown", parameter: 1)) ELSE max_shown END,
                    rehearsal_max_shown = CASE WHEN state = 'rehearsal'
                        THEN \(Self.raised("rehearsal_max_shown", parameter: 1)) ELSE rehearsal_max_shown END
                WHERE id = ?2 AND state IN ('live', 'rehearsal')
                """).run([.int(slide), .text(sessionId)])
            guard db.changes == 1, var after = try Self.session(id: sessionId, on: db) else { return .refused(before.state) }
            let moved: Bool
            switch after.state {
            case .live where after.maxShown != before.maxShown:
                try Self.recordChange(.advance(maxShown: after.maxShown!, deckVersion: after.deckVersion), session: sessionId, at: now, on: db)
                moved = true
            case .rehearsal where after.rehearsalMaxShown != before.rehearsalMaxShown:
                try Self.recordChange(
                    .rehearsalAdvance(maxShown: after.rehearsalMaxShown!, deckVersion: after.deckVersion), session: sessionId, at: now, on: db)
                moved = true
            default:
                moved = false
            }
            if moved {
                try db.cached("UPDATE sessions SET updated_at = ? WHERE id = ?").run([.integer(now), .text(sessionId)])
                after = try Self.session(id: sessionId, on: db) ?? after
            }
            try Self.appendAudit(audit, on: db)
            return .advanced(after, moved: moved)
        }
    }

    /// Appends to the session's change log with the next sequence number and bumps the generation
    /// (inside the caller's transaction): every change of a session goes through here.
    static func recordChange(_ event: SessionChange.Event, session id: String, at now: Int64, on db: Database) throws {
        if case .content = event { try bumpGeneration([.sessions, .content], on: db) } else { try bumpGeneration(.sessions, on: db) }
        guard let sequence = try db.cached("UPDATE sessions SET change_sequence = change_sequence + 1 WHERE id = ? RETURNING change_sequence")
            .first([.text(id)], { $0.int64(0) })
        else { throw ServerError.notFound("no session \(id)") }
        let row = event.columns
        try db.cached("""
            INSERT INTO session_changes (session_id, sequence, at, kind, max_shown, deck_version, state, package_version)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """).run([
                .text(id), .integer(sequence), .integer(now), .text(row.kind), .int(row.maxShown), .int(row.deckVersion), .text(row.state), .text(row.packageVersion),
            ])
    }

    public func changes(sessionId: String, after sequence: Int64, limit: Int) throws -> [SessionChange] {
        let rows = try read { db in
            try db.cached("""
                SELECT sequence, at, kind, max_shown, deck_version, state, package_version FROM session_changes
                WHERE session_id = ? AND sequence > ? ORDER BY sequence LIMIT ?
                """).rows([.text(sessionId), .integer(sequence), .int(limit)]) { row in
                    (sequence: row.int64(0), at: row.int64(1), columns: SessionChange.Event.Columns(
                        kind: row.string(2), maxShown: row.optionalInt(3), deckVersion: row.optionalInt(4),
                        state: row.optionalString(5), packageVersion: row.optionalString(6)))
                }
        }
        return try rows.compactMap { row in
            try SessionChange.Event(row.columns).map { SessionChange(sessionId: sessionId, sequence: row.sequence, at: row.at, event: $0) }
        }
    }
}
