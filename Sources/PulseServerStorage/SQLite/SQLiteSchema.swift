import PulseSQLite

/// The SQLite schema, one migration per version. Append new versions; never edit a released one.
///
/// CHECK constraints repeat the invariants the code keeps (a device code enrolls at most one device,
/// a registration token at most its cap, a frontier is never negative), so that a bug in a statement
/// fails loudly instead of writing a state the server must never be in.
enum SQLiteSchema {
    static let migrations = [
        Migration(version: 1, sql: """
            -- Bumped by every change a cache of devices, credentials, sessions or content must see; not by
            -- replay keys or samples, which are written on every signed POST.
            CREATE TABLE generation (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
            INSERT INTO generation (id, value) VALUES (1, 0);

            CREATE TABLE credentials (
                hash BLOB PRIMARY KEY,
                listing_id TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('device-code', 'registration-token', 'staff-token')),
                scope_kind TEXT CHECK (scope_kind IN ('session', 'series')),
                scope_id TEXT,
                max_devices INTEGER CHECK (max_devices IS NULL OR max_devices >= 1),
                devices_enrolled INTEGER NOT NULL DEFAULT 0,
                created_at INTEGER NOT NULL,
                expires_at INTEGER,
                used_at INTEGER,
                revoked_at INTEGER,
                CHECK ((kind = 'staff-token') = (scope_kind IS NULL)),
                CHECK ((scope_kind IS NULL) = (scope_id IS NULL)),
                CHECK (kind <> 'device-code' OR devices_enrolled <= 1),
                CHECK (max_devices IS NULL OR devices_enrolled <= max_devices)
            ) WITHOUT ROWID;
            CREATE INDEX credentials_listing ON credentials (listing_id);

            CREATE TABLE devices (
                id TEXT PRIMARY KEY,
                public_key BLOB NOT NULL,
                platform TEXT NOT NULL,
                name TEXT NOT NULL,
                scope_kind TEXT NOT NULL CHECK (scope_kind IN ('session', 'series')),
                scope_id TEXT NOT NULL,
                credential_hash BLOB NOT NULL REFERENCES credentials (hash),
                enrolled_at INTEGER NOT NULL,
                revoked_at INTEGER
            );
            CREATE INDEX devices_credential ON devices (credential_hash);

            CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                state TEXT NOT NULL DEFAULT 'draft' CHECK (state IN ('draft', 'scheduled', 'rehearsal', 'live', 'ended')),
                max_shown INTEGER CHECK (max_shown >= 0),
                rehearsal_max_shown INTEGER CHECK (rehearsal_max_shown >= 0),
                allow_download INTEGER NOT NULL DEFAULT 0 CHECK (allow_download IN (0, 1)),
                package_id TEXT NOT NULL,
                series_id TEXT,
                package_version TEXT NOT NULL,
                deck_version INTEGER NOT NULL,
                slide_count INTEGER NOT NULL CHECK (slide_count >= 0),
                manifest BLOB NOT NULL,
                gated BLOB NOT NULL,
                change_sequence INTEGER NOT NULL DEFAULT 0,
                updated_at INTEGER NOT NULL
            );

            CREATE TABLE venue_networks (
                session_id TEXT NOT NULL REFERENCES sessions (id),
                network TEXT NOT NULL,
                PRIMARY KEY (session_id, network)
            ) WITHOUT ROWID;

            CREATE TABLE key_tables (
                session_id TEXT NOT NULL REFERENCES sessions (id),
                deck_version INTEGER NOT NULL,
                package_id TEXT NOT NULL,
                digest BLOB NOT NULL,
                slides BLOB NOT NULL,
                imported_at INTEGER NOT NULL,
                PRIMARY KEY (session_id, deck_version)
            ) WITHOUT ROWID;

            CREATE TABLE series (
                id TEXT PRIMARY KEY,
                package_id TEXT NOT NULL,
                package_version TEXT NOT NULL,
                manifest BLOB NOT NULL,
                updated_at INTEGER NOT NULL
            );

            CREATE TABLE series_sessions (
                series_id TEXT NOT NULL REFERENCES series (id),
                position INTEGER NOT NULL,
                session_id TEXT NOT NULL,
                PRIMARY KEY (series_id, session_id)
            ) WITHOUT ROWID;

            CREATE TABLE session_changes (
                session_id TEXT NOT NULL REFERENCES sessions (id),
                sequence INTEGER NOT NULL,
                at INTEGER NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('advance', 'rehearsal-advance', 'state', 'settings', 'content')),
                max_shown INTEGER,
                deck_version INTEGER,
                state TEXT,
                package_version TEXT,
                PRIMARY KEY (session_id, sequence)
            ) WITHOUT ROWID;

            CREATE TABLE replay_keys (
                key BLOB PRIMARY KEY,
                expires_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE INDEX replay_keys_expiry ON replay_keys (expires_at);

            CREATE TABLE diag_samples (
                id INTEGER PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions (id),
                device_id TEXT NOT NULL REFERENCES devices (id),
                received_at INTEGER NOT NULL,
                build TEXT NOT NULL,
                platform TEXT NOT NULL,
                connection TEXT NOT NULL
            );
            CREATE INDEX diag_samples_session ON diag_samples (session_id, received_at);
            CREATE INDEX diag_samples_device ON diag_samples (session_id, device_id, id);
            """),
        Migration(version: 2, sql: """
            -- Which kind of change moved the generation, so a cache drops only what went stale
            -- (StorageGeneration): an advance must not throw away every cached device key.
            ALTER TABLE generation ADD COLUMN credentials INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE generation ADD COLUMN devices INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE generation ADD COLUMN sessions INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE generation ADD COLUMN content INTEGER NOT NULL DEFAULT 0;
            """),
        Migration(version: 3, sql: """
            -- An enrollment whose answer was lost is asked again with the same credential and public key: it
            -- gets the device it made (SQLiteStorage.enroll), found by this index.
            DROP INDEX devices_credential;
            CREATE INDEX devices_credential_key ON devices (credential_hash, public_key);
            """),
        Migration(version: 4, sql: """
            -- A registration token's own limits (NULL: the server's defaults): its enrollment rate and burst, and
            -- the event streams its devices may hold open at once. A durable attendee link must not be an amplifier.
            ALTER TABLE credentials ADD COLUMN enroll_rate INTEGER CHECK (enroll_rate IS NULL OR enroll_rate >= 1);
            ALTER TABLE credentials ADD COLUMN enroll_burst INTEGER CHECK (enroll_burst IS NULL OR enroll_burst >= 1);
            ALTER TABLE credentials ADD COLUMN max_streams INTEGER CHECK (max_streams IS NULL OR max_streams >= 0);
            -- The devices each credential enrolled in the last minute, for the listings.
            CREATE INDEX devices_enrolled ON devices (enrolled_at);
            """),
        Migration(version: 5, sql: """
            -- The audit log (AuditStorage): every staff and admin action, appended in the action's own transaction.
            -- Append-only: AUTOINCREMENT never reuses an id, and the triggers refuse any UPDATE or DELETE.
            CREATE TABLE audit (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                at INTEGER NOT NULL,
                actor_kind TEXT NOT NULL CHECK (actor_kind IN ('staff', 'cli')),
                actor_id TEXT NOT NULL,
                role TEXT,
                action TEXT NOT NULL,
                target TEXT,
                detail TEXT,
                client_address TEXT,
                result TEXT NOT NULL CHECK (result IN ('ok', 'error') OR result LIKE 'refused:_%')
            );
            CREATE INDEX audit_at ON audit (at);
            CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
            CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
            """),
        Migration(version: 6, sql: """
            -- Staff roles (issue 18): what a staff token may do, and the one session a moderator or presenter token
            -- is scoped to (NULL: every session). Staff tokens minted before roles existed were administrators, and stay so.
            -- The rules between kind, role and session (a presenter has a session, an admin none) are the code's
            -- (StaffRole.refusal): SQLite cannot add a table CHECK to an existing table.
            ALTER TABLE credentials ADD COLUMN staff_role TEXT CHECK (staff_role IS NULL OR staff_role IN ('admin', 'moderator', 'presenter'));
            ALTER TABLE credentials ADD COLUMN staff_session TEXT;
            UPDATE credentials SET staff_role = 'admin' WHERE kind = 'staff-token';
            """),
        Migration(version: 7, sql: """
            -- The P-256 keys that sign sync answers (Pulse-Signature, issue 21), with their schedule: a key signs
            -- from signs_from until signs_until (NULL: until a rotation) and is published until signs_until plus
            -- the answer TTL. PKCS#8 PEM, as answer-key.pem (adopted as the first key) and the key tables next to it.
            -- serial grows with every key: the key set's generation (the seq of GET /api/sync/answer-keys).
            CREATE TABLE answer_keys (
                kid TEXT PRIMARY KEY,
                private_key BLOB NOT NULL,
                signs_from INTEGER NOT NULL,
                signs_until INTEGER,
                serial INTEGER NOT NULL UNIQUE,
                added_at INTEGER NOT NULL,
                CHECK (signs_until IS NULL OR signs_until >= signs_from)
            );
            -- Every import that changes a series moves its generation: with its sessions' change sequences, the
            -- seq of a signed series manifest, never lower for a later answer.
            ALTER TABLE series ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
            """),
        Migration(version: 8, sql: """
            -- The newest sample of each device in each session, kept by a trigger as samples arrive: the console's
            -- live view reads a room of 10,000 from an index (the newest few and the count) instead of grouping
            -- every sample on each view, and the devices page finds each device's last sample the same way.
            CREATE TABLE diag_latest (
                session_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                sample_id INTEGER NOT NULL,
                received_at INTEGER NOT NULL,
                PRIMARY KEY (session_id, device_id)
            ) WITHOUT ROWID;
            CREATE INDEX diag_latest_recent ON diag_latest (session_id, received_at, device_id);
            CREATE INDEX diag_latest_device ON diag_latest (device_id, sample_id);
            INSERT INTO diag_latest (session_id, device_id, sample_id, received_at)
                SELECT s.session_id, s.device_id, s.id, s.received_at FROM diag_samples s
                WHERE s.id IN (SELECT max(id) FROM diag_samples GROUP BY session_id, device_id);
            CREATE TRIGGER diag_latest_keep AFTER INSERT ON diag_samples BEGIN
                INSERT INTO diag_latest (session_id, device_id, sample_id, received_at)
                VALUES (NEW.session_id, NEW.device_id, NEW.id, NEW.received_at)
                ON CONFLICT (session_id, device_id) DO UPDATE SET sample_id = excluded.sample_id, received_at = excluded.received_at
                WHERE excluded.sample_id > diag_latest.sample_id;
            END;
            """),
        Migration(version: 9, sql: """
            -- The longest answer TTL each answer key signs with, kept with the key so that every server and
            -- `admin answer-key rotate` read one value: serve raises it to its --answer-ttl before it signs, a
            -- rotated key inherits it, and a key is published until signs_until + ttl, then removed. A key that
            -- signed before this column existed was signed with a TTL nobody recorded: the longest serve accepts.
            ALTER TABLE answer_keys ADD COLUMN ttl INTEGER NOT NULL DEFAULT 86400 CHECK (ttl >= 0);
            """),
        Migration(version: 10, sql: """
            -- How many devices each credential enrolled in each 10-second bucket (its start, Unix seconds), written
            -- in the enroll's own transaction and pruned there to the last 10 minutes: the listings' "enrolled in
            -- the last minute" adds up at most 7 rows per credential instead of grouping the devices of the whole
            -- enrollment wave (Scripts/bench/console). Filled from the devices enrolled in the last 10 minutes.
            CREATE TABLE enrollment_buckets (
                listing_id TEXT NOT NULL,
                bucket INTEGER NOT NULL,
                devices INTEGER NOT NULL CHECK (devices >= 1),
                PRIMARY KEY (listing_id, bucket)
            ) WITHOUT ROWID;
            INSERT INTO enrollment_buckets (listing_id, bucket, devices)
                SELECT c.listing_id, d.enrolled_at / 10 * 10, count(*) FROM devices d JOIN credentials c ON c.hash = d.credential_hash
                WHERE d.enrolled_at >= CAST(strftime('%s', 'now') AS INTEGER) - 600
                GROUP BY c.listing_id, d.enrolled_at / 10 * 10;
            """),
    ]
}
