import PulseCrypto
import PulseSQLite

extension SQLiteStorage: AnswerKeyStorage {
    public func answerKeys() throws -> [AnswerKeyRecord] {
        try read { db in try Self.answerKeys(on: db) }
    }

    public func prepareAnswerKeys(adopting: P256.PrivateKey?, signingFor ttl: Int64?, at now: Int64) throws -> [AnswerKeyRecord] {
        try write { db in
            var changed = false
            if try db.scalarInteger("SELECT count(*) FROM answer_keys") == 0 {
                try Self.insertAnswerKey(try adopting ?? P256.PrivateKey(), signsFrom: 0, ttl: ttl ?? 0, at: now, on: db)
                changed = true
            }
            if let ttl, try db.scalarInteger("SELECT count(*) FROM answer_keys WHERE ttl < ?", [.integer(ttl)]) ?? 0 > 0 {
                try db.cached("UPDATE answer_keys SET ttl = ? WHERE ttl < ?").run([.integer(ttl), .integer(ttl)])
                changed = true
            }
            if changed { try Self.bumpGeneration(.credentials, on: db) }
            return try Self.answerKeys(on: db)
        }
    }

    public func rotateAnswerKey(lead: Int64?, at now: Int64) throws -> AnswerKeyRecord {
        let key = try P256.PrivateKey()
        return try write { db in
            try db.cached("DELETE FROM answer_keys WHERE signs_until IS NOT NULL AND signs_until + ttl < ?").run([.integer(now)])
            let ttl = try db.scalarInteger("SELECT coalesce(max(ttl), 0) FROM answer_keys") ?? 0
            let start = now &+ max(0, lead ?? ttl)
            try db.cached("UPDATE answer_keys SET signs_until = max(signs_from, ?) WHERE signs_until IS NULL").run([.integer(start)])
            try Self.insertAnswerKey(key, signsFrom: start, ttl: ttl, at: now, on: db)
            try Self.bumpGeneration(.credentials, on: db)
            guard let added = try Self.answerKeys(on: db).last else { throw ServerError(.storage, "the new answer key was not stored") }
            return added
        }
    }

    static func answerKeys(on db: Database) throws -> [AnswerKeyRecord] {
        let rows = try db.cached("SELECT kid, private_key, signs_from, signs_until, serial, ttl FROM answer_keys ORDER BY serial")
            .rows { row in (row.string(0), row.blob(1), row.int64(2), row.isNull(3) ? nil : row.int64(3), row.int64(4), row.int64(5)) }
        return try rows.map { row in
            var pem = row.1
            defer { SecretBytes.wipe(&pem) }
            return try AnswerKeyRecord.parse(pem: pem, signsFrom: row.2, signsUntil: row.3, serial: row.4, ttl: row.5, what: "answer key \(row.0)")
        }
    }

    static func insertAnswerKey(_ key: P256.PrivateKey, signsFrom: Int64, ttl: Int64, at now: Int64, on db: Database) throws {
        var pem = try key.pemRepresentation().copyBytes()
        defer { SecretBytes.wipe(&pem) }
        try db.cached("""
            INSERT INTO answer_keys (kid, private_key, signs_from, signs_until, serial, added_at, ttl)
            VALUES (?, ?, ?, NULL, (SELECT coalesce(max(serial), 0) + 1 FROM answer_keys), ?, ?)
            """).run([.text(key.publicKey.jwkThumbprint), .blob(pem), .integer(signsFrom), .integer(now), .integer(ttl)])
    }
}
