import PulsePostgres

extension PostgresStorage {
    /// A session with its venue networks in one row (so one round trip): the networks joined by commas.
    static let sessionColumns = """
        SELECT id, state, max_shown, rehearsal_max_shown, allow_download, package_id, series_id, package_version,
            deck_version, slide_count, change_sequence, updated_at,
            (SELECT string_agg(network, ',' ORDER BY network COLLATE "C") FROM venue_networks v WHERE v.session_id = s.id)
        FROM sessions s
        """

    static func session(_ row: PostgresRow) throws -> SessionRecord {
        let id = try row.string(0)
        // A stored network that no longer parses is an error, never dropped: dropping the last one
        // would turn a venue-locked session into an unlocked one.
        let networks = try (row.optionalString(12)?.split(separator: ",") ?? []).map { text in
            do { return try IPNetwork(parsing: String(text)) } catch {
                throw ServerError(.storage, "session \(id) has an unreadable venue network in the database: \(error)")
            }
        }
        return SessionRecord(
            id: id, state: SessionState(rawValue: try row.string(1)) ?? .draft, maxShown: try row.optionalInt(2),
            rehearsalMaxShown: try row.optionalInt(3), allowDownload: try row.bool(4), venueNetworks: networks,
            packageId: try .stored(try row.string(5), of: "session \(id)"), seriesId: try row.optionalString(6), packageVersion: try row.string(7),
            deckVersion: try row.int(8), slideCount: try row.int(9), changeSequence: try row.int64(10), updatedAt: try row.int64(11))
    }

    /// Reads one session on `db`; `locking` takes its row lock until the transaction ends, so that
    /// what the caller decides from it stays true until it commits.
    static func session(id: String, locking: Bool = false, on db: PostgresConnection) throws -> SessionRecord? {
        try db.query(sessionColumns + " WHERE id = $1" + (locking ? " FOR UPDATE OF s" : ""), [.text(id)]).first.map(session)
    }

    public func session(id: String) throws -> SessionRecord? {
        try read { db in try Self.session(id: id, on: db) }
    }

    public func sessions() throws -> [SessionRecord] {
        try read { db in try db.query(Self.sessionColumns + " ORDER BY id COLLATE \"C\"").rows.map(Self.session) }
    }

    /// The SQL expression that moves a frontier column to `max(column, min($slide, slide_count - 1))`,
    /// leaving it NULL when that is below 0 (an empty deck).
    private static func raised(_ column: String, parameter: Int) -> String {
        "nullif(greatest(coalesce(\(column), -1), least($\(parameter), slide_count - 1)), -1)"
    }

    public func updateSession(id: String, _ update: SessionUpdate, at now: Int64, audit: [AuditEntry]) throws -> SessionRecord? {
        if let slide = update.maxShown, slide < 0 { throw ServerError.badInput("the frontier must be 0 or more, got \(slide)") }
        let (record, changed) = try transaction { db -> (SessionRecord?, Bool) in
            guard let before = try Self.session(id: id, locking: true, on: db) else { return (nil, false) }
            var changed = false
            if let state = update.state, state != before.state {
                _ = try db.query("UPDATE sessions SET state = $1, updated_at = $2 WHERE id = $3", [.text(state.rawValue), .integer(now), .text(id)])
                try Self.recordChange(.state(state), session: id, at: now, on: db)
                changed = true
            }
            if let slide = update.maxShown {
                let after = try db.query(
                    "UPDATE sessions SET max_shown = \(Self.raised("max_shown", parameter: 1)), updated_at = $2 WHERE id = $3 RETURNING max_shown",
                    [.int(slide), .integer(now), .text(id)]).first?.optionalInt(0)
                changed = true  // updated_at at least
                if let after, after != before.maxShown {
                    try Self.recordChange(.advance(maxShown: after, deckVersion: before.deckVersion), session: id, at: now, on: db)
                }
            }
            var settingsChanged = false
            if let allow = update.allowDownload, allow != before.allowDownload {
                _ = try db.query("UPDATE sessions SET allow_download = $1, updated_at = $2 WHERE id = $3", [.bool(allow), .integer(now), .text(id)])
                settingsChanged = true
            }
            if let networks = update.venueNetworks, Set(networks) != Set(before.venueNetworks) {
                _ = try db.query("DELETE FROM venue_networks WHERE session_id = $1", [.text(id)])
                let list = Set(networks).map(\.description).sorted().joined(separator: ",")
                _ = try db.query("""
                    INSERT INTO venue_networks (session_id, network) SELECT $1::text, unnest(string_to_array($2::text, ','))
                    """, [.text(id), .text(list)])
                _ = try db.query("UPDATE sessions SET updated_at = $1 WHERE id = $2", [.integer(now), .text(id)])
                settingsChanged = true
            }
            if settingsChanged { try Self.recordChange(.settings, session: id, at: now, on: db) }
            let after = try Self.session(id: id, on: db)
            try Self.appendAudit(audit, on: db)
            return (after, changed || settingsChanged)
        }
        if changed { watch.bump(.sessions) }
        return record
    }

