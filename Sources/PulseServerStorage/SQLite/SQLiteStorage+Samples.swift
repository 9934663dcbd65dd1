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
                 WHERE id IN (SELECT sample_id FROM diag_latest WHERE session_id = ?1 AND received_at >= ?2)
                ORDER BY device_id
                """).rows([.text(sessionId), .integer(since)], Self.sample)
        }
    }

    public func latestSamples(sessionId: String, since: Int64, limit: Int) throws -> (samples: [DiagSample], devices: Int) {
        try read { db in
            let devices = try db.cached("SELECT count(*) FROM diag_latest WHERE session_id = ? AND received_at >= ?")
                .first([.text(sessionId), .integer(since)]) { $0.int64(0) } ?? 0
            let samples = try db.cached(Self.sampleColumns + """
                 WHERE id IN (SELECT sample_id FROM diag_latest WHERE session_id = ?1 AND received_at >= ?2 ORDER BY received_at DESC, device_id DESC LIMIT ?3)
                ORDER BY received_at DESC, device_id DESC
                """).rows([.text(sessionId), .integer(since), .int(max(0, limit))], Self.sample)
            return (samples, Int(clamping: devices))
        }
    }

    public func sampleStamp(sessionId: String) throws -> SampleStamp {
        try read { db in
            try db.cached("SELECT count(*), coalesce(max(id), 0) FROM diag_samples WHERE session_id = ?")
                .first([.text(sessionId)]) { SampleStamp(count: $0.int64(0), newest: $0.int64(1)) } ?? SampleStamp(count: 0, newest: 0)
        }
    }

    public func latestSamples(deviceIds: [String]) throws -> [String: DiagSample] {
        guard !deviceIds.isEmpty else { return [:] }
        let samples = try read { db in
            try db.cached(Self.sampleColumns + """
                 WHERE id IN (SELECT max(sample_id) FROM diag_latest WHERE device_id IN (SELECT value FROM json_each(?)) GROUP BY device_id)
                """).rows([.text(IdList.json(deviceIds))], Self.sample)
        }
        return Dictionary(samples.map { ($0.deviceId, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
