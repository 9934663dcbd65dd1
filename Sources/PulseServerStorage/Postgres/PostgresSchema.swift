import PulsePostgres

/// The PostgreSQL schema, one migration per version. Append new versions; never edit a released one.
///
/// The same tables and CHECK constraints as `SQLiteSchema` (integers are `bigint`, blobs `bytea`,
/// `allow_download` a boolean), less the `generation` row: instances learn of each other's changes
/// from `NOTIFY pulse_changes`, sent by triggers in the transaction that makes the change (delivered
/// at its COMMIT, never for a rollback). Replay keys and samples have no trigger: they are written on
/// every signed POST and no cache holds them.
enum PostgresSchema {
    /// The `LISTEN` channel of change notifications.
    static let channel = "pulse_changes"
    /// `pg_advisory_xact_lock` key taken by migrations (and by `migrate`): "pulsesrv" in ASCII.
    static let migrationLock: Int64 = 0x70756C73_65737276
    /// `pg_advisory_xact_lock` key taken by imports: one import at a time, across all instances.
    static let importLock: Int64 = 0x70756C73_65696D70
    /// `pg_advisory_xact_lock` key taken while the device certificate keys are prepared: one key, however
    /// many instances start together on an empty database.
    static let certificateKeyLock: Int64 = 0x70756C73_63657274
    /// `pg_advisory_xact_lock` key taken by every audit append, held to its commit: audit ids are handed out
    /// in commit order, so a reader paging with `after=<id>` never skips a row that commits late. "pulsaudt".
    static let auditLock: Int64 = 0x70756C73_61756474
    /// `pg_advisory_xact_lock` key taken while the answer-signing keys are prepared or rotated. "pulsansk".
    static let answerKeyLock: Int64 = 0x70756C73_616E736B

