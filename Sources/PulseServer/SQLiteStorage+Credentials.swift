import PulseSQLite

extension SQLiteStorage {
    public func addCredential(_ credential: NewCredential) throws {
        try write { db in
            try db.cached("""
                INSERT INTO credentials (hash, listing_id, kind, scope_kind, scope_id, max_devices, created_at, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """).run([
                    .blob(credential.hash), .text(CredentialSecret.listingId(hash: credential.hash)), .text(credential.kind.rawValue),
                    .text(credential.scope?.kind), .text(credential.scope?.id), .int(credential.maxDevices),
                    .integer(credential.createdAt), credential.expiresAt.map { .integer($0) } ?? .null,
                ])
            try Self.bumpGeneration(.credentials, on: db)
        }
    }

    public func revokeCredential(hash: [UInt8], at now: Int64) throws -> Bool {
        try write { db in
            try db.cached("UPDATE credentials SET revoked_at = ? WHERE hash = ? AND revoked_at IS NULL").run([.integer(now), .blob(hash)])
            guard db.changes == 1 else { return false }
            try Self.bumpGeneration(.credentials, on: db)
            return true
        }
    }

    public func revokeCredential(listingId id: String, at now: Int64) throws -> Bool {
        try write { db in
            // A listing id is a hash prefix: refuse when it is ambiguous rather than revoke two.
            let matches = try db.cached("SELECT count(*) FROM credentials WHERE listing_id = ?").first([.text(id)]) { $0.int(0) } ?? 0
            guard matches <= 1 else { throw ServerError.badInput("\(id) names \(matches) credentials; revoke by the token itself") }
            try db.cached("UPDATE credentials SET revoked_at = ? WHERE listing_id = ? AND revoked_at IS NULL").run([.integer(now), .text(id)])
            guard db.changes == 1 else { return false }
            try Self.bumpGeneration(.credentials, on: db)
            return true
        }
    }

    public func credentials() throws -> [CredentialRecord] {
        try read { db in
            try db.cached("""
                SELECT listing_id, kind, scope_kind, scope_id, max_devices, devices_enrolled, created_at, expires_at, used_at, revoked_at
                FROM credentials ORDER BY created_at DESC, listing_id
                """).rows { row in
                    CredentialRecord(
                        id: row.string(0), kind: CredentialKind(rawValue: row.string(1)) ?? .staffToken,
                        scope: row.optionalString(2).flatMap { DeviceScope(kind: $0, id: row.string(3)) },
                        maxDevices: row.optionalInt(4), devicesEnrolled: row.int(5), createdAt: row.int64(6),
                        expiresAt: row.isNull(7) ? nil : row.int64(7), usedAt: row.isNull(8) ? nil : row.int64(8),
                        revokedAt: row.isNull(9) ? nil : row.int64(9))
                }
        }
    }

    public func isStaffToken(hash: [UInt8], at now: Int64) throws -> Bool {
        try read { db in
            try db.cached("""
                SELECT 1 FROM credentials WHERE hash = ? AND kind = 'staff-token' AND revoked_at IS NULL
                AND (expires_at IS NULL OR expires_at > ?)
                """).first([.blob(hash), .integer(now)]) { _ in true } ?? false
        }
    }

    public func activeStaffTokens(at now: Int64) throws -> [(hash: [UInt8], expiresAt: Int64?)] {
        try read { db in
            try db.cached("""
                SELECT hash, expires_at FROM credentials WHERE kind = 'staff-token' AND revoked_at IS NULL
                AND (expires_at IS NULL OR expires_at > ?)
                """).rows([.integer(now)]) { row in (hash: row.blob(0), expiresAt: row.isNull(1) ? nil : row.int64(1)) }
        }
    }
}
