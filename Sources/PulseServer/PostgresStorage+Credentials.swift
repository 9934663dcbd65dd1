import PulsePostgres

extension PostgresStorage {
    public func addCredential(_ credential: NewCredential) throws {
        try statement { db in
            _ = try db.query("""
                INSERT INTO credentials (hash, listing_id, kind, scope_kind, scope_id, max_devices, created_at, expires_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                """, [
                    .bytes(credential.hash), .text(CredentialSecret.listingId(hash: credential.hash)), .text(credential.kind.rawValue),
                    .text(credential.scope?.kind), .text(credential.scope?.id), .int(credential.maxDevices),
                    .integer(credential.createdAt), .integer(credential.expiresAt),
                ])
        }
        watch.bump(.credentials)
    }

    public func revokeCredential(hash: [UInt8], at now: Int64) throws -> Bool {
        let revoked = try statement { db in
            try db.query("UPDATE credentials SET revoked_at = $1 WHERE hash = $2 AND revoked_at IS NULL", [.integer(now), .bytes(hash)]).affectedRows == 1
        }
        if revoked { watch.bump(.credentials) }
        return revoked
    }

    public func revokeCredential(listingId id: String, at now: Int64) throws -> Bool {
        // One statement: the count and the update see the same rows. A listing id is a hash prefix:
        // refuse when it is ambiguous rather than revoke two.
        let (matches, revoked) = try statement { db in
            let row = try db.query("""
                WITH matching AS (SELECT count(*) AS n FROM credentials WHERE listing_id = $1),
                revoked AS (
                    UPDATE credentials SET revoked_at = $2
                    WHERE listing_id = $1 AND revoked_at IS NULL AND (SELECT n FROM matching) = 1
                    RETURNING 1
                )
                SELECT (SELECT n FROM matching), (SELECT count(*) FROM revoked)
                """, [.text(id), .integer(now)]).first
            return (try row?.int(0) ?? 0, try row?.int(1) ?? 0)
        }
        guard matches <= 1 else { throw ServerError.badInput("\(id) names \(matches) credentials; revoke by the token itself") }
        if revoked == 1 { watch.bump(.credentials) }
        return revoked == 1
    }

    public func credentials() throws -> [CredentialRecord] {
        try read { db in
            try db.query("""
                SELECT listing_id, kind, scope_kind, scope_id, max_devices, devices_enrolled, created_at, expires_at, used_at, revoked_at
                FROM credentials ORDER BY created_at DESC, listing_id COLLATE "C"
                """).rows.map { row in
                    CredentialRecord(
                        id: try row.string(0), kind: CredentialKind(rawValue: try row.string(1)) ?? .staffToken,
                        scope: try row.optionalString(2).flatMap { DeviceScope(kind: $0, id: try row.string(3)) },
                        maxDevices: try row.optionalInt(4), devicesEnrolled: try row.int(5), createdAt: try row.int64(6),
                        expiresAt: try row.optionalInt64(7), usedAt: try row.optionalInt64(8), revokedAt: try row.optionalInt64(9))
                }
        }
    }

    public func isStaffToken(hash: [UInt8], at now: Int64) throws -> Bool {
        try read { db in
            try db.query("""
                SELECT 1 FROM credentials WHERE hash = $1 AND kind = 'staff-token' AND revoked_at IS NULL
                AND (expires_at IS NULL OR expires_at > $2)
                """, [.bytes(hash), .integer(now)]).first != nil
        }
    }

    public func activeStaffTokens(at now: Int64) throws -> [(hash: [UInt8], expiresAt: Int64?)] {
        try read { db in
            try db.query("""
                SELECT hash, expires_at FROM credentials WHERE kind = 'staff-token' AND revoked_at IS NULL
                AND (expires_at IS NULL OR expires_at > $1)
                """, [.integer(now)]).rows.map { row in (hash: try row.bytes(0), expiresAt: try row.optionalInt64(1)) }
        }
    }
}
