import PulseSQLite

extension SQLiteStorage {
    static let auditColumns = "id, at, actor_kind, actor_id, role, action, target, detail, client_address, result"

    /// Appends `entries` inside the caller's write transaction (no generation bump: no cache holds them).
    /// Appends `entries` on `db`, inside the caller's transaction (also on a database file no storage has open:
    /// the restore's staged copy).
    public static func appendAudit(_ entries: [AuditEntry], on db: Database) throws {
        for entry in entries {
            try db.cached("""
                INSERT INTO audit (at, actor_kind, actor_id, role, action, target, detail, client_address, result)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).run([
                    .integer(entry.at), .text(entry.actor.kind.rawValue), .text(entry.actor.id), .text(entry.actor.role),
                    .text(entry.action.rawValue), .text(entry.target), .text(entry.detail), .text(entry.client), .text(entry.result.text),
                ])
        }
    }

    public func appendAudit(_ entries: [AuditEntry]) throws {
        guard !entries.isEmpty else { return }
        try write { db in try Self.appendAudit(entries, on: db) }
    }

    public func auditEntries(after id: Int64, since: Int64?, limit: Int) throws -> [AuditRecord] {
        let rows = try read { db in
            try db.cached("SELECT \(Self.auditColumns) FROM audit WHERE id > ? AND at >= ? ORDER BY id LIMIT ?")
                .rows([.integer(id), .integer(since ?? Int64.min), .int(max(0, limit))]) { row in
                    (row.int64(0), row.int64(1), row.string(2), row.string(3), row.optionalString(4), row.string(5), row.optionalString(6),
                     row.optionalString(7), row.optionalString(8), row.string(9))
                }
        }
        return try rows.map { row in
            try AuditRecord.stored(
                id: row.0, at: row.1, actorKind: row.2, actorId: row.3, role: row.4, action: row.5, target: row.6, detail: row.7, client: row.8,
                result: row.9)
        }
    }
}
