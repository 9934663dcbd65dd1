import PulsePostgres

extension PostgresStorage {
    public func enroll(credentialHash: [UInt8], device: NewDevice, at now: Int64) throws -> DeviceRecord? {
        // One call of `pulse_enroll` (schema version 2), so one round trip and one atomic step: it locks the
        // credential's row, answers a retry with the device it made, or consumes the credential with a
        // conditional UPDATE and inserts the device from the row that returned. Fifty enrolls with one code
        // queue on that row lock, so exactly one consumes it. A taken device id fails the whole call (unique
        // violation): the credential is not consumed.
        let row = try statement { db -> PostgresRow? in
            do {
                return try db.query(
                    "SELECT * FROM pulse_enroll($1, $2, $3, $4, $5, $6)",
                    [.integer(now), .bytes(credentialHash), .text(device.id), .bytes(device.publicKey), .text(device.platform), .text(device.name)]
                ).first
            } catch let error as PostgresError where error.kind == .uniqueViolation && error.constraint == "devices_pkey" {
                return nil  // the device id is taken
            }
        }
        guard let row, let scope = DeviceScope(kind: try row.string(3), id: try row.string(4)) else { return nil }
        let id = try row.string(0)
        if id == device.id { watch.bump([]) }  // a new device: no cached record went stale
        return DeviceRecord(
            id: id, publicKey: device.publicKey, platform: try row.string(1), name: try row.string(2), scope: scope,
            enrolledAt: try row.int64(6), revokedAt: nil, credentialId: try row.string(5))
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

    public func devices(ids: [String]) throws -> [DeviceRecord] {
        guard !ids.isEmpty else { return [] }
        // One statement for any number of ids: the list goes in as one JSON array.
        return try read { db in
            try db.query(Self.deviceColumns + " WHERE d.id IN (SELECT jsonb_array_elements_text($1::jsonb))", [.text(IdList.json(ids))])
                .rows.map(Self.device)
        }
    }

    public func devices(matching search: String, scopes: [DeviceScope]?, offset: Int, limit: Int) throws -> (devices: [DeviceRecord], total: Int) {
        // The scopes go in as one JSON array of `kind:id` (a kind has no colon), or NULL for any.
        let filter = """
             WHERE ($1 = '' OR strpos(lower(d.name), $1) > 0 OR strpos(lower(d.platform), $1) > 0 OR strpos(d.id, $1) > 0
                OR strpos(lower(d.scope_id), $1) > 0)
               AND ($2::jsonb IS NULL OR d.scope_kind || ':' || d.scope_id IN (SELECT jsonb_array_elements_text($2::jsonb)))
            """
        let scopeList: PostgresValue = scopes.map { .text(IdList.json($0.map { $0.kind + ":" + $0.id })) } ?? .null
        return try read { db in
            let total = try db.query("SELECT count(*) FROM devices d" + filter, [.text(search), scopeList]).first?.int64(0) ?? 0
            let page = try db.query(
                Self.deviceColumns + filter + " ORDER BY d.enrolled_at DESC, d.id COLLATE \"C\" LIMIT $3 OFFSET $4",
                [.text(search), scopeList, .integer(Int64(max(0, limit))), .integer(Int64(max(0, offset)))]
            ).rows.map(Self.device)
            return (page, Int(clamping: total))
        }
    }

    public func revokeDevice(id: String, at now: Int64, audit: [AuditEntry]) throws -> Bool {
        let revoke = { (db: PostgresConnection) throws -> Bool in
            let revoked = try db.query(
                "UPDATE devices SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL", [.integer(now), .text(id)]).affectedRows == 1
            if revoked { try Self.appendAudit(audit, on: db) }
            return revoked
        }
        // One statement alone; a transaction when its audit entry goes with it.
        let revoked = audit.isEmpty ? try statement(revoke) : try transaction(revoke)
        if revoked { watch.bump(.devices) }
        return revoked
    }
}
