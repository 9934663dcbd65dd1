import PulseCore
import PulsePostgres

extension PostgresStorage {
    public func importContent(_ plan: ImportPlan, options: ImportOptions, at now: Int64, audit: [AuditEntry]) throws -> ImportSummary {
        // One transaction that first takes the import lock: imports run one at a time across all
        // instances (as SQLite's BEGIN IMMEDIATE makes them), so every check below compares against
        // what no other import can change before this one commits; each session row it reads is
        // locked too, against a concurrent advance. Any refusal rolls back everything.
        let summary = try transaction { db in
            _ = try db.query("SELECT pg_advisory_xact_lock($1)", [.integer(PostgresSchema.importLock)])
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
        if !summary.isNoOp { watch.bump([.sessions, .content]) }
        return summary
    }

    private static func importSession(
        _ session: SessionImport, packageId: PackageID, options: ImportOptions, at now: Int64, on db: PostgresConnection
    ) throws -> ImportSummary.SessionOutcome {
        let id = session.id
        let held = try db.query("SELECT package_id, deck_version, package_version, gated FROM sessions WHERE id = $1 FOR UPDATE", [.text(id)])
            .first.map { row in HeldSession(packageId: try .stored(try row.string(0), of: "session \(id)"), deckVersion: try row.int(1), packageVersion: try row.string(2), gated: try row.bytes(3)) }
        let gated = GatedResource.encode(session.gated)
        if try session.replaces(held, packageId: packageId, options: options) {
            _ = try db.query("DELETE FROM key_tables WHERE session_id = $1", [.text(id)])
        }
        let table = session.keyTable
        let digest = table.digest
        let heldTable = try db.query("SELECT digest, package_id FROM key_tables WHERE session_id = $1 AND deck_version = $2", [.text(id), .int(table.deckVersion)])
            .first.map { HeldKeyTable(digest: try $0.bytes(0), packageId: try .stored(try $0.string(1), of: "key table \(id)/\(table.deckVersion)")) }
        if try session.isUnchanged(held, table: heldTable, digest: digest, packageId: packageId, gated: gated) { return .unchanged }

        _ = try db.query("""
            INSERT INTO sessions (id, package_id, series_id, package_version, deck_version, slide_count, manifest, gated, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (id) DO UPDATE SET package_id = EXCLUDED.package_id, series_id = EXCLUDED.series_id,
                package_version = EXCLUDED.package_version, deck_version = EXCLUDED.deck_version, slide_count = EXCLUDED.slide_count,
                manifest = EXCLUDED.manifest, gated = EXCLUDED.gated, updated_at = EXCLUDED.updated_at
            """, [
                .text(id), .text(packageId.hex), .text(session.seriesId), .text(session.packageVersion), .int(session.deckVersion),
                .int(session.slideCount), .bytes(session.manifest), .bytes(gated), .integer(now),
            ])
        if heldTable == nil {
            _ = try db.query("""
                INSERT INTO key_tables (session_id, deck_version, package_id, digest, slides, imported_at) VALUES ($1, $2, $3, $4, $5, $6)
                """, [.text(id), .int(table.deckVersion), .text(packageId.hex), .bytes(digest), .bytes(KeyTableRecord.encode(table.slides)), .integer(now)])
        }
        try recordChange(.content(packageVersion: session.packageVersion, deckVersion: session.deckVersion), session: id, at: now, on: db)
        return session.outcome(after: held)
    }

    private static func importSeries(
        _ series: SeriesImport, packageId: PackageID, options: ImportOptions, at now: Int64, on db: PostgresConnection
    ) throws -> ImportSummary.SeriesOutcome {
        let held = try db.query("SELECT package_id, package_version FROM series WHERE id = $1 FOR UPDATE", [.text(series.id)])
            .first.map { (packageId: try PackageID.stored(try $0.string(0), of: "series \(series.id)"), packageVersion: try $0.string(1)) }
        if try series.isUnchanged(held, packageId: packageId, options: options) { return .unchanged }
        _ = try db.query("""
            INSERT INTO series (id, package_id, package_version, manifest, updated_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (id) DO UPDATE SET package_id = EXCLUDED.package_id, package_version = EXCLUDED.package_version,
                manifest = EXCLUDED.manifest, updated_at = EXCLUDED.updated_at, generation = series.generation + 1
            """, [.text(series.id), .text(packageId.hex), .text(series.packageVersion), .bytes(series.manifest), .integer(now)])
        _ = try db.query("DELETE FROM series_sessions WHERE series_id = $1", [.text(series.id)])
        // Session ids are identifiers ([a-z0-9-]): a comma-joined list is unambiguous.
        _ = try db.query("""
            INSERT INTO series_sessions (series_id, position, session_id)
            SELECT $1::text, position - 1, session_id FROM unnest(string_to_array($2::text, ',')) WITH ORDINALITY AS t(session_id, position)
            """, [.text(series.id), .text(series.sessionIds.joined(separator: ","))])
        return held == nil ? .new : .updated
    }

    public func sessionContent(id: String) throws -> SessionContent? {
        let row = try read { db in
            try db.query("SELECT package_version, manifest, gated FROM sessions WHERE id = $1", [.text(id)])
                .first.map { (packageVersion: try $0.string(0), manifest: try $0.bytes(1), gated: try $0.bytes(2)) }
        }
        guard let row else { return nil }
        return SessionContent(sessionId: id, packageVersion: row.packageVersion, manifest: row.manifest, gated: try GatedResource.decode(row.gated))
    }

    public func keyTable(sessionId: String, deckVersion: Int) throws -> KeyTableRecord? {
        let row = try read { db in
            try db.query("SELECT package_id, slides FROM key_tables WHERE session_id = $1 AND deck_version = $2", [.text(sessionId), .int(deckVersion)])
                .first.map { (packageId: try $0.string(0), slides: try $0.bytes(1)) }
        }
        guard let row else { return nil }
        return KeyTableRecord(
            sessionId: sessionId, deckVersion: deckVersion, packageId: try .stored(row.packageId, of: "key table \(sessionId)/\(deckVersion)"), slides: try KeyTableRecord.decode(row.slides))
    }

    public func series(id: String) throws -> SeriesRecord? {
        try read { db in
            try db.query("""
                SELECT package_id, package_version, manifest,
                    (SELECT string_agg(session_id, ',' ORDER BY position) FROM series_sessions WHERE series_id = s.id), generation
                FROM series s WHERE id = $1
                """, [.text(id)]).first.map { row in
                    SeriesRecord(
                        id: id, packageId: try .stored(try row.string(0), of: "series \(id)"), packageVersion: try row.string(1), manifest: try row.bytes(2),
                        sessionIds: (try row.optionalString(3)?.split(separator: ",").map(String.init)) ?? [], generation: try row.int64(4))
                }
        }
    }
}
