import PulseCore
import PulseSQLite

extension SQLiteStorage {
    public func importContent(_ plan: ImportPlan, options: ImportOptions, at now: Int64, audit: [AuditEntry]) throws -> ImportSummary {
        // Every check below runs inside the write transaction, so what it compares against cannot change
        // before the write; any refusal rolls back everything this import wrote.
        try write { db in
            var sessions: [(id: String, outcome: ImportSummary.SessionOutcome)] = []
            for session in plan.sessions {
                sessions.append((session.id, try Self.importSession(session, packageId: plan.packageId, options: options, at: now, on: db)))
            }
            var series: [(id: String, outcome: ImportSummary.SeriesOutcome)] = []
            for item in plan.series {
                series.append((item.id, try Self.importSeries(item, packageId: plan.packageId, options: options, at: now, on: db)))
            }
            try Self.appendAudit(audit, on: db)
            return ImportSummary(packageId: plan.packageId, sessions: sessions, series: series)
        }
    }

    private static func importSession(
        _ session: SessionImport, packageId: PackageID, options: ImportOptions, at now: Int64, on db: Database
    ) throws -> ImportSummary.SessionOutcome {
        let id = session.id
        let held = try db.cached("SELECT package_id, deck_version, package_version, gated FROM sessions WHERE id = ?")
            .first([.text(id)]) { row in
                Result { HeldSession(packageId: try .stored(row.string(0), of: "session \(id)"), deckVersion: row.int(1), packageVersion: row.string(2), gated: row.blob(3)) }
            }?.get()
        let gated = GatedResource.encode(session.gated)
        if try session.replaces(held, packageId: packageId, options: options) {
            try db.cached("DELETE FROM key_tables WHERE session_id = ?").run([.text(id)])
        }
        let table = session.keyTable
        let digest = table.digest
        let heldTable = try db.cached("SELECT digest, package_id FROM key_tables WHERE session_id = ? AND deck_version = ?")
            .first([.text(id), .int(table.deckVersion)]) { row in
                Result { HeldKeyTable(digest: row.blob(0), packageId: try .stored(row.string(1), of: "key table \(id)/\(table.deckVersion)")) }
            }?.get()
        if try session.isUnchanged(held, table: heldTable, digest: digest, packageId: packageId, gated: gated) { return .unchanged }

        try db.cached("""
            INSERT INTO sessions (id, package_id, series_id, package_version, deck_version, slide_count, manifest, gated, updated_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            ON CONFLICT (id) DO UPDATE SET package_id = ?2, series_id = ?3, package_version = ?4, deck_version = ?5,
                slide_count = ?6, manifest = ?7, gated = ?8, updated_at = ?9
            """).run([
                .text(id), .text(packageId.hex), .text(session.seriesId), .text(session.packageVersion), .int(session.deckVersion),
                .int(session.slideCount), .blob(session.manifest), .blob(gated), .integer(now),
            ])
        if heldTable == nil {
            try db.cached("""
                INSERT INTO key_tables (session_id, deck_version, package_id, digest, slides, imported_at) VALUES (?, ?, ?, ?, ?, ?)
                """).run([.text(id), .int(table.deckVersion), .text(packageId.hex), .blob(digest), .blob(KeyTableRecord.encode(table.slides)), .integer(now)])
        }
        try recordChange(.content(packageVersion: session.packageVersion, deckVersion: session.deckVersion), session: id, at: now, on: db)
        return session.outcome(after: held)
    }

    private static func importSeries(
        _ series: SeriesImport, packageId: PackageID, options: ImportOptions, at now: Int64, on db: Database
    ) throws -> ImportSummary.SeriesOutcome {
        let held = try db.cached("SELECT package_id, package_version FROM series WHERE id = ?")
            .first([.text(series.id)]) { row in
                Result { (packageId: try PackageID.stored(row.string(0), of: "series \(series.id)"), packageVersion: row.string(1)) }
            }?.get()
        if try series.isUnchanged(held, packageId: packageId, options: options) { return .unchanged }
        try db.cached("""
            INSERT INTO series (id, package_id, package_version, manifest, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (id) DO UPDATE SET package_id = ?2, package_version = ?3, manifest = ?4, updated_at = ?5, generation = generation + 1
            """).run([.text(series.id), .text(packageId.hex), .text(series.packageVersion), .blob(series.manifest), .integer(now)])
        try bumpGeneration(.content, on: db)
        try db.cached("DELETE FROM series_sessions WHERE series_id = ?").run([.text(series.id)])
        for (position, session) in series.sessionIds.enumerated() {
            try db.cached("INSERT INTO series_sessions (series_id, position, session_id) VALUES (?, ?, ?)")
                .run([.text(series.id), .int(position), .text(session)])
        }
        return held == nil ? .new : .updated
    }

    public func sessionContent(id: String) throws -> SessionContent? {
        let row = try read { db in
            try db.cached("SELECT package_version, manifest, gated FROM sessions WHERE id = ?")
                .first([.text(id)]) { (packageVersion: $0.string(0), manifest: $0.blob(1), gated: $0.blob(2)) }
        }
        guard let row else { return nil }
        return SessionContent(sessionId: id, packageVersion: row.packageVersion, manifest: row.manifest, gated: try GatedResource.decode(row.gated))
    }

    public func keyTable(sessionId: String, deckVersion: Int) throws -> KeyTableRecord? {
        let row = try read { db in
            try db.cached("SELECT package_id, slides FROM key_tables WHERE session_id = ? AND deck_version = ?")
                .first([.text(sessionId), .int(deckVersion)]) { (packageId: $0.string(0), slides: $0.blob(1)) }
        }
        guard let row else { return nil }
        return KeyTableRecord(
            sessionId: sessionId, deckVersion: deckVersion, packageId: try .stored(row.packageId, of: "key table \(sessionId)/\(deckVersion)"), slides: try KeyTableRecord.decode(row.slides))
    }

    public func series(id: String) throws -> SeriesRecord? {
        try read { db in
            let sessions = try db.cached("SELECT session_id FROM series_sessions WHERE series_id = ? ORDER BY position")
                .rows([.text(id)]) { $0.string(0) }
            return try db.cached("SELECT package_id, package_version, manifest, generation FROM series WHERE id = ?").first([.text(id)]) { row in
                Result {
                    SeriesRecord(
                        id: id, packageId: try .stored(row.string(0), of: "series \(id)"), packageVersion: row.string(1), manifest: row.blob(2),
                        sessionIds: sessions, generation: row.int64(3))
                }
            }?.get()
        }
    }
}
