import PulseCrypto
import PulsePostgres

extension PostgresStorage: AnswerKeyStorage {
    public func answerKeys() throws -> [AnswerKeyRecord] {
        try read { db in try Self.answerKeys(on: db) }
    }

    /// Under an advisory lock, so instances starting together on an empty database make one key, not one each,
    /// and a rotation never runs between an instance raising the keys' TTL and reading them.
    public func prepareAnswerKeys(adopting: P256.PrivateKey?, signingFor ttl: Int64?, at now: Int64) throws -> [AnswerKeyRecord] {
        let (keys, changed) = try transaction { db -> ([AnswerKeyRecord], Bool) in
            _ = try db.query("SELECT pg_advisory_xact_lock($1)", [.integer(PostgresSchema.answerKeyLock)])
            var changed = false
            if try db.query("SELECT count(*) FROM answer_keys").first?.int(0) == 0 {
                try Self.insertAnswerKey(try adopting ?? P256.PrivateKey(), signsFrom: 0, ttl: ttl ?? 0, at: now, on: db)
                changed = true
            }
            if let ttl, try db.query("UPDATE answer_keys SET ttl = $1 WHERE ttl < $1", [.integer(ttl)]).affectedRows > 0 {
                changed = true
            }
            return (try Self.answerKeys(on: db), changed)
        }
        if changed { watch.bump(.credentials) }
        return keys
    }

    public func rotateAnswerKey(lead: Int64?, at now: Int64) throws -> AnswerKeyRecord {
        let key = try P256.PrivateKey()
        let added = try transaction { db -> AnswerKeyRecord in
            _ = try db.query("SELECT pg_advisory_xact_lock($1)", [.integer(PostgresSchema.answerKeyLock)])
            _ = try db.query("DELETE FROM answer_keys WHERE signs_until IS NOT NULL AND signs_until + ttl < $1", [.integer(now)])
            let ttl = try db.query("SELECT coalesce(max(ttl), 0) FROM answer_keys").first?.int64(0) ?? 0
            let start = now &+ max(0, lead ?? ttl)
            _ = try db.query("UPDATE answer_keys SET signs_until = greatest(signs_from, $1) WHERE signs_until IS NULL", [.integer(start)])
            try Self.insertAnswerKey(key, signsFrom: start, ttl: ttl, at: now, on: db)
            guard let added = try Self.answerKeys(on: db).last else { throw ServerError(.storage, "the new answer key was not stored") }
            return added
        }
        watch.bump(.credentials)
        return added
    }

    static func answerKeys(on db: PostgresConnection) throws -> [AnswerKeyRecord] {
        let rows = try db.query("SELECT kid, private_key, signs_from, signs_until, serial, ttl FROM answer_keys ORDER BY serial").rows
        return try rows.map { row in
            var pem = try row.bytes(1)
            defer { SecretBytes.wipe(&pem) }
            return try AnswerKeyRecord.parse(
                pem: pem, signsFrom: try row.int64(2), signsUntil: try row.optionalInt64(3), serial: try row.int64(4), ttl: try row.int64(5),
                what: "answer key \(try row.string(0))")
        }
    }

    static func insertAnswerKey(_ key: P256.PrivateKey, signsFrom: Int64, ttl: Int64, at now: Int64, on db: PostgresConnection) throws {
        var pem = try key.pemRepresentation().copyBytes()
        defer { SecretBytes.wipe(&pem) }
        _ = try db.query("""
            INSERT INTO answer_keys (kid, private_key, signs_from, signs_until, serial, added_at, ttl)
            SELECT $1, $2, $3, NULL, coalesce(max(serial), 0) + 1, $4, $5 FROM answer_keys
            """, [.text(key.publicKey.jwkThumbprint), .bytes(pem), .integer(signsFrom), .integer(now), .integer(ttl)])
    }
}
