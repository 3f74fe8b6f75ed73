import PostgresNIO

/// Versioned migrations of the PostgreSQL store, tracked in `shelfd_schema`. Append new steps; never edit a
/// shipped one. The tables follow SQLite's (Schema.swift) column for column, in PostgreSQL's types: times are
/// `timestamptz`, ids `bigint` identities.
enum PostgresSchema {
    static let migrations: [String] = [
        // 1: the queue (photos, sightings, path problems, batches, jobs, saved answers), the providers' health, their
        //    request log and budgets, events, settings. The library and the review queue come with their store.
        """
        CREATE TABLE photo (
            sha256 text PRIMARY KEY,
            size bigint NOT NULL,
            relative_path text NOT NULL,
            first_seen timestamptz NOT NULL
        );
        CREATE TABLE sighting (
            path text PRIMARY KEY,
            sha256 text NOT NULL REFERENCES photo(sha256),
            relative_path text NOT NULL,
            size bigint NOT NULL,
            mtime double precision NOT NULL,
            seen_at timestamptz NOT NULL,
            sync_conflict boolean NOT NULL DEFAULT false
        );
        CREATE INDEX sighting_photo ON sighting(sha256);
        CREATE TABLE path_problem (
            path text PRIMARY KEY,
            code text NOT NULL,
            message text NOT NULL,
            size bigint, mtime double precision,
            at timestamptz NOT NULL
        );
        CREATE TABLE batch (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            owner text NOT NULL,
            claimed_at timestamptz NOT NULL,
            finished_at timestamptz
        );
        CREATE TABLE job (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            sha256 text NOT NULL REFERENCES photo(sha256),
            provider text NOT NULL,
            provider_choice text,
            state text NOT NULL CHECK (state IN ('pending','leased','done','review','failed_retryable','dead')),
            attempts integer NOT NULL DEFAULT 0,
            not_before timestamptz,
            lease_owner text,
            lease_expiry timestamptz,
            batch_id bigint REFERENCES batch(id),
            error_code text,
            error_message text,
            result_path text,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            finished_at timestamptz,
            awaiting text,
            recheck_of bigint REFERENCES job(id),
            stage text,
            stage_at timestamptz,
            queued_at timestamptz
        );
        CREATE INDEX job_state ON job(state, not_before);
        CREATE UNIQUE INDEX job_open_per_photo ON job(sha256) WHERE state IN ('pending','leased','failed_retryable');
        CREATE INDEX job_awaiting ON job(awaiting) WHERE awaiting IS NOT NULL;
        CREATE INDEX job_finished ON job(finished_at) WHERE finished_at IS NOT NULL;
        CREATE INDEX job_result ON job(result_path) WHERE result_path IS NOT NULL;
        CREATE TABLE response (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            job_id bigint NOT NULL REFERENCES job(id),
            sha256 text NOT NULL,
            provider text NOT NULL,
            model text NOT NULL,
            file text NOT NULL,
            bytes bigint NOT NULL,
            latency_ms integer,
            received_at timestamptz NOT NULL,
            usable boolean NOT NULL DEFAULT true
        );
        CREATE INDEX response_job ON response(job_id, provider, model);
        CREATE TABLE provider_state (
            name text PRIMARY KEY,
            state text NOT NULL,
            until timestamptz,
            code text,
            message text,
            since timestamptz,
            probes integer NOT NULL DEFAULT 0,
            updated_at timestamptz NOT NULL
        );
        CREATE TABLE request (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            provider text NOT NULL,
            at timestamptz NOT NULL,
            latency_ms integer NOT NULL,
            outcome text NOT NULL
        );
        CREATE INDEX request_provider ON request(provider, at);
        -- One row per provider, locked while a turn is taken (RateBuckets.swift's rule); NULLs before the first turn.
        CREATE TABLE request_budget (
            provider text PRIMARY KEY,
            next_start timestamptz,
            day_ends timestamptz,
            day_count integer NOT NULL DEFAULT 0,
            day_full_until timestamptz
        );
        CREATE TABLE event (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            at timestamptz NOT NULL,
            kind text NOT NULL,
            sha256 text,
            job_id bigint,
            message text
        );
        CREATE TABLE setting (
            key text PRIMARY KEY,
            value text NOT NULL
        );
        """,
    ]

    /// The version this shelfd knows: a database at a higher one was migrated by a newer shelfd.
    static var latest: Int { migrations.count }

    /// Any number fixed for shelfd: the advisory lock that lets one process at a time migrate.
    static let lockKey: Int64 = 0x7368_656C_6664    // "shelfd"

    /// Brings the schema up to date under a session advisory lock: a second process starting at the same time waits
    /// for the first, then finds nothing left to do. Each step is its own transaction. Refuses a database whose
    /// version is newer than this binary's, before touching anything.
    static func migrate(_ session: Session) throws {
        // Waiting for another process's migrations may take longer than a statement's usual deadline.
        try session.query("SELECT pg_advisory_lock(\(lockKey))", timeout: 600)
        do {
            try session.script("""
                CREATE TABLE IF NOT EXISTS shelfd_schema (
                    id integer PRIMARY KEY CHECK (id = 1),
                    version integer NOT NULL,
                    migrated_at timestamptz NOT NULL DEFAULT now()
                )
                """)
            try session.script("INSERT INTO shelfd_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING")
            let current = try version(session)
            guard current <= latest else {
                throw PostgresStoreError(.schemaTooNew, """
                    the database is at schema version \(current), newer than this shelfd knows (\(latest)): \
                    a newer shelfd has used it. Upgrade shelfd on this machine; do not point an older one at it
                    """)
            }
            for step in current..<latest {
                try session.script("BEGIN")
                do {
                    // Several statements in one message: as a PL/pgSQL block (PostgresNIO has no simple query protocol).
                    try session.script("DO $migration$ BEGIN\n\(migrations[step])\nEND $migration$")
                    try session.query("UPDATE shelfd_schema SET version = \(step + 1), migrated_at = now() WHERE id = 1")
                    try session.script("COMMIT")
                } catch {
                    try? session.script("ROLLBACK")
                    throw error
                }
            }
        } catch {
            _ = try? session.query("SELECT pg_advisory_unlock(\(lockKey))")
            throw error
        }
        try session.query("SELECT pg_advisory_unlock(\(lockKey))")
    }

    static func version(_ session: Session) throws -> Int {
        guard let row = try session.query("SELECT version FROM shelfd_schema WHERE id = 1").first else { return 0 }
        return try row.decode(Int.self)
    }
}