    public func advance(sessionId: String, to slide: Int, at now: Int64, audit: [AuditEntry]) throws -> AdvanceOutcome {
        guard slide >= 0 else { throw ServerError.badInput("the frontier must be 0 or more, got \(slide)") }
        let (outcome, moved) = try transaction { db -> (AdvanceOutcome, Bool) in
            // The row lock orders concurrent advances: each reads the frontier the one before committed.
            guard var session = try Self.session(id: sessionId, locking: true, on: db) else { return (.noSuchSession, false) }
            // One statement, the database decides: max() on the frontier the state names, nothing in other states.
            let row = try db.query("""
                UPDATE sessions SET
                    max_shown = CASE WHEN state = 'live' THEN \(Self.raised("max_shown", parameter: 1)) ELSE max_shown END,
                    rehearsal_max_shown = CASE WHEN state = 'rehearsal'
                        THEN \(Self.raised("rehearsal_max_shown", parameter: 1)) ELSE rehearsal_max_shown END
                WHERE id = $2 AND state IN ('live', 'rehearsal')
                RETURNING max_shown, rehearsal_max_shown
                """, [.int(slide), .text(sessionId)]).first
            guard let row else { return (.refused(session.state), false) }
            let (shown, rehearsed) = (try row.optionalInt(0), try row.optionalInt(1))
            let event: SessionChange.Event?
            switch session.state {
            case .live where shown != session.maxShown: event = .advance(maxShown: shown!, deckVersion: session.deckVersion)
            case .rehearsal where rehearsed != session.rehearsalMaxShown:
                event = .rehearsalAdvance(maxShown: rehearsed!, deckVersion: session.deckVersion)
            default: event = nil
            }
            (session.maxShown, session.rehearsalMaxShown) = (shown, rehearsed)
            guard let event else {
                try Self.appendAudit(audit, on: db)
                return (.advanced(session, moved: false), false)
            }
            session.changeSequence = try Self.recordChange(event, session: sessionId, at: now, on: db)
            session.updatedAt = now
            try Self.appendAudit(audit, on: db)
            return (.advanced(session, moved: true), true)
        }
        if moved { watch.bump(.sessions) }
        return outcome
    }

    /// Appends to the session's change log with the next sequence number and sets `updated_at`, in
    /// one statement inside the caller's transaction: every change of a session goes through here.
    /// - Returns: the sequence number.
    @discardableResult
    static func recordChange(_ event: SessionChange.Event, session id: String, at now: Int64, on db: PostgresConnection) throws -> Int64 {
        let row = event.columns
        let inserted = try db.query("""
            WITH next AS (
                UPDATE sessions SET change_sequence = change_sequence + 1, updated_at = $2 WHERE id = $1 RETURNING change_sequence
            )
            INSERT INTO session_changes (session_id, sequence, at, kind, max_shown, deck_version, state, package_version)
            SELECT $1::text, change_sequence, $2::bigint, $3::text, $4::bigint, $5::bigint, $6::text, $7::text FROM next
            RETURNING sequence
            """, [.text(id), .integer(now), .text(row.kind), .int(row.maxShown), .int(row.deckVersion), .text(row.state), .text(row.packageVersion)]).first
        guard let inserted else { throw ServerError.notFound("no session \(id)") }
        return try inserted.int64(0)
    }

    public func changes(sessionId: String, after sequence: Int64, limit: Int) throws -> [SessionChange] {
        try read { db in
            try db.query("""
                SELECT sequence, at, kind, max_shown, deck_version, state, package_version FROM session_changes
                WHERE session_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3
                """, [.text(sessionId), .integer(sequence), .int(limit)]).rows.compactMap { row -> SessionChange? in
                    let columns = SessionChange.Event.Columns(
                        kind: try row.string(2), maxShown: try row.optionalInt(3), deckVersion: try row.optionalInt(4),
                        state: try row.optionalString(5), packageVersion: try row.optionalString(6))
                    guard let event = try SessionChange.Event(columns) else { return nil }
                    return SessionChange(sessionId: sessionId, sequence: try row.int64(0), at: try row.int64(1), event: event)
                }
        }
    }
}
