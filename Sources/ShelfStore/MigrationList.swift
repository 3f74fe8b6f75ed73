extension Migration {
    /// Every migration of the schema, in the order they apply (Migrations.swift says how). Append new ones; never edit or
    /// rename a shipped one: databases know it by its name.
    package static let all: [Migration] = [
        // Photos, sightings, jobs, batches, responses, library, provider state, events.
        Migration(
            "photos-jobs-library",
            sqlite: """
                CREATE TABLE photo (
                    sha256 TEXT PRIMARY KEY,
                    size INTEGER NOT NULL,
                    relative_path TEXT NOT NULL,          -- where it was first seen, under incoming/
                    first_seen REAL NOT NULL
                );
                CREATE TABLE sighting (                   -- every path a photo has been seen at
                    path TEXT PRIMARY KEY,
                    sha256 TEXT NOT NULL REFERENCES photo(sha256),
                    relative_path TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    mtime REAL NOT NULL,
                    seen_at REAL NOT NULL,
                    sync_conflict INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX sighting_photo ON sighting(sha256);
                CREATE TABLE path_problem (               -- a file that could not even be read to hash it
                    path TEXT PRIMARY KEY,
                    code TEXT NOT NULL,
                    message TEXT NOT NULL,
                    size INTEGER, mtime REAL,
                    at REAL NOT NULL
                );
                CREATE TABLE batch (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    owner TEXT NOT NULL,
                    claimed_at REAL NOT NULL,
                    finished_at REAL
                );
                CREATE TABLE job (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    sha256 TEXT NOT NULL REFERENCES photo(sha256),
                    provider TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending','leased','done','review','failed_retryable','dead')),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    not_before REAL,
                    lease_owner TEXT,
                    lease_expiry REAL,
                    batch_id INTEGER REFERENCES batch(id),
                    error_code TEXT,
                    error_message TEXT,
                    result_path TEXT,
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    finished_at REAL
                );
                CREATE INDEX job_state ON job(state, not_before);
                CREATE UNIQUE INDEX job_open_per_photo ON job(sha256) WHERE state IN ('pending','leased','failed_retryable');
                CREATE TABLE response (                   -- raw provider answers, saved before they are acted on
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    job_id INTEGER NOT NULL REFERENCES job(id),
                    sha256 TEXT NOT NULL,
                    provider TEXT NOT NULL,
                    model TEXT NOT NULL,
                    file TEXT NOT NULL,
                    bytes INTEGER NOT NULL,
                    latency_ms INTEGER,
                    received_at REAL NOT NULL,
                    usable INTEGER NOT NULL DEFAULT 1
                );
                CREATE INDEX response_job ON response(job_id, provider, model);
                CREATE TABLE book (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    title_key TEXT NOT NULL,
                    title TEXT NOT NULL,
                    author TEXT,
                    isbn13 TEXT,
                    isbn10 TEXT,
                    confidence REAL NOT NULL,
                    status TEXT NOT NULL,
                    source TEXT NOT NULL,
                    first_seen REAL NOT NULL,
                    updated_at REAL NOT NULL
                );
                CREATE UNIQUE INDEX book_isbn ON book(isbn13) WHERE isbn13 IS NOT NULL;
                CREATE INDEX book_title ON book(title_key);
                CREATE TABLE book_sighting (
                    book_id INTEGER NOT NULL REFERENCES book(id),
                    sha256 TEXT NOT NULL,
                    box TEXT,
                    confidence REAL NOT NULL,
                    shelf TEXT,
                    seen_at REAL NOT NULL,
                    PRIMARY KEY (book_id, sha256)
                );
                CREATE TABLE provider_state (
                    name TEXT PRIMARY KEY,
                    state TEXT NOT NULL,                  -- ok | backoff | paused
                    until REAL,
                    code TEXT,
                    message TEXT,
                    updated_at REAL NOT NULL
                );
                CREATE TABLE request (                    -- one row per provider request, for latency figures
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    provider TEXT NOT NULL,
                    at REAL NOT NULL,
                    latency_ms INTEGER NOT NULL,
                    outcome TEXT NOT NULL
                );
                CREATE TABLE event (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    at REAL NOT NULL,
                    kind TEXT NOT NULL,
                    sha256 TEXT,
                    job_id INTEGER,
                    message TEXT
                );
                CREATE TABLE setting (                    -- small facts that outlive a process (the last provider used)
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                CREATE TABLE daemon (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    pid INTEGER NOT NULL,
                    owner TEXT NOT NULL,
                    since REAL NOT NULL,
                    watch_mode TEXT,
                    heartbeat REAL NOT NULL
                );
                """),
        // A job may name its provider (`scan --provider`, `rescan --provider`); NULL means the configured one.
        Migration(
            "job-provider",
            sqlite: """
                ALTER TABLE job ADD COLUMN provider_choice TEXT;
                """),
        // The local catalogue: one entry per edition (ISBN-less rows are deduped on folded title + surname), the files
        // imported, OpenLibrary author names, and a full-text index on the folded forms.
        Migration(
            "local-catalogue",
            sqlite: """
                CREATE TABLE catalogue_import (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    path TEXT NOT NULL,
                    format TEXT NOT NULL,
                    started_at REAL NOT NULL,
                    finished_at REAL,
                    imported INTEGER NOT NULL DEFAULT 0,
                    duplicates INTEGER NOT NULL DEFAULT 0,
                    skipped INTEGER NOT NULL DEFAULT 0
                );
                CREATE TABLE catalogue_entry (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    title TEXT NOT NULL,
                    author TEXT,
                    isbn13 TEXT,
                    isbn10 TEXT,
                    year INTEGER,
                    tag TEXT,                             -- a call number printed on the spine (`796.41 Lib`)
                    series TEXT,
                    origin_key TEXT,                      -- the row's key in its file (an OpenLibrary /books/ or /works/ key)
                    work_key TEXT NOT NULL,               -- folded title | surname
                    title_folded TEXT NOT NULL,
                    author_folded TEXT NOT NULL,
                    tag_folded TEXT NOT NULL,
                    series_folded TEXT NOT NULL,
                    import_id INTEGER REFERENCES catalogue_import(id)
                );
                CREATE UNIQUE INDEX catalogue_entry_isbn ON catalogue_entry(isbn13) WHERE isbn13 IS NOT NULL;
                CREATE INDEX catalogue_entry_work ON catalogue_entry(work_key);
                CREATE TABLE catalogue_author (           -- OpenLibrary author keys, so editions and works get names
                    key TEXT PRIMARY KEY,
                    name TEXT NOT NULL
                );
                CREATE VIRTUAL TABLE catalogue_fts USING fts5(
                    title_folded, author_folded, tag_folded, series_folded,
                    content = 'catalogue_entry', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
                );
                CREATE VIRTUAL TABLE catalogue_vocabulary USING fts5vocab(catalogue_fts, 'row');
                CREATE TRIGGER catalogue_entry_added AFTER INSERT ON catalogue_entry BEGIN
                    INSERT INTO catalogue_fts (rowid, title_folded, author_folded, tag_folded, series_folded)
                    VALUES (new.id, new.title_folded, new.author_folded, new.tag_folded, new.series_folded);
                END;
                CREATE TRIGGER catalogue_entry_removed AFTER DELETE ON catalogue_entry BEGIN
                    INSERT INTO catalogue_fts (catalogue_fts, rowid, title_folded, author_folded, tag_folded, series_folded)
                    VALUES ('delete', old.id, old.title_folded, old.author_folded, old.tag_folded, old.series_folded);
                END;
                CREATE TRIGGER catalogue_entry_changed AFTER UPDATE ON catalogue_entry BEGIN
                    INSERT INTO catalogue_fts (catalogue_fts, rowid, title_folded, author_folded, tag_folded, series_folded)
                    VALUES ('delete', old.id, old.title_folded, old.author_folded, old.tag_folded, old.series_folded);
                    INSERT INTO catalogue_fts (rowid, title_folded, author_folded, tag_folded, series_folded)
                    VALUES (new.id, new.title_folded, new.author_folded, new.tag_folded, new.series_folded);
                END;
                """),
        // Remote book lookups (OpenLibrary, Google Books), found or not, so re-runs do not ask again.
        Migration(
            "book-lookups",
            sqlite: """
                CREATE TABLE lookup_cache (
                    source TEXT NOT NULL,                 -- openlibrary | googlebooks
                    request TEXT NOT NULL,                -- the normalised question: "isbn:978…", "title:…|author:…", "text:…"
                    records TEXT NOT NULL,                -- JSON array of CatalogueRecord; [] when nothing was found
                    requested INTEGER NOT NULL,           -- how many records were asked for: a full answer may hold more
                    fetched_at REAL NOT NULL,
                    PRIMARY KEY (source, request)
                );
                """),
        // The library per work. A book is its work (the matched record, else normalised title + surname); each sighting
        // keeps what that photo showed (title, ISBN as an edition, review state), so a rescan or a decision replaces
        // one reading and the book is recomputed from the rest. A decision history per work; the review queue; people's
        // decisions, remembered per photo and reading.
        Migration(
            "library-per-work",
            sqlite: """
                ALTER TABLE book ADD COLUMN work_key TEXT;
                ALTER TABLE book ADD COLUMN match_source TEXT;
                ALTER TABLE book ADD COLUMN match_key TEXT;
                ALTER TABLE book ADD COLUMN match_score REAL;
                ALTER TABLE book ADD COLUMN match_year INTEGER;
                UPDATE book SET work_key = title_key
                    || CASE WHEN id = (SELECT MIN(b.id) FROM book b WHERE b.title_key = book.title_key) THEN '' ELSE '#' || id END;
                CREATE UNIQUE INDEX book_work ON book(work_key);

                ALTER TABLE book_sighting ADD COLUMN status TEXT NOT NULL DEFAULT 'needs_review';
                ALTER TABLE book_sighting ADD COLUMN title TEXT;
                ALTER TABLE book_sighting ADD COLUMN author TEXT;
                ALTER TABLE book_sighting ADD COLUMN title_key TEXT;
                ALTER TABLE book_sighting ADD COLUMN isbn13 TEXT;
                ALTER TABLE book_sighting ADD COLUMN isbn10 TEXT;
                ALTER TABLE book_sighting ADD COLUMN isbn_source TEXT;     -- who gave the ISBN: a provider, a source, `user`
                ALTER TABLE book_sighting ADD COLUMN decided INTEGER NOT NULL DEFAULT 0;   -- a person decided this reading
                UPDATE book_sighting SET (status, title, author, title_key, isbn13, isbn10, isbn_source) =
                    (SELECT b.status, b.title, b.author, b.title_key, b.isbn13, b.isbn10, CASE WHEN b.isbn13 IS NULL THEN NULL ELSE b.source END
                     FROM book b WHERE b.id = book_sighting.book_id);
                CREATE INDEX book_sighting_photo ON book_sighting(sha256);
                CREATE INDEX book_sighting_title ON book_sighting(title_key);

                DROP INDEX book_isbn;
                DROP INDEX book_title;
                ALTER TABLE book DROP COLUMN isbn13;
                ALTER TABLE book DROP COLUMN isbn10;
                ALTER TABLE book DROP COLUMN title_key;

                CREATE TABLE book_history (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    book_id INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
                    action TEXT NOT NULL,                 -- detected | matched | needs_review | reviewed_by_user
                    agent TEXT NOT NULL,                  -- a provider, a source, or `user`
                    at REAL NOT NULL,
                    detail TEXT
                );
                CREATE INDEX book_history_book ON book_history(book_id);
                INSERT INTO book_history (book_id, action, agent, at) SELECT id, 'detected', source, first_seen FROM book;

                CREATE TABLE review_item (                -- a book a person is asked about: one per photo and reading
                    id TEXT PRIMARY KEY,                  -- ReviewDocument.id(photoSHA256:reading:)
                    sha256 TEXT NOT NULL,
                    book_id INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
                    reading TEXT NOT NULL,                -- the book as read, JSON: box, candidates, reasons
                    created_at REAL NOT NULL
                );
                CREATE INDEX review_item_photo ON review_item(sha256);
                CREATE INDEX review_item_book ON review_item(book_id);

                CREATE TABLE review_decision (            -- applied again whenever the same photo gives the same reading
                    sha256 TEXT NOT NULL,
                    reading_key TEXT NOT NULL,            -- the reading's normalised title + surname
                    action TEXT NOT NULL CHECK (action IN ('accepted','edited','rejected')),
                    book TEXT,                            -- the book as decided, JSON; NULL when rejected
                    isbn_source TEXT,
                    detail TEXT NOT NULL,
                    decided_at REAL NOT NULL,
                    PRIMARY KEY (sha256, reading_key)
                );
                """),
        // A work is found by any of its readings (ARCHITECTURE.md, "One entry per work"): a shared ISBN or the same
        // matched record, so each sighting keeps the record its reading was matched to. Readings committed before are
        // known by their work's key (book.work_key), which was the one record any of them could have then.
        Migration(
            "work-readings",
            sqlite: """
                ALTER TABLE book_sighting ADD COLUMN match_key TEXT;         -- `<source>:<key>` of the reading's match; NULL unmatched
                CREATE INDEX book_sighting_isbn ON book_sighting(isbn13) WHERE isbn13 IS NOT NULL;
                CREATE INDEX book_sighting_match ON book_sighting(match_key) WHERE match_key IS NOT NULL;
                INSERT OR IGNORE INTO setting (key, value) VALUES ('merge_by_isbn', 'pending');   -- Store.mergeWorksSharingAnISBN
                """),
        // Outages ridden out with probes; hybrid photos whose fast reading waits for the accurate provider.
        Migration(
            "outages-and-rechecks",
            sqlite: """
                ALTER TABLE provider_state ADD COLUMN since REAL;          -- when an outage began
                ALTER TABLE provider_state ADD COLUMN probes INTEGER NOT NULL DEFAULT 0;   -- failed probes since
                ALTER TABLE job ADD COLUMN awaiting TEXT;                  -- hybrid: the accurate provider not asked yet
                ALTER TABLE job ADD COLUMN recheck_of INTEGER REFERENCES job(id);   -- the job whose fast reading this one asks again
                CREATE INDEX job_awaiting ON job(awaiting) WHERE awaiting IS NOT NULL;
                """),
        // Each provider's request budget, shared by every shelfd process that asks it (RateBuckets.swift).
        Migration(
            "request-budgets",
            sqlite: """
                CREATE TABLE request_budget (
                    provider TEXT PRIMARY KEY,
                    next_start REAL NOT NULL,             -- the earliest start of the next request (60 s ÷ requests_per_minute apart)
                    day_ends REAL NOT NULL,               -- when the provider's day ends and day_count starts again
                    day_count INTEGER NOT NULL,           -- requests sent this provider day
                    day_full_until REAL                   -- set when requests_per_day was reached: the provider pauses until then
                );
                """),
        // Where each photo is on its way (the web page's overview): the stage of a leased job, when it got there, and
        // when a job was last put in the queue (a `retry` puts an old job back in the current pass).
        Migration(
            "job-stages",
            sqlite: """
                ALTER TABLE job ADD COLUMN stage TEXT;                     -- preparing | asking | matching | writing (while leased)
                ALTER TABLE job ADD COLUMN stage_at REAL;
                ALTER TABLE job ADD COLUMN queued_at REAL;                 -- NULL: created_at
                CREATE INDEX job_finished ON job(finished_at) WHERE finished_at IS NOT NULL;
                CREATE INDEX job_queued ON job(COALESCE(queued_at, created_at));
                """),
        // The web page's sessions and one-time login codes, kept hashed: a copy of the database logs nobody in.
        Migration(
            "web-sessions",
            sqlite: """
                CREATE TABLE web_session (
                    id_hash TEXT PRIMARY KEY,             -- SHA-256 of the cookie's value
                    csrf TEXT NOT NULL,                   -- the token every state-changing request of the session carries
                    logged_in INTEGER NOT NULL,           -- 1: by the token or a login link (valid beyond loopback); 0: loopback only
                    expires_at REAL NOT NULL
                );
                CREATE TABLE web_login_code (
                    code_hash TEXT PRIMARY KEY,           -- SHA-256 of the code in the link `shelfd web --print-login-url` printed
                    expires_at REAL NOT NULL
                );
                """),
        // The library page reads a hundred works at a time in these orders, at 10,000 works and more.
        Migration(
            "library-page-orders",
            sqlite: """
                CREATE INDEX book_first_seen ON book(first_seen, id);
                CREATE INDEX book_title_order ON book(title COLLATE NOCASE, id);
                """),
        // Gemini Batch API jobs (`[gemini] mode = "batch"`): a row is written, with its photos, before the job is
        // submitted; `name` is the provider's `batches/{id}` once it answered. A photo in a batch is not claimable.
        Migration(
            "gemini-batches",
            sqlite: """
                CREATE TABLE provider_batch (
                    id INTEGER PRIMARY KEY,
                    provider TEXT NOT NULL,
                    display_name TEXT NOT NULL UNIQUE,    -- how the job is found again when its name was never saved
                    name TEXT,                            -- batches/{id}; NULL until the submission answered
                    state TEXT NOT NULL,                  -- submitting | pending | running | succeeded | failed | cancelled | expired | unsent
                    photos INTEGER NOT NULL,
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    finished_at REAL                      -- NULL while in flight
                );
                ALTER TABLE job ADD COLUMN provider_batch_id INTEGER REFERENCES provider_batch(id);
                CREATE INDEX job_provider_batch ON job(provider_batch_id) WHERE provider_batch_id IS NOT NULL;
                """),
        // Every `shelfd watch` on this database, with its heartbeat: one on a machine of its own, several when workers
        // share a PostgreSQL database. A photo's provider-ready image, stored by the worker that found it for workers
        // that cannot see the folder it arrived in (PostgreSQL only: on one machine every worker sees the file).
        Migration(
            "workers-and-photo-images",
            sqlite: """
                CREATE TABLE worker (
                    owner TEXT PRIMARY KEY,               -- ProcessIdentity: boot id, pid and start time
                    host TEXT NOT NULL,
                    pid INTEGER NOT NULL,
                    version TEXT NOT NULL,
                    since REAL NOT NULL,
                    watch_mode TEXT,
                    writes_files INTEGER NOT NULL,        -- 1: keeps results, library.json, review/ and exports current
                    heartbeat REAL NOT NULL
                );
                DROP TABLE daemon;
                CREATE TABLE photo_image (
                    sha256 TEXT PRIMARY KEY REFERENCES photo(sha256),
                    jpeg BLOB NOT NULL,                   -- upright, scaled for the provider, as sent
                    stored_at REAL NOT NULL
                );
                """),
        .postgresTables,
        .jobDueNotifications,
        // A saved answer kept in the database too, on a store other machines share: a worker that takes over a photo
        // replays it instead of paying for it again (one machine keeps only the file in responses/).
        Migration(
            "response-body",
            typed: """
                ALTER TABLE response ADD COLUMN body BLOB;
                """),
        // A shared store's finished results, for the node that keeps the files for people (`[store] writes_files`): it
        // writes each one once to its results/, then sets `written_at` and the job's `result_path`. One machine writes
        // its results at once and keeps none here.
        Migration(
            "result-documents",
            typed: """
                CREATE TABLE result_document (
                    job_id INTEGER PRIMARY KEY REFERENCES job(id),
                    sha256 TEXT NOT NULL,
                    relative_path TEXT NOT NULL,          -- the photo's path under incoming/ as ingested: the result's name
                    document BLOB NOT NULL,               -- the ResultDocument's JSON, as results/ holds it
                    finished_at REAL NOT NULL,
                    written_at REAL                       -- NULL until a node writing files wrote it
                );
                CREATE INDEX result_document_unwritten ON result_document(job_id) WHERE written_at IS NULL;
                """,
            // And `files_change`, a counter every change of the library or the review queue bumps (a statement
            // trigger), which the node that writes the files polls to know when library.json, review/ and exports/
            // must follow.
            postgresOnly: """
                CREATE TABLE files_change (
                    id integer PRIMARY KEY CHECK (id = 1),
                    counter bigint NOT NULL
                );
                INSERT INTO files_change (id, counter) VALUES (1, 0);
                CREATE FUNCTION shelfd_files_changed() RETURNS trigger LANGUAGE plpgsql AS $body$
                BEGIN
                    UPDATE files_change SET counter = files_change.counter + 1 WHERE id = 1;
                    RETURN NULL;
                END
                $body$;
                CREATE TRIGGER book_files_change AFTER INSERT OR UPDATE OR DELETE ON book
                    FOR EACH STATEMENT EXECUTE FUNCTION shelfd_files_changed();
                CREATE TRIGGER book_sighting_files_change AFTER INSERT OR UPDATE OR DELETE ON book_sighting
                    FOR EACH STATEMENT EXECUTE FUNCTION shelfd_files_changed();
                CREATE TRIGGER book_history_files_change AFTER INSERT OR UPDATE OR DELETE ON book_history
                    FOR EACH STATEMENT EXECUTE FUNCTION shelfd_files_changed();
                CREATE TRIGGER review_item_files_change AFTER INSERT OR UPDATE OR DELETE ON review_item
                    FOR EACH STATEMENT EXECUTE FUNCTION shelfd_files_changed();
                """),
        // A shared store's results are written where the photo arrived: `result_node` names the node that ingested the
        // photo first, when that node writes files; NULL leaves them to the nodes with `writes_files = true`, one of
        // which takes each (`taken_by`). One machine writes its results at once and sets neither. Every node reads its
        // newest results from here (status, /api/v1/results).
        Migration(
            "result-node",
            typed: """
                ALTER TABLE photo ADD COLUMN result_node TEXT;
                ALTER TABLE result_document ADD COLUMN taken_by TEXT;
                CREATE INDEX result_document_finished ON result_document(finished_at);
                """),
        .tally,
        // The review queue in its order (oldest first): the review page finds an item's place, its neighbours and the
        // first open item along this index, whatever the queue's length.
        Migration(
            "review-order",
            sql: """
                CREATE INDEX review_item_order ON review_item(created_at, id);
                """),
        .filesVersionPerTransaction,
        // A work's sightings in the order its entry is taken from (`LibraryRecords.refresh`: a person's decision first, then the
        // surest reading, then the oldest), with the status: a work seen in a hundred photos refreshes from the index's
        // first entries, not from every sighting.
        Migration(
            "sighting-rank",
            sql: """
                CREATE INDEX book_sighting_rank ON book_sighting(book_id, decided DESC, confidence DESC, seen_at, status);
                """),
        .reviewTally,
        // Found by profiling a year of photos with forty sightings a work: lookups that read a row for each of a work's
        // sightings, or each job in the 'review' state, read one index instead. A photo's jobs, newest last (a review
        // decision closes its photo's job; the photo page reads the latest). A reading's links (`LibraryRecords.linkedWorks`)
        // from the index entries alone. A history step already recorded (`LibraryRecords.recordHistory`) in one probe.
        Migration(
            "photo-jobs-and-links",
            sql: """
                CREATE INDEX job_photo ON job(sha256, id);
                DROP INDEX book_sighting_title;
                CREATE INDEX book_sighting_title ON book_sighting(title_key, match_key, book_id);
                DROP INDEX book_sighting_isbn;
                CREATE INDEX book_sighting_isbn ON book_sighting(isbn13, book_id) WHERE isbn13 IS NOT NULL;
                DROP INDEX book_sighting_match;
                CREATE INDEX book_sighting_match ON book_sighting(match_key, book_id) WHERE match_key IS NOT NULL;
                DROP INDEX book_history_book;
                """,
            sqliteThen: """
                CREATE INDEX book_history_step ON book_history(book_id, action, agent, detail);
                """,
            // The history's index leaves out the detail: `IS NOT DISTINCT FROM` cannot use a B-tree here, and a
            // step's detail may exceed a B-tree entry.
            postgresThen: """
                CREATE INDEX book_history_step ON book_history(book_id, action, agent);
                """),
        // A reading's title whatever its surname (`title:<title>|`, `DatabaseConnection.titlePart`), for the library as
        // evidence (`LibraryRecords.works(titled:besides:)`): equality on an expression, so any collation.
        Migration(
            "title-part",
            sqlite: """
                CREATE INDEX book_sighting_title_part ON book_sighting(substr(title_key, 1, instr(title_key, '|')));
                """,
            postgres: """
                CREATE INDEX book_sighting_title_part ON book_sighting((substr(title_key, 1, strpos(title_key, '|'))));
                """),
        // Shelves as places (ShelfRounds.swift). A round is the photos of one shelf that arrived within `[shelves]
        // round_minutes` of each other; when it closes it is compared with the shelf's inventory before it. A work is
        // on the shelf of its latest verified sighting (by the photo's arrival); `shelf_place` keeps the shelf's order
        // left to right as its last round saw it; `shelf_mark` what is known of a work not seen (missing, lent or
        // gone), void once a later photo sees it; `shelf_change` a round's changes.
        Migration(
            "shelf-rounds",
            typed: """
                CREATE TABLE shelf_round (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    shelf TEXT NOT NULL,
                    opened_at REAL NOT NULL,              -- the first photo's arrival
                    last_photo_at REAL NOT NULL,          -- the latest photo's arrival: quiet from then on
                    ends_at REAL,                         -- set by `shelf close` or a photo arriving after the quiet time
                    closed_at REAL,                       -- NULL until compared with the inventory
                    photos INTEGER NOT NULL DEFAULT 0,
                    books INTEGER,                        -- the inventory once closed
                    unread INTEGER NOT NULL DEFAULT 0     -- photos that could not be read: nothing is called missing
                );
                CREATE INDEX shelf_round_open ON shelf_round(shelf, id) WHERE closed_at IS NULL;
                CREATE INDEX shelf_round_shelf ON shelf_round(shelf, closed_at);
                ALTER TABLE photo ADD COLUMN round_id INTEGER REFERENCES shelf_round(id);
                CREATE INDEX photo_round ON photo(round_id) WHERE round_id IS NOT NULL;
                CREATE INDEX book_sighting_shelf ON book_sighting(shelf, book_id) WHERE shelf IS NOT NULL;
                CREATE TABLE shelf_place (
                    book_id INTEGER PRIMARY KEY REFERENCES book(id) ON DELETE CASCADE,
                    shelf TEXT NOT NULL,
                    position INTEGER NOT NULL
                );
                CREATE INDEX shelf_place_order ON shelf_place(shelf, position);
                CREATE TABLE shelf_mark (
                    book_id INTEGER PRIMARY KEY REFERENCES book(id) ON DELETE CASCADE,
                    shelf TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('missing', 'lent', 'gone')),
                    since REAL NOT NULL,                  -- missing: the round's first photo; otherwise the answer's time
                    name TEXT,                            -- lent: to whom
                    round_id INTEGER REFERENCES shelf_round(id)
                );
                CREATE INDEX shelf_mark_shelf ON shelf_mark(shelf, kind);
                CREATE TABLE shelf_change (
                    round_id INTEGER NOT NULL REFERENCES shelf_round(id),
                    book_id INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
                    kind TEXT NOT NULL CHECK (kind IN ('arrived', 'missing', 'moved_out')),
                    other_shelf TEXT,                     -- arrived: from (NULL: new to the library); moved_out: to
                    PRIMARY KEY (round_id, book_id)
                );
                CREATE INDEX shelf_change_book ON shelf_change(book_id);
                """,
            postgresOnly: """
                CREATE TRIGGER shelf_mark_files_change AFTER INSERT OR UPDATE OR DELETE ON shelf_mark
                    FOR EACH STATEMENT EXECUTE FUNCTION shelfd_files_changed();
                """),
        // Works added to Hardcover (HardcoverPushes.swift), one row per work and edition, so a restart or a re-read
        // adds nothing twice; `outcome` is `added`, `there` (the person had it already) or `unknown` (no Hardcover
        // edition has that ISBN). The works changed since a moment, in that order, for the background push.
        Migration(
            "hardcover-push",
            typed: """
                CREATE TABLE hardcover_push (
                    book_id INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
                    isbn13 TEXT NOT NULL,
                    outcome TEXT NOT NULL CHECK (outcome IN ('added', 'there', 'unknown')),
                    hardcover_book INTEGER,
                    edition INTEGER,
                    user_book INTEGER,
                    list TEXT,
                    at REAL NOT NULL,
                    PRIMARY KEY (book_id, isbn13)
                );
                CREATE INDEX book_updated ON book(updated_at, id);
                """),
        // How many times the process died reading a job (`Queue.recoverLeases`): such a job goes behind the
        // photos waiting, is held back after `Queue.crashesHeldBack`, and is dead after one more.
        // The claim takes open jobs in this order, from an index of the open ones only, so its cost is the queue's,
        // not the history's.
        Migration(
            "job-crashes",
            typed: """
                ALTER TABLE job ADD COLUMN crashes INTEGER NOT NULL DEFAULT 0;
                CREATE INDEX job_claim_order ON job(crashes, id) WHERE state IN ('pending','leased','failed_retryable');
                """),
        // One word for each thing: "gemini-batches" called Gemini's Batch API jobs batches, the word for a claim of up
        // to `batch_size` photos (`batch`). Its table, a job's column and their index are named after the Batch API
        // job; the rows and the jobs' references to them stay. PostgreSQL also named the table's constraints and its
        // ids' sequence after it, and keeps those names through the rename unless told.
        Migration(
            "batch-api-jobs",
            sql: """
                ALTER TABLE provider_batch RENAME TO batch_api_job;
                ALTER TABLE job RENAME COLUMN provider_batch_id TO batch_api_job_id;
                DROP INDEX job_provider_batch;
                CREATE INDEX job_batch_api_job ON job(batch_api_job_id) WHERE batch_api_job_id IS NOT NULL;
                """,
            postgresThen: """
                ALTER TABLE batch_api_job RENAME CONSTRAINT provider_batch_pkey TO batch_api_job_pkey;
                ALTER TABLE batch_api_job RENAME CONSTRAINT provider_batch_display_name_key
                    TO batch_api_job_display_name_key;
                ALTER TABLE job RENAME CONSTRAINT job_provider_batch_id_fkey TO job_batch_api_job_id_fkey;
                ALTER SEQUENCE provider_batch_id_seq RENAME TO batch_api_job_id_seq;
                """),
    ]
}
