import PulsePostgres

extension PostgresStorage {
    public func addCredential(_ credential: NewCredential, audit: [AuditEntry]) throws {
        let insert = { (db: PostgresConnection) throws -> Void in
            _ = try db.query("""
                INSERT INTO credentials (
                    hash, listing_id, kind, scope_kind, scope_id, max_devices, created_at, expires_at, enroll_rate, enroll_burst, max_streams,
                    staff_role, staff_session)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
                """, [
                    .bytes(credential.hash), .text(CredentialSecret.listingId(hash: credential.hash)), .text(credential.kind.rawValue),
                    .text(credential.scope?.kind), .text(credential.scope?.id), .int(credential.maxDevices),
                    .integer(credential.createdAt), .integer(credential.expiresAt),
                    .int(credential.limits.enrollRate), .int(credential.limits.enrollBurst), .int(credential.limits.maxStreams),
                    .text(credential.staffRole?.rawValue), .text(credential.staffSession),
                ])
            try Self.appendAudit(audit, on: db)
        }
        // One statement alone; a transaction when its audit entry goes with it.
        if audit.isEmpty { try statement(insert) } else { try transaction(insert) }
        watch.bump(.credentials)
    }

    public func revokeCredential(hash: [UInt8], at now: Int64, withDevices: Bool, audit: [AuditEntry]) throws -> Revocation? {
        try revoke(at: now, withDevices: withDevices, audit: audit) { db in
            try db.query("SELECT hash FROM credentials WHERE hash = $1 FOR UPDATE", [.bytes(hash)]).rows.map { try $0.bytes(0) }
        }
    }

    public func revokeCredential(listingId id: String, at now: Int64, withDevices: Bool, audit: [AuditEntry]) throws -> Revocation? {
        try revoke(at: now, withDevices: withDevices, audit: audit) { db in
            let hashes = try db.query("SELECT hash FROM credentials WHERE listing_id = $1 FOR UPDATE", [.text(id)]).rows.map { try $0.bytes(0) }
            // A listing id is a hash prefix: refuse when it is ambiguous rather than revoke two.
            guard hashes.count <= 1 else { throw ServerError.badInput("\(id) names \(hashes.count) credentials; revoke by the token itself") }
            return hashes
        }
    }

    /// One transaction: the credential's row lock first (an enroll with it holds the same lock, so every
    /// enrollment that got in before is committed when the devices are revoked, and none gets in after), then
    /// the credential, then (with `withDevices`) its active devices, each statement seeing what committed before it.
    private func revoke(
        at now: Int64, withDevices: Bool, audit: [AuditEntry], lock: @escaping (PostgresConnection) throws -> [[UInt8]]
    ) throws -> Revocation? {
        let revocation = try transaction { db -> Revocation? in
            guard let hash = try lock(db).first else { return nil }
            let credential = try db.query(
                "UPDATE credentials SET revoked_at = $1 WHERE hash = $2 AND revoked_at IS NULL", [.integer(now), .bytes(hash)]).affectedRows == 1
            let devices = withDevices
                ? try db.query("UPDATE devices SET revoked_at = $1 WHERE credential_hash = $2 AND revoked_at IS NULL", [.integer(now), .bytes(hash)]).affectedRows
                : 0
            guard credential || devices > 0 else { return nil }
            try Self.appendAudit(audit, on: db)
            return Revocation(credential: credential, devices: devices)
        }
        if let revocation { watch.bump(revocation.changed) }
        return revocation
    }

    static let credentialColumns = """
        SELECT listing_id, kind, scope_kind, scope_id, max_devices, devices_enrolled, created_at, expires_at, used_at, revoked_at,
            enroll_rate, enroll_burst, max_streams, staff_role, staff_session
        FROM credentials
        """

    static func credential(_ row: PostgresRow) throws -> CredentialRecord {
        CredentialRecord(
            id: try row.string(0), kind: CredentialKind(rawValue: try row.string(1)) ?? .staffToken,
            scope: try row.optionalString(2).flatMap { DeviceScope(kind: $0, id: try row.string(3)) },
            maxDevices: try row.optionalInt(4), devicesEnrolled: try row.int(5),
            limits: TokenLimits(enrollRate: try row.optionalInt(10), enrollBurst: try row.optionalInt(11), maxStreams: try row.optionalInt(12)),
            createdAt: try row.int64(6), expiresAt: try row.optionalInt64(7), usedAt: try row.optionalInt64(8),
            revokedAt: try row.optionalInt64(9), staffRole: try row.optionalString(13).flatMap(StaffRole.init(rawValue:)),
            staffSession: try row.optionalString(14))
    }

    public func credentials() throws -> [CredentialRecord] {
        try read { db in try db.query(Self.credentialColumns + " ORDER BY created_at DESC, listing_id COLLATE \"C\"").rows.map(Self.credential) }
    }

    public func credentials(kinds: [CredentialKind], offset: Int, limit: Int) throws -> (credentials: [CredentialRecord], total: Int) {
        let filter = " WHERE kind IN (SELECT jsonb_array_elements_text($1::jsonb))"
        let list = PostgresValue.text(IdList.json(kinds.map(\.rawValue)))
        return try read { db in
            let total = try db.query("SELECT count(*) FROM credentials" + filter, [list]).first?.int64(0) ?? 0
            let page = try db.query(
                Self.credentialColumns + filter + " ORDER BY created_at DESC, listing_id COLLATE \"C\" LIMIT $2 OFFSET $3",
                [list, .integer(Int64(max(0, limit))), .integer(Int64(max(0, offset)))]
            ).rows.map(Self.credential)
            return (page, Int(clamping: total))
        }
    }

    public func recentEnrollments(since: Int64) throws -> [String: Int] {
        try read { db in
            let rows = try db.query(
                "SELECT listing_id, sum(devices)::bigint FROM enrollment_buckets WHERE bucket >= $1 GROUP BY listing_id", [.integer(EnrollmentBuckets.start(since))]
            ).rows.map { row in (try row.string(0), try row.int(1)) }
            return Dictionary(rows, uniquingKeysWith: +)
        }
    }

    public func registrationTokens() throws -> [RegistrationToken] {
        try read { db in
            try db.query("""
                SELECT hash, listing_id, enroll_rate, enroll_burst, max_streams FROM credentials
                WHERE kind = 'registration-token'
                """).rows.map { row in
                    RegistrationToken(
                        hash: try row.bytes(0), listingId: try row.string(1),
                        limits: TokenLimits(enrollRate: try row.optionalInt(2), enrollBurst: try row.optionalInt(3), maxStreams: try row.optionalInt(4)))
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

    public func activeStaffTokens(at now: Int64) throws -> [ActiveStaffToken] {
        try read { db in
            try db.query("""
                SELECT hash, expires_at, staff_role, staff_session FROM credentials WHERE kind = 'staff-token' AND revoked_at IS NULL
                AND (expires_at IS NULL OR expires_at > $1)
                """, [.integer(now)]).rows.compactMap { row in
                    // A role this program does not know grants nothing.
                    guard let role = try row.optionalString(2).flatMap(StaffRole.init(rawValue:)) else { return nil }
                    return ActiveStaffToken(hash: try row.bytes(0), expiresAt: try row.optionalInt64(1), role: role, session: try row.optionalString(3))
                }
        }
    }
}