    static let migrations = [
        PostgresMigration(version: 1, sql: """
            CREATE TABLE credentials (
                hash bytea PRIMARY KEY,
                listing_id text NOT NULL,
                kind text NOT NULL CHECK (kind IN ('device-code', 'registration-token', 'staff-token')),
                scope_kind text CHECK (scope_kind IN ('session', 'series')),
                scope_id text,
                max_devices bigint CHECK (max_devices IS NULL OR max_devices >= 1),
                devices_enrolled bigint NOT NULL DEFAULT 0,
                created_at bigint NOT NULL,
                expires_at bigint,
                used_at bigint,
                revoked_at bigint,
                CHECK ((kind = 'staff-token') = (scope_kind IS NULL)),
                CHECK ((scope_kind IS NULL) = (scope_id IS NULL)),
                CHECK (kind <> 'device-code' OR devices_enrolled <= 1),
                CHECK (max_devices IS NULL OR devices_enrolled <= max_devices)
            );
            CREATE INDEX credentials_listing ON credentials (listing_id);

            CREATE TABLE devices (
                id text PRIMARY KEY,
                public_key bytea NOT NULL,
                platform text NOT NULL,
                name text NOT NULL,
                scope_kind text NOT NULL CHECK (scope_kind IN ('session', 'series')),
                scope_id text NOT NULL,
                credential_hash bytea NOT NULL REFERENCES credentials (hash),
                enrolled_at bigint NOT NULL,
                revoked_at bigint
            );
            CREATE INDEX devices_credential ON devices (credential_hash);

            CREATE TABLE sessions (
                id text PRIMARY KEY,
                state text NOT NULL DEFAULT 'draft' CHECK (state IN ('draft', 'scheduled', 'rehearsal', 'live', 'ended')),
                max_shown bigint CHECK (max_shown >= 0),
                rehearsal_max_shown bigint CHECK (rehearsal_max_shown >= 0),
                allow_download boolean NOT NULL DEFAULT false,
                package_id text NOT NULL,
                series_id text,
                package_version text NOT NULL,
                deck_version bigint NOT NULL,
                slide_count bigint NOT NULL CHECK (slide_count >= 0),
                manifest bytea NOT NULL,
                gated bytea NOT NULL,
                change_sequence bigint NOT NULL DEFAULT 0,
                updated_at bigint NOT NULL
            );

            CREATE TABLE venue_networks (
                session_id text NOT NULL REFERENCES sessions (id),
                network text NOT NULL,
                PRIMARY KEY (session_id, network)
            );

            CREATE TABLE key_tables (
                session_id text NOT NULL REFERENCES sessions (id),
                deck_version bigint NOT NULL,
                package_id text NOT NULL,
                digest bytea NOT NULL,
                slides bytea NOT NULL,
                imported_at bigint NOT NULL,
                PRIMARY KEY (session_id, deck_version)
            );

            CREATE TABLE series (
                id text PRIMARY KEY,
                package_id text NOT NULL,
                package_version text NOT NULL,
                manifest bytea NOT NULL,
                updated_at bigint NOT NULL
            );

            CREATE TABLE series_sessions (
                series_id text NOT NULL REFERENCES series (id),
                position bigint NOT NULL,
                session_id text NOT NULL,
                PRIMARY KEY (series_id, session_id)
            );

            CREATE TABLE session_changes (
                session_id text NOT NULL REFERENCES sessions (id),
                sequence bigint NOT NULL,
                at bigint NOT NULL,
                kind text NOT NULL CHECK (kind IN ('advance', 'rehearsal-advance', 'state', 'settings', 'content')),
                max_shown bigint,
                deck_version bigint,
                state text,
                package_version text,
                PRIMARY KEY (session_id, sequence)
            );

            CREATE TABLE replay_keys (
                key bytea PRIMARY KEY,
                expires_at bigint NOT NULL
            );
            CREATE INDEX replay_keys_expiry ON replay_keys (expires_at);

            CREATE TABLE diag_samples (
                id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                session_id text NOT NULL REFERENCES sessions (id),
                device_id text NOT NULL REFERENCES devices (id),
                received_at bigint NOT NULL,
                build text NOT NULL,
                platform text NOT NULL,
                connection text NOT NULL
            );
            CREATE INDEX diag_samples_session ON diag_samples (session_id, received_at);
            CREATE INDEX diag_samples_device ON diag_samples (session_id, device_id, id);

            -- Token buckets of the rate limits, shared by every instance: a device that spreads its requests
            -- over all of them meets one limit. UNLOGGED: no WAL; a crash empties it, which refills every
            -- bucket, as a restart of a single box does.
            CREATE UNLOGGED TABLE rate_buckets (
                key text PRIMARY KEY,
                tokens double precision NOT NULL,
                updated_at double precision NOT NULL,
                last_allowed boolean NOT NULL
            );
            CREATE INDEX rate_buckets_updated ON rate_buckets (updated_at);

            -- Change notifications: one NOTIFY per (transaction, payload), delivered at COMMIT. The payload
            -- is '<table>:<operation>' (devices:INSERT, sessions:UPDATE, …), or for a new entry in a
            -- session's change log 'session_changes:<kind>:<session id>' (session_changes:advance:keynote).
            CREATE FUNCTION pulse_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('pulse_changes', TG_TABLE_NAME || ':' || TG_OP);
                RETURN NULL;
            END $$;
            -- An enroll only counts a device on its credential ('credentials:ENROLL'): no cached credential
            -- (staff tokens) went stale. Anything else that changes on a credential is 'credentials:UPDATE'.
            CREATE FUNCTION pulse_notify_credential_update() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('pulse_changes', CASE
                    WHEN (OLD.hash, OLD.listing_id, OLD.kind, OLD.scope_kind, OLD.scope_id, OLD.max_devices, OLD.created_at,
                          OLD.expires_at, OLD.revoked_at)
                        IS NOT DISTINCT FROM (NEW.hash, NEW.listing_id, NEW.kind, NEW.scope_kind, NEW.scope_id, NEW.max_devices,
                          NEW.created_at, NEW.expires_at, NEW.revoked_at)
                    THEN 'credentials:ENROLL' ELSE 'credentials:UPDATE' END);
                RETURN NULL;
            END $$;
            CREATE FUNCTION pulse_notify_session_change() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('pulse_changes', 'session_changes:' || NEW.kind || ':' || NEW.session_id);
                RETURN NULL;
            END $$;
            CREATE TRIGGER credentials_inserted AFTER INSERT OR DELETE ON credentials FOR EACH ROW EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER credentials_updated AFTER UPDATE ON credentials FOR EACH ROW
                WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION pulse_notify_credential_update();
            CREATE TRIGGER devices_inserted AFTER INSERT OR DELETE ON devices FOR EACH ROW EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER devices_updated AFTER UPDATE ON devices FOR EACH ROW
                WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER sessions_inserted AFTER INSERT OR DELETE ON sessions FOR EACH ROW EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER sessions_updated AFTER UPDATE ON sessions FOR EACH ROW
                WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER venue_networks_changed AFTER INSERT OR UPDATE OR DELETE ON venue_networks FOR EACH ROW EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER key_tables_changed AFTER INSERT OR UPDATE OR DELETE ON key_tables FOR EACH ROW EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER series_changed AFTER INSERT OR UPDATE OR DELETE ON series FOR EACH ROW EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER series_sessions_changed AFTER INSERT OR UPDATE OR DELETE ON series_sessions FOR EACH ROW EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER session_changes_inserted AFTER INSERT ON session_changes FOR EACH ROW EXECUTE FUNCTION pulse_notify_session_change();
            CREATE TRIGGER credentials_truncated AFTER TRUNCATE ON credentials FOR EACH STATEMENT EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER devices_truncated AFTER TRUNCATE ON devices FOR EACH STATEMENT EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER sessions_truncated AFTER TRUNCATE ON sessions FOR EACH STATEMENT EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER venue_networks_truncated AFTER TRUNCATE ON venue_networks FOR EACH STATEMENT EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER key_tables_truncated AFTER TRUNCATE ON key_tables FOR EACH STATEMENT EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER series_truncated AFTER TRUNCATE ON series FOR EACH STATEMENT EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER series_sessions_truncated AFTER TRUNCATE ON series_sessions FOR EACH STATEMENT EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER session_changes_truncated AFTER TRUNCATE ON session_changes FOR EACH STATEMENT EXECUTE FUNCTION pulse_notify_change();
            """),
        PostgresMigration(version: 2, sql: """
            -- An enrollment whose answer was lost (an instance killed after COMMIT, a proxy's retry, the app's
            -- own retry) is asked again with the same credential and public key: it gets the device it made
            -- instead of a spent code's 404 (or a second device on a registration token). Found by this index.
            DROP INDEX devices_credential;
            CREATE INDEX devices_credential_key ON devices (credential_hash, public_key);

            -- Enrolls in one round trip, race-free across instances. The credential's row lock comes first:
            -- enrolls with one credential queue on it, and at READ COMMITTED each statement after it sees every
            -- enrollment committed before (a single statement would not: its snapshot predates the wait). Then a
            -- retry (same credential and key, device and credential still valid) returns the device it made;
            -- otherwise the conditional UPDATE consumes the credential or matches nothing, and the device is
            -- inserted only from the row it returned. A taken device id fails the call: nothing is consumed.
            CREATE FUNCTION pulse_enroll(p_now bigint, p_hash bytea, p_id text, p_key bytea, p_platform text, p_name text)
            RETURNS TABLE (device_id text, device_platform text, device_name text, device_scope_kind text, device_scope_id text,
                           device_listing_id text, device_enrolled_at bigint)
            LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM 1 FROM credentials c WHERE c.hash = p_hash FOR UPDATE;
                RETURN QUERY
                    SELECT d.id, d.platform, d.name, d.scope_kind, d.scope_id, c.listing_id, d.enrolled_at
                    FROM devices d JOIN credentials c ON c.hash = d.credential_hash
                    WHERE d.credential_hash = p_hash AND d.public_key = p_key AND d.revoked_at IS NULL
                        AND c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > p_now)
                    ORDER BY d.enrolled_at, d.id LIMIT 1;
                IF FOUND THEN RETURN; END IF;
                RETURN QUERY
                    WITH consumed AS (
                        UPDATE credentials c SET devices_enrolled = c.devices_enrolled + 1,
                            used_at = CASE WHEN c.kind = 'device-code' THEN p_now ELSE c.used_at END
                        WHERE c.hash = p_hash AND c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > p_now)
                            AND ((c.kind = 'device-code' AND c.devices_enrolled = 0)
                              OR (c.kind = 'registration-token' AND (c.max_devices IS NULL OR c.devices_enrolled < c.max_devices)))
                        RETURNING c.scope_kind, c.scope_id, c.listing_id, c.hash
                    ), enrolled AS (
                        INSERT INTO devices (id, public_key, platform, name, scope_kind, scope_id, credential_hash, enrolled_at)
                        SELECT p_id, p_key, p_platform, p_name, consumed.scope_kind, consumed.scope_id, consumed.hash, p_now FROM consumed
                        RETURNING devices.id
                    )
                    SELECT p_id, p_platform, p_name, consumed.scope_kind, consumed.scope_id, consumed.listing_id, p_now
                    FROM consumed, enrolled;
            END $$;

            -- The P-256 keys that sign device certificates, shared by every instance (PKCS#8 PEM, as the data
            -- folder's device-cert-key.pem; as protected as the key tables next to it). The oldest signs; every
            -- one is published, so a certificate any of them signed verifies.
            CREATE TABLE certificate_keys (
                kid text PRIMARY KEY,
                private_key bytea NOT NULL,
                added_at bigint NOT NULL
            );
            CREATE TRIGGER certificate_keys_changed AFTER INSERT OR UPDATE OR DELETE ON certificate_keys FOR EACH ROW EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER certificate_keys_truncated AFTER TRUNCATE ON certificate_keys FOR EACH STATEMENT EXECUTE FUNCTION pulse_notify_change();
            """),
        PostgresMigration(version: 3, sql: """
            -- A registration token's own limits (NULL: the server's defaults): its enrollment rate and burst, and
            -- the event streams its devices may hold open at once. A durable attendee link must not be an amplifier.
            ALTER TABLE credentials
                ADD COLUMN enroll_rate bigint CHECK (enroll_rate IS NULL OR enroll_rate >= 1),
                ADD COLUMN enroll_burst bigint CHECK (enroll_burst IS NULL OR enroll_burst >= 1),
                ADD COLUMN max_streams bigint CHECK (max_streams IS NULL OR max_streams >= 0);
            -- The devices each credential enrolled in the last minute, for the listings.
            CREATE INDEX devices_enrolled ON devices (enrolled_at);
            -- A change of the limits is a change of the credential (cached), not an enroll's count.
            CREATE OR REPLACE FUNCTION pulse_notify_credential_update() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('pulse_changes', CASE
                    WHEN (OLD.hash, OLD.listing_id, OLD.kind, OLD.scope_kind, OLD.scope_id, OLD.max_devices, OLD.created_at,
                          OLD.expires_at, OLD.revoked_at, OLD.enroll_rate, OLD.enroll_burst, OLD.max_streams)
                        IS NOT DISTINCT FROM (NEW.hash, NEW.listing_id, NEW.kind, NEW.scope_kind, NEW.scope_id, NEW.max_devices,
                          NEW.created_at, NEW.expires_at, NEW.revoked_at, NEW.enroll_rate, NEW.enroll_burst, NEW.max_streams)
                    THEN 'credentials:ENROLL' ELSE 'credentials:UPDATE' END);
                RETURN NULL;
            END $$;
            """),
        PostgresMigration(version: 4, sql: """
            -- The audit log (AuditStorage): every staff and admin action, appended in the action's own transaction,
            -- under the audit lock (PostgresStorage.appendAudit), so ids grow in commit order across instances.
            -- Append-only: the trigger refuses any UPDATE or DELETE (only migrate --replace empties it, with TRUNCATE).
            -- No change notification: no cache holds it.
            CREATE TABLE audit (
                id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                at bigint NOT NULL,
                actor_kind text NOT NULL CHECK (actor_kind IN ('staff', 'cli')),
                actor_id text NOT NULL,
                role text,
                action text NOT NULL,
                target text,
                detail text,
                client_address text,
                result text NOT NULL CHECK (result IN ('ok', 'error') OR result LIKE 'refused:_%')
            );
            CREATE INDEX audit_at ON audit (at);
            CREATE FUNCTION pulse_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'the audit log is append-only';
            END $$;
            CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit FOR EACH ROW EXECUTE FUNCTION pulse_audit_append_only();
            """),
        PostgresMigration(version: 5, sql: """
            -- Staff roles (issue 18): what a staff token may do, and the one session a moderator or presenter token
            -- is scoped to (NULL: every session). Staff tokens minted before roles existed were administrators, and stay so.
            -- Set once at minting: the credential update trigger need not compare them.
            ALTER TABLE credentials
                ADD COLUMN staff_role text CHECK (staff_role IS NULL OR staff_role IN ('admin', 'moderator', 'presenter')),
                ADD COLUMN staff_session text;
            UPDATE credentials SET staff_role = 'admin' WHERE kind = 'staff-token';
            ALTER TABLE credentials
                ADD CONSTRAINT credentials_staff_role CHECK ((kind = 'staff-token') = (staff_role IS NOT NULL)),
                ADD CONSTRAINT credentials_staff_session CHECK (
                    (staff_role = 'presenter' AND staff_session IS NOT NULL) OR (staff_role = 'admin' AND staff_session IS NULL)
                    OR staff_role = 'moderator' OR (staff_role IS NULL AND staff_session IS NULL));
            """),
        PostgresMigration(version: 6, sql: """
            -- The P-256 keys that sign sync answers (Pulse-Signature, issue 21), shared by every instance, with
            -- their schedule: a key signs from signs_from until signs_until (NULL: until a rotation) and is
            -- published until signs_until plus the answer TTL. serial grows with every key: the key set's generation.
            -- A change notifies like certificate_keys (every instance reads the set again).
            CREATE TABLE answer_keys (
                kid text PRIMARY KEY,
                private_key bytea NOT NULL,
                signs_from bigint NOT NULL,
                signs_until bigint,
                serial bigint NOT NULL UNIQUE,
                added_at bigint NOT NULL,
                CHECK (signs_until IS NULL OR signs_until >= signs_from)
            );
            CREATE TRIGGER answer_keys_changed AFTER INSERT OR UPDATE OR DELETE ON answer_keys FOR EACH ROW EXECUTE FUNCTION pulse_notify_change();
            CREATE TRIGGER answer_keys_truncated AFTER TRUNCATE ON answer_keys FOR EACH STATEMENT EXECUTE FUNCTION pulse_notify_change();
            -- Every import that changes a series moves its generation: with its sessions' change sequences, the
            -- seq of a signed series manifest, never lower for a later answer.
            ALTER TABLE series ADD COLUMN generation bigint NOT NULL DEFAULT 0;
            """),
        PostgresMigration(version: 7, sql: """
            -- The newest sample of each device in each session, kept by a trigger as samples arrive (also as
            -- `pulse-server migrate` copies them in): the console's live view reads a room of 10,000 from an index
            -- instead of grouping every sample on each view, and the devices page finds each device's last sample.
            CREATE TABLE diag_latest (
                session_id text NOT NULL,
                device_id text NOT NULL,
                sample_id bigint NOT NULL,
                received_at bigint NOT NULL,
                PRIMARY KEY (session_id, device_id)
            );
            CREATE INDEX diag_latest_recent ON diag_latest (session_id, received_at, device_id COLLATE "C");
            CREATE INDEX diag_latest_device ON diag_latest (device_id, sample_id);
            INSERT INTO diag_latest (session_id, device_id, sample_id, received_at)
                SELECT DISTINCT ON (session_id, device_id) session_id, device_id, id, received_at FROM diag_samples
                ORDER BY session_id, device_id, id DESC;
            CREATE FUNCTION pulse_diag_latest() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO diag_latest (session_id, device_id, sample_id, received_at)
                VALUES (NEW.session_id, NEW.device_id, NEW.id, NEW.received_at)
                ON CONFLICT (session_id, device_id) DO UPDATE SET sample_id = EXCLUDED.sample_id, received_at = EXCLUDED.received_at
                WHERE EXCLUDED.sample_id > diag_latest.sample_id;
                RETURN NULL;
            END $$;
            CREATE TRIGGER diag_latest_keep AFTER INSERT ON diag_samples FOR EACH ROW EXECUTE FUNCTION pulse_diag_latest();
            """),
        PostgresMigration(version: 8, sql: """
            -- The longest answer TTL each answer key signs with, kept with the key so that every instance and
            -- `admin answer-key rotate` read one value: each instance raises it to its --answer-ttl before it signs,
            -- a rotated key inherits it, and a key is published until signs_until + ttl, then removed. A key that
            -- signed before this column existed was signed with a TTL nobody recorded: the longest serve accepts.
            ALTER TABLE answer_keys ADD COLUMN ttl bigint NOT NULL DEFAULT 86400 CHECK (ttl >= 0);
            """),
        PostgresMigration(version: 9, sql: """
            -- How many devices each credential enrolled in each 10-second bucket (its start, Unix seconds), written
            -- by pulse_enroll in the enroll's own statement and pruned there to the last 10 minutes: the listings'
            -- "enrolled in the last minute" adds up at most 7 rows per credential instead of grouping the devices of
            -- the whole enrollment wave (Scripts/bench/console). Filled from the devices enrolled in the last 10
            -- minutes; no change notification (no cache holds it); `migrate` does not move it (a count of minutes).
            CREATE TABLE enrollment_buckets (
                listing_id text NOT NULL,
                bucket bigint NOT NULL,
                devices bigint NOT NULL CHECK (devices >= 1),
                PRIMARY KEY (listing_id, bucket)
            );
            INSERT INTO enrollment_buckets (listing_id, bucket, devices)
                SELECT c.listing_id, d.enrolled_at / 10 * 10, count(*) FROM devices d JOIN credentials c ON c.hash = d.credential_hash
                WHERE d.enrolled_at >= extract(epoch FROM now())::bigint - 600
                GROUP BY c.listing_id, d.enrolled_at / 10 * 10;
            -- Version 2's pulse_enroll, with the bucket's count in the same statement as the device (a taken device
            -- id fails the whole call: nothing is counted) and the prune after it.
            CREATE OR REPLACE FUNCTION pulse_enroll(p_now bigint, p_hash bytea, p_id text, p_key bytea, p_platform text, p_name text)
            RETURNS TABLE (device_id text, device_platform text, device_name text, device_scope_kind text, device_scope_id text,
                           device_listing_id text, device_enrolled_at bigint)
            LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM 1 FROM credentials c WHERE c.hash = p_hash FOR UPDATE;
                RETURN QUERY
                    SELECT d.id, d.platform, d.name, d.scope_kind, d.scope_id, c.listing_id, d.enrolled_at
                    FROM devices d JOIN credentials c ON c.hash = d.credential_hash
                    WHERE d.credential_hash = p_hash AND d.public_key = p_key AND d.revoked_at IS NULL
                        AND c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > p_now)
                    ORDER BY d.enrolled_at, d.id LIMIT 1;
                IF FOUND THEN RETURN; END IF;
                RETURN QUERY
                    WITH consumed AS (
                        UPDATE credentials c SET devices_enrolled = c.devices_enrolled + 1,
                            used_at = CASE WHEN c.kind = 'device-code' THEN p_now ELSE c.used_at END
                        WHERE c.hash = p_hash AND c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > p_now)
                            AND ((c.kind = 'device-code' AND c.devices_enrolled = 0)
                              OR (c.kind = 'registration-token' AND (c.max_devices IS NULL OR c.devices_enrolled < c.max_devices)))
                        RETURNING c.scope_kind, c.scope_id, c.listing_id, c.hash
                    ), enrolled AS (
                        INSERT INTO devices (id, public_key, platform, name, scope_kind, scope_id, credential_hash, enrolled_at)
                        SELECT p_id, p_key, p_platform, p_name, consumed.scope_kind, consumed.scope_id, consumed.hash, p_now FROM consumed
                        RETURNING devices.id
                    ), counted AS (
                        INSERT INTO enrollment_buckets (listing_id, bucket, devices)
                        SELECT consumed.listing_id, p_now / 10 * 10, 1 FROM consumed, enrolled
                        ON CONFLICT (listing_id, bucket) DO UPDATE SET devices = enrollment_buckets.devices + 1
                        RETURNING enrollment_buckets.listing_id
                    )
                    SELECT p_id, p_platform, p_name, consumed.scope_kind, consumed.scope_id, consumed.listing_id, p_now
                    FROM consumed, enrolled;
                IF FOUND THEN
                    DELETE FROM enrollment_buckets WHERE bucket < p_now / 10 * 10 - 600;
                END IF;
            END $$;
            """),
    ]

    /// Every table, parents before children (the order `migrate` fills them in).
    static let tables = [
        "credentials", "devices", "sessions", "venue_networks", "key_tables", "series", "series_sessions", "session_changes",
        "replay_keys", "diag_samples", "diag_latest", "rate_buckets", "certificate_keys", "audit", "answer_keys", "enrollment_buckets",
    ]
}
