import PulseCrypto
import PulsePostgres

/// The device certificate keys in the database: the one concern file without a SQLite twin. A SQLite box keeps
/// its one key in the data folder (`device-cert-key.pem`); instances on one PostgreSQL database must share their
/// keys, so they live here (see `ServerStorage`'s table). No protocol: one backend has it, and `serve` asks for
/// it by type.
extension PostgresStorage {
    /// Makes sure the database holds the device certificate keys every instance signs and publishes with:
    /// adds `adopting` (a data folder's `device-cert-key.pem`: certificates it signed must keep verifying)
    /// unless it is held, and generates a key when there is none. In one transaction under an advisory
    /// lock, so instances starting together on an empty database make one key, not one each.
    /// - Returns: every key, oldest first (the first signs).
    public func prepareCertificateKeys(adopting: DeviceCertificateKey?, at now: Int64) throws -> [DeviceCertificateKey] {
        let changed = try transaction { db -> Bool in
            _ = try db.query("SELECT pg_advisory_xact_lock($1)", [.integer(PostgresSchema.certificateKeyLock)])
            var added = false
            if let adopting {
                added = try Self.insert(adopting, at: now, on: db)
            }
            if try db.query("SELECT count(*) FROM certificate_keys").first?.int(0) == 0 {
                added = try Self.insert(try DeviceCertificateKey.generate(), at: now, on: db) || added
            }
            return added
        }
        if changed { watch.bump(.credentials) }
        return try certificateKeys()
    }

    /// Every device certificate key in the database, oldest first (the first signs new certificates).
    /// - Throws: `ServerError(.storage)` for a stored key that does not parse (its bytes are never quoted).
    public func certificateKeys() throws -> [DeviceCertificateKey] {
        let rows = try read { db in try db.query("SELECT kid, private_key FROM certificate_keys ORDER BY added_at, kid COLLATE \"C\"").rows }
        return try rows.map { row in
            var pem = try row.bytes(1)
            defer { SecretBytes.wipe(&pem) }
            guard let key = try? DeviceCertificateKey(pem: pem) else {
                throw ServerError(.storage, "database \(configuration.redacted): certificate key \(try row.string(0)) is not a P-256 PKCS#8 PEM key")
            }
            return key
        }
    }

    /// Inserts `key` unless its kid is held; true when it was inserted.
    static func insert(_ key: DeviceCertificateKey, at now: Int64, on db: PostgresConnection) throws -> Bool {
        var pem = try key.pem()
        defer { SecretBytes.wipe(&pem) }
        return try db.query(
            "INSERT INTO certificate_keys (kid, private_key, added_at) VALUES ($1, $2, $3) ON CONFLICT (kid) DO NOTHING",
            [.text(key.keyId), .bytes(pem), .integer(now)]
        ).affectedRows == 1
    }
}
