import PulsePostgres

extension PostgresStorage {
    /// Appends `entries` inside the caller's transaction, last, under the audit lock (held to COMMIT): ids are
    /// handed out in commit order across every instance. Staff actions are rare; the lock costs them little.
    static func appendAudit(_ entries: [AuditEntry], on db: PostgresConnection) throws {
        guard !entries.isEmpty else { return }
        _ = try db.query("SELECT pg_advisory_xact_lock($1)", [.integer(PostgresSchema.auditLock)])
        for entry in entries {
            _ = try db.query("""
                INSERT INTO audit (at, actor_kind, actor_id, role, action, target, detail, client_address, result)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                """, [
                    .integer(entry.at), .text(entry.actor.kind.rawValue), .text(entry.actor.id), .text(entry.actor.role),
                    .text(entry.action.rawValue), .text(entry.target), .text(entry.detail), .text(entry.client), .text(entry.result.text),
                ])
        }
    }

    public func appendAudit(_ entries: [AuditEntry]) throws {
        guard !entries.isEmpty else { return }
        try transaction { db in try Self.appendAudit(entries, on: db) }
    }

    public func auditEntries(after id: Int64, since: Int64?, limit: Int) throws -> [AuditRecord] {
        try read { db in
            try db.query("""
                SELECT id, at, actor_kind, actor_id, role, action, target, detail, client_address, result FROM audit
                WHERE id > $1 AND at >= $2 ORDER BY id LIMIT $3
                """, [.integer(id), .integer(since ?? Int64.min), .int(max(0, limit))]).rows.map { row in
                    try AuditRecord.stored(
                        id: try row.int64(0), at: try row.int64(1), actorKind: try row.string(2), actorId: try row.string(3),
                        role: try row.optionalString(4), action: try row.string(5), target: try row.optionalString(6),
                        detail: try row.optionalString(7), client: try row.optionalString(8), result: try row.string(9))
                }
        }
    }
}
