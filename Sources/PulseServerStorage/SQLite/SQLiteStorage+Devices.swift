import PulseSQLite

extension SQLiteStorage {
    /// Thrown inside the enroll transaction to roll it back when the device id is taken.
    private struct DeviceIdTaken: Error {}

    public func enroll(credentialHash: [UInt8], device: NewDevice, at now: Int64) throws -> DeviceRecord? {
        do {
            return try write { db -> DeviceRecord? in
                // A retry of an enrollment whose answer was lost: the same credential and key, the device and
                // the credential still valid. It gets the device it made. (Inside the write lock: no enroll
                // with this credential can commit between this read and the UPDATE below.)
                if let made = try db.cached(Self.deviceColumns + """
                     WHERE d.credential_hash = ?1 AND d.public_key = ?2 AND d.revoked_at IS NULL
                        AND c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > ?3)
                    ORDER BY d.enrolled_at, d.id LIMIT 1
                    """).first([.blob(credentialHash), .blob(device.publicKey), .integer(now)], Self.device) {
                    return made
                }
                // The database decides: one conditional UPDATE consumes the credential or matches nothing.
                let consumed = try db.cached("""
                    UPDATE credentials SET devices_enrolled = devices_enrolled + 1,
                        used_at = CASE WHEN kind = 'device-code' THEN ?1 ELSE used_at END
                    WHERE hash = ?2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?1)
                        AND ((kind = 'device-code' AND devices_enrolled = 0)
                          OR (kind = 'registration-token' AND (max_devices IS NULL OR devices_enrolled < max_devices)))
                    RETURNING scope_kind, scope_id, listing_id
                    """).first([.integer(now), .blob(credentialHash)]) { row in (row.string(0), row.string(1), row.string(2)) }
                guard let (kind, id, listingId) = consumed, let scope = DeviceScope(kind: kind, id: id) else { return nil }
                try db.cached("""
                    INSERT INTO devices (id, public_key, platform, name, scope_kind, scope_id, credential_hash, enrolled_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
                    """).run([
                        .text(device.id), .blob(device.publicKey), .text(device.platform), .text(device.name),
                        .text(scope.kind), .text(scope.id), .blob(credentialHash), .integer(now),
                    ])
                guard db.changes == 1 else { throw DeviceIdTaken() }
                // The listings' "enrolled in the last minute": this bucket's count, older buckets pruned.
                let bucket = EnrollmentBuckets.start(now)
                try db.cached("""
                    INSERT INTO enrollment_buckets (listing_id, bucket, devices) VALUES (?, ?, 1)
                    ON CONFLICT (listing_id, bucket) DO UPDATE SET devices = devices + 1
                    """).run([.text(listingId), .integer(bucket)])
                try db.cached("DELETE FROM enrollment_buckets WHERE bucket < ?").run([.integer(bucket - EnrollmentBuckets.kept)])
                try Self.bumpGeneration([], on: db)  // a new device: no cached record went stale
                return DeviceRecord(
                    id: device.id, publicKey: device.publicKey, platform: device.platform, name: device.name, scope: scope,
                    enrolledAt: now, revokedAt: nil, credentialId: listingId)
            }
        } catch is DeviceIdTaken {
            return nil
        }
    }

    static let deviceColumns = """
        SELECT d.id, d.public_key, d.platform, d.name, d.scope_kind, d.scope_id, d.enrolled_at, d.revoked_at, c.listing_id
        FROM devices d JOIN credentials c ON c.hash = d.credential_hash
        """

    static func device(_ row: Statement) -> DeviceRecord {
        DeviceRecord(
            id: row.string(0), publicKey: row.blob(1), platform: row.string(2), name: row.string(3),
            scope: DeviceScope(kind: row.string(4), id: row.string(5)) ?? .session(row.string(5)), enrolledAt: row.int64(6),
            revokedAt: row.isNull(7) ? nil : row.int64(7), credentialId: row.string(8))
    }

    public func device(id: String) throws -> DeviceRecord? {
        try read { db in try db.cached(Self.deviceColumns + " WHERE d.id = ?").first([.text(id)], Self.device) }
    }

    public func devices() throws -> [DeviceRecord] {
        try read { db in try db.cached(Self.deviceColumns + " ORDER BY d.enrolled_at, d.id").rows([], Self.device) }
    }

    public func devices(ids: [String]) throws -> [DeviceRecord] {
        guard !ids.isEmpty else { return [] }
        // One statement for any number of ids: the list goes in as one JSON array.
        return try read { db in
            try db.cached(Self.deviceColumns + " WHERE d.id IN (SELECT value FROM json_each(?))").rows([.text(IdList.json(ids))], Self.device)
        }
    }

    public func devices(matching search: String, scopes: [DeviceScope]?, offset: Int, limit: Int) throws -> (devices: [DeviceRecord], total: Int) {
        // lower() folds ASCII letters only: the console lowercases the search with Swift, so a search in
        // another script still matches its own letters exactly. The scopes go in as one JSON array of
        // `kind:id` (a kind has no colon), or NULL for any.
        let filter = """
             WHERE (?1 = '' OR instr(lower(d.name), ?1) > 0 OR instr(lower(d.platform), ?1) > 0 OR instr(d.id, ?1) > 0
                OR instr(lower(d.scope_id), ?1) > 0)
               AND (?2 IS NULL OR d.scope_kind || ':' || d.scope_id IN (SELECT value FROM json_each(?2)))
            """
        let scopeList: SQLiteValue = scopes.map { .text(IdList.json($0.map { $0.kind + ":" + $0.id })) } ?? .null
        return try read { db in
            let total = try db.cached("SELECT count(*) FROM devices d" + filter).first([.text(search), scopeList]) { $0.int64(0) } ?? 0
            let page = try db.cached(Self.deviceColumns + filter + " ORDER BY d.enrolled_at DESC, d.id LIMIT ?3 OFFSET ?4")
                .rows([.text(search), scopeList, .int(max(0, limit)), .int(max(0, offset))], Self.device)
            return (page, Int(clamping: total))
        }
    }

    public func revokeDevice(id: String, at now: Int64, audit: [AuditEntry]) throws -> Bool {
        try write { db in
            try db.cached("UPDATE devices SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run([.integer(now), .text(id)])
            guard db.changes == 1 else { return false }
            try Self.bumpGeneration(.devices, on: db)
            try Self.appendAudit(audit, on: db)
            return true
        }
    }
}
