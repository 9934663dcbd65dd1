import PulseCore
import PulseSQLite

extension SQLiteStorage {
    public func recordSignedRequest(replayKey: [UInt8], expiresAt: Int64, sample: DiagSample?, at now: Int64) throws -> Bool {
        try write { db in
            // A unique insert decides: a key seen before and not yet expired changes nothing.
            try db.cached("""
                INSERT INTO replay_keys (key, expires_at) VALUES (?1, ?2)
                ON CONFLICT (key) DO UPDATE SET expires_at = ?2 WHERE replay_keys.expires_at <= ?3
                """).run([.blob(replayKey), .integer(expiresAt), .integer(now)])
            guard db.changes == 1 else { return false }
            if let sample {
                try db.cached("""
                    INSERT INTO diag_samples (session_id, device_id, received_at, build, platform, connection) VALUES (?, ?, ?, ?, ?, ?)
                    """).run([
                        .text(sample.sessionId), .text(sample.deviceId), .integer(sample.receivedAt), .text(sample.build),
                        .text(sample.platform), .text(String(decoding: sample.connection.canonicalBytes, as: UTF8.self)),
                    ])
            }
            return true
        }
    }

    public func pruneReplayKeys(at now: Int64) throws -> Int {
        try write { db in
            try db.cached("DELETE FROM replay_keys WHERE expires_at <= ?").run([.integer(now)])
            return db.changes
        }
    }

    private static let sampleColumns = "SELECT session_id, device_id, received_at, build, platform, connection FROM diag_samples"

    private static func sample(_ row: Statement) -> DiagSample {
        DiagSample(
            sessionId: row.string(0), deviceId: row.string(1), receivedAt: row.int64(2), build: row.string(3), platform: row.string(4),
            connection: (try? JSONValue.parse(Array(row.string(5).utf8))) ?? .null)
    }

    public func samples(sessionId: String) throws -> [DiagSample] {
        try read { db in try db.cached(Self.sampleColumns + " WHERE session_id = ? ORDER BY id").rows([.text(sessionId)], Self.sample) }
    }

    public func latestSamples(sessionId: String, since: Int64) throws -> [DiagSample] {
        try read { db in
            try db.cached(Self.sampleColumns + """
                 WHERE id IN (SELECT max(id) FROM diag_samples WHERE session_id = ?1 AND received_at >= ?2 GROUP BY device_id)
                ORDER BY device_id
                """).rows([.text(sessionId), .integer(since)], Self.sample)
        }
    }
}
