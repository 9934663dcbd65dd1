import PulseSQLite

extension SQLiteStorage {
    public func addCredential(_ credential: NewCredential, audit: [AuditEntry]) throws {
        try write { db in
            try db.cached("""
                INSERT INTO credentials (
                    hash, listing_id, kind, scope_kind, scope_id, max_devices, created_at, expires_at, enroll_rate, enroll_burst, max_streams,
                    staff_role, staff_session)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).run([
                    .blob(credential.hash), .text(CredentialSecret.listingId(hash: credential.hash)), .text(credential.kind.rawValue),
                    .text(credential.scope?.kind), .text(credential.scope?.id), .int(credential.maxDevices),
                    .integer(credential.createdAt), credential.expiresAt.map { .integer($0) } ?? .null,
                    .int(credential.limits.enrollRate), .int(credential.limits.enrollBurst), .int(credential.limits.maxStreams),
                    .text(credential.staffRole?.rawValue), .text(credential.staffSession),
                ])
            try Self.bumpGeneration(.credentials, on: db)
            try Self.appendAudit(audit, on: db)
        }
    }

    public func revokeCredential(hash: [UInt8], at now: Int64, withDevices: Bool, audit: [AuditEntry]) throws -> Revocation? {
        try write { db in try Self.revoke(hash: hash, at: now, withDevices: withDevices, audit: audit, on: db) }
    }

    public func revokeCredential(listingId id: String, at now: Int64, withDevices: Bool, audit: [AuditEntry]) throws -> Revocation? {
        try write { db in
            // A listing id is a hash prefix: refuse when it is ambiguous rather than revoke two.
            let hashes = try db.cached("SELECT hash FROM credentials WHERE listing_id = ?").rows([.text(id)]) { $0.blob(0) }
            guard hashes.count <= 1 else { throw ServerError.badInput("\(id) names \(hashes.count) credentials; revoke by the token itself") }
            guard let hash = hashes.first else { return nil }
            return try Self.revoke(hash: hash, at: now, withDevices: withDevices, audit: audit, on: db)
        }
    }

    /// The credential, then (with `withDevices`) its active devices, inside the caller's write transaction.
    private static func revoke(hash: [UInt8], at now: Int64, withDevices: Bool, audit: [AuditEntry], on db: Database) throws -> Revocation? {
        try db.cached("UPDATE credentials SET revoked_at = ? WHERE hash = ? AND revoked_at IS NULL").run([.integer(now), .blob(hash)])
        let credential = db.changes == 1
        var devices = 0
        if withDevices {
            try db.cached("UPDATE devices SET revoked_at = ? WHERE credential_hash = ? AND revoked_at IS NULL").run([.integer(now), .blob(hash)])
            devices = db.changes
        }
        guard credential || devices > 0 else { return nil }
        let revocation = Revocation(credential: credential, devices: devices)
        try bumpGeneration(revocation.changed, on: db)
        try appendAudit(audit, on: db)
        return revocation
    }

    static let credentialColumns = """
        SELECT listing_id, kind, scope_kind, scope_id, max_devices, devices_enrolled, created_at, expires_at, used_at, revoked_at,
            enroll_rate, enroll_burst, max_streams, staff_role, staff_session
        FROM credentials
        """

    static func credential(_ row: Statement) -> CredentialRecord {
        CredentialRecord(
            id: row.string(0), kind: CredentialKind(rawValue: row.string(1)) ?? .staffToken,
            scope: row.optionalString(2).flatMap { DeviceScope(kind: $0, id: row.string(3)) },
            maxDevices: row.optionalInt(4), devicesEnrolled: row.int(5),
            limits: TokenLimits(enrollRate: row.optionalInt(10), enrollBurst: row.optionalInt(11), maxStreams: row.optionalInt(12)),
            createdAt: row.int64(6), expiresAt: row.isNull(7) ? nil : row.int64(7), usedAt: row.isNull(8) ? nil : row.int64(8),
            revokedAt: row.isNull(9) ? nil : row.int64(9), staffRole: row.optionalString(13).flatMap(StaffRole.init(rawValue:)),
            staffSession: row.optionalString(14))
    }

    public func credentials() throws -> [CredentialRecord] {
        try read { db in try db.cached(Self.credentialColumns + " ORDER BY created_at DESC, listing_id").rows([], Self.credential) }
    }

    public func credentials(kinds: [CredentialKind], offset: Int, limit: Int) throws -> (credentials: [CredentialRecord], total: Int) {
        let filter = " WHERE kind IN (SELECT value FROM json_each(?1))"
        let list = SQLiteValue.text(IdList.json(kinds.map(\.rawValue)))
        return try read { db in
            let total = try db.cached("SELECT count(*) FROM credentials" + filter).first([list]) { $0.int64(0) } ?? 0
            let page = try db.cached(Self.credentialColumns + filter + " ORDER BY created_at DESC, listing_id LIMIT ?2 OFFSET ?3")
                .rows([list, .int(max(0, limit)), .int(max(0, offset))], Self.credential)
            return (page, Int(clamping: total))
        }
    }

    public func recentEnrollments(since: Int64) throws -> [String: Int] {
        try read { db in
            let rows = try db.cached("SELECT listing_id, sum(devices) FROM enrollment_buckets WHERE bucket >= ? GROUP BY listing_id")
                .rows([.integer(EnrollmentBuckets.start(since))]) { row in (row.string(0), row.int(1)) }
            return Dictionary(rows, uniquingKeysWith: +)
        }
    }

    public func registrationTokens() throws -> [RegistrationToken] {
        try read { db in
            try db.cached("""
                SELECT hash, listing_id, enroll_rate, enroll_burst, max_streams FROM credentials
                WHERE kind = 'registration-token'
                """).rows { row in
                    RegistrationToken(
                        hash: row.blob(0), listingId: row.string(1),
                        limits: TokenLimits(enrollRate: row.optionalInt(2), enrollBurst: row.optionalInt(3), maxStreams: row.optionalInt(4)))
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

    public func activeStaffTokens(at now: Int64) throws -> [ActiveStaffToken] {
        try read { db in
            try db.cached("""
                SELECT hash, expires_at, staff_role, staff_session FROM credentials WHERE kind = 'staff-token' AND revoked_at IS NULL
                AND (expires_at IS NULL OR expires_at > ?)
                """).rows([.integer(now)]) { row in
                    // A role this program does not know grants nothing.
                    row.optionalString(2).flatMap(StaffRole.init(rawValue:)).map { role in
                        ActiveStaffToken(hash: row.blob(0), expiresAt: row.isNull(1) ? nil : row.int64(1), role: role, session: row.optionalString(3))
                    }
                }.compactMap { $0 }
        }
    }
}
