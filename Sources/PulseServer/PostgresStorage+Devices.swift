import PulsePostgres

extension PostgresStorage {
    public func enroll(credentialHash: [UInt8], device: NewDevice, at now: Int64) throws -> DeviceRecord? {
        // One statement, so one atomic step: the conditional UPDATE consumes the credential or matches
        // nothing, and the device row is inserted only from the row it returned. Fifty enrolls with one
        // code queue on the credential's row lock; each re-checks the WHERE clause against the row the
        // one before committed (READ COMMITTED), so exactly one matches. A taken device id fails the
        // whole statement (unique violation): the credential is not consumed.
        let consumed = try statement { db -> (kind: String, id: String, listingId: String)? in
            do {
                return try db.query("""
                    WITH consumed AS (
                        UPDATE credentials SET devices_enrolled = devices_enrolled + 1,
                            used_at = CASE WHEN kind = 'device-code' THEN $1 ELSE used_at END
                        WHERE hash = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $1)
                            AND ((kind = 'device-code' AND devices_enrolled = 0)
                              OR (kind = 'registration-token' AND (max_devices IS NULL OR devices_enrolled < max_devices)))
                        RETURNING scope_kind, scope_id, listing_id, hash
                    ), enrolled AS (
                        INSERT INTO devices (id, public_key, platform, name, scope_kind, scope_id, credential_hash, enrolled_at)
                        SELECT $3::text, $4::bytea, $5::text, $6::text, scope_kind, scope_id, hash, $1::bigint FROM consumed
                        RETURNING id
                    )
                    SELECT consumed.scope_kind, consumed.scope_id, consumed.listing_id FROM consumed, enrolled
                    """, [.integer(now), .bytes(credentialHash), .text(device.id), .bytes(device.publicKey), .text(device.platform), .text(device.name)])
                    .first.map { (try $0.string(0), try $0.string(1), try $0.string(2)) }
            } catch let error as PostgresError where error.kind == .uniqueViolation && error.constraint == "devices_pkey" {
                return nil  // the device id is taken
            }
        }
        guard let consumed, let scope = DeviceScope(kind: consumed.kind, id: consumed.id) else { return nil }
        watch.bump([])  // a new device: no cached record went stale
        return DeviceRecord(
            id: device.id, publicKey: device.publicKey, platform: device.platform, name: device.name, scope: scope,
            enrolledAt: now, revokedAt: nil, credentialId: consumed.listingId)
    }

    static let deviceColumns = """
        SELECT d.id, d.public_key, d.platform, d.name, d.scope_kind, d.scope_id, d.enrolled_at, d.revoked_at, c.listing_id
        FROM devices d JOIN credentials c ON c.hash = d.credential_hash
        """

    static func device(_ row: PostgresRow) throws -> DeviceRecord {
        let scopeId = try row.string(5)
        return DeviceRecord(
            id: try row.string(0), publicKey: try row.bytes(1), platform: try row.string(2), name: try row.string(3),
            scope: DeviceScope(kind: try row.string(4), id: scopeId) ?? .session(scopeId), enrolledAt: try row.int64(6),
            revokedAt: try row.optionalInt64(7), credentialId: try row.string(8))
    }

    public func device(id: String) throws -> DeviceRecord? {
        try read { db in try db.query(Self.deviceColumns + " WHERE d.id = $1", [.text(id)]).first.map(Self.device) }
    }

    public func devices() throws -> [DeviceRecord] {
        try read { db in try db.query(Self.deviceColumns + " ORDER BY d.enrolled_at, d.id COLLATE \"C\"").rows.map(Self.device) }
    }

    public func revokeDevice(id: String, at now: Int64) throws -> Bool {
        let revoked = try statement { db in
            try db.query("UPDATE devices SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL", [.integer(now), .text(id)]).affectedRows == 1
        }
        if revoked { watch.bump(.devices) }
        return revoked
    }
}
