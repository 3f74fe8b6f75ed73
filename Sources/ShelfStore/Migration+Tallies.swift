/// The counts status, /metrics and the pages read, kept by triggers. `Migration.all` lists them in their place.
extension Migration {
    /// What status, /metrics and the overview count, kept by triggers in the transaction of every change to a job,
    /// so reading them costs the same at any library size: jobs per state, and the current pass (the photos queued
    /// since the queue was last empty: `pass_total`, with its start in `at`, and `pass_finished`). Seeded from the
    /// jobs there are. The oldest pending job, and the first jobs of a state in claim order, are read from indexes.
    static let tally = Migration(
        "tally",
        sqlite: """
            CREATE TABLE tally (
                name TEXT PRIMARY KEY,                -- a job state, pass_total or pass_finished
                n INTEGER NOT NULL,
                at REAL                               -- pass_total: when the pass began
            );
            INSERT INTO tally (name, n) VALUES ('pending', 0), ('leased', 0), ('done', 0), ('review', 0),
                ('failed_retryable', 0), ('dead', 0), ('pass_total', 0), ('pass_finished', 0);
            UPDATE tally SET n = (SELECT COUNT(*) FROM job WHERE job.state = tally.name) WHERE name NOT LIKE 'pass%';
            UPDATE tally SET at = (SELECT MIN(COALESCE(queued_at, created_at)) FROM job
                                   WHERE state IN ('pending', 'leased', 'failed_retryable')) WHERE name = 'pass_total';
            UPDATE tally SET n = (SELECT COUNT(*) FROM job WHERE COALESCE(queued_at, created_at) >= (SELECT at FROM tally WHERE name = 'pass_total')
                                  AND (tally.name = 'pass_total' OR state IN ('done', 'review', 'dead')))
                WHERE name LIKE 'pass%';
            CREATE INDEX job_pending ON job(created_at) WHERE state = 'pending';
            CREATE INDEX job_state_order ON job(state, id);

            CREATE TRIGGER job_tally_added AFTER INSERT ON job BEGIN
                UPDATE tally SET n = 0, at = COALESCE(NEW.queued_at, NEW.created_at)
                    WHERE name IN ('pass_total', 'pass_finished') AND NEW.state IN ('pending', 'leased', 'failed_retryable')
                      AND (SELECT SUM(n) FROM tally WHERE name IN ('pending', 'leased', 'failed_retryable')) = 0;
                UPDATE tally SET n = n + 1
                    WHERE name = NEW.state OR (name = 'pass_total' AND NEW.state IN ('pending', 'leased', 'failed_retryable'));
            END;
            CREATE TRIGGER job_tally_removed AFTER DELETE ON job BEGIN
                UPDATE tally SET n = n - 1 WHERE name = OLD.state;
            END;
            CREATE TRIGGER job_tally_moved AFTER UPDATE OF state ON job WHEN OLD.state <> NEW.state BEGIN
                -- Back in an empty queue: a new pass.
                UPDATE tally SET n = 0, at = COALESCE(NEW.queued_at, NEW.created_at)
                    WHERE name IN ('pass_total', 'pass_finished') AND NEW.state IN ('pending', 'leased', 'failed_retryable')
                      AND OLD.state IN ('done', 'review', 'dead')
                      AND (SELECT SUM(n) FROM tally WHERE name IN ('pending', 'leased', 'failed_retryable')) = 0;
                -- Back in the queue, a photo this pass finished is unfinished again; any other joins the pass.
                UPDATE tally SET n = n + CASE
                        WHEN name = NEW.state THEN 1
                        WHEN name = OLD.state THEN -1
                        WHEN OLD.state IN ('done', 'review', 'dead') AND NEW.state IN ('pending', 'leased', 'failed_retryable') THEN
                            CASE WHEN COALESCE(OLD.finished_at >= (SELECT t.at FROM tally t WHERE t.name = 'pass_total'), 0) = 1
                                 THEN CASE name WHEN 'pass_finished' THEN -1 ELSE 0 END
                                 ELSE CASE name WHEN 'pass_total' THEN 1 ELSE 0 END END
                        WHEN OLD.state IN ('pending', 'leased', 'failed_retryable') AND NEW.state IN ('done', 'review', 'dead')
                             AND name = 'pass_finished' THEN 1
                        ELSE 0 END
                    WHERE name IN (NEW.state, OLD.state, 'pass_total', 'pass_finished');
            END;
            """,
        postgres: """
            CREATE TABLE tally (
                name text PRIMARY KEY,
                n bigint NOT NULL,
                at double precision
            );
            INSERT INTO tally (name, n) VALUES ('pending', 0), ('leased', 0), ('done', 0), ('review', 0),
                ('failed_retryable', 0), ('dead', 0), ('pass_total', 0), ('pass_finished', 0);
            UPDATE tally SET n = (SELECT COUNT(*) FROM job WHERE job.state = tally.name) WHERE name NOT LIKE 'pass%';
            UPDATE tally SET at = (SELECT MIN(COALESCE(queued_at, created_at)) FROM job
                                   WHERE state IN ('pending', 'leased', 'failed_retryable')) WHERE name = 'pass_total';
            UPDATE tally SET n = (SELECT COUNT(*) FROM job WHERE COALESCE(queued_at, created_at) >= (SELECT t.at FROM tally t WHERE t.name = 'pass_total')
                                  AND (tally.name = 'pass_total' OR state IN ('done', 'review', 'dead')))
                WHERE name LIKE 'pass%';
            CREATE INDEX job_pending ON job(created_at) WHERE state = 'pending';
            CREATE INDEX job_state_order ON job(state, id);
            CREATE FUNCTION shelfd_job_tally() RETURNS trigger LANGUAGE plpgsql AS $tally$
            DECLARE
                was text;
                now_in text;
                finished boolean := false;
                queued constant text[] := ARRAY['pending', 'leased', 'failed_retryable'];
            BEGIN
                IF TG_OP <> 'INSERT' THEN was := OLD.state; END IF;
                IF TG_OP <> 'DELETE' THEN now_in := NEW.state; END IF;
                IF was IS NOT DISTINCT FROM now_in THEN RETURN NULL; END IF;
                IF now_in = ANY (queued) AND (was IS NULL OR NOT was = ANY (queued)) THEN
                    -- Into an empty queue: a new pass.
                    IF (SELECT SUM(n) FROM tally WHERE name = ANY (queued)) = 0 THEN
                        UPDATE tally SET n = 0, at = COALESCE(NEW.queued_at, NEW.created_at) WHERE name IN ('pass_total', 'pass_finished');
                    END IF;
                    -- Back in the queue, a photo this pass finished is unfinished again; any other joins the pass.
                    IF was IS NOT NULL THEN
                        finished := OLD.finished_at >= (SELECT at FROM tally WHERE name = 'pass_total');
                    END IF;
                    UPDATE tally SET n = n + CASE WHEN name = 'pass_total' THEN 1 ELSE -1 END
                        WHERE name = CASE WHEN finished THEN 'pass_finished' ELSE 'pass_total' END;
                ELSIF was = ANY (queued) AND now_in IN ('done', 'review', 'dead') THEN
                    UPDATE tally SET n = n + 1 WHERE name = 'pass_finished';
                END IF;
                UPDATE tally SET n = n + CASE WHEN name = now_in THEN 1 ELSE -1 END WHERE name IN (was, now_in);
                RETURN NULL;
            END
            $tally$;
            CREATE TRIGGER job_tally AFTER INSERT OR UPDATE OF state OR DELETE ON job
                FOR EACH ROW EXECUTE FUNCTION shelfd_job_tally();
            """)

    /// The open review items, counted by triggers as the jobs are: the review page's "3 of 17" costs one row.
    static let reviewTally = Migration(
        "review-tally",
        sqlite: """
            INSERT INTO tally (name, n) SELECT 'review_items', COUNT(*) FROM review_item;
            CREATE TRIGGER review_item_tally_added AFTER INSERT ON review_item BEGIN
                UPDATE tally SET n = n + 1 WHERE name = 'review_items';
            END;
            CREATE TRIGGER review_item_tally_removed AFTER DELETE ON review_item BEGIN
                UPDATE tally SET n = n - 1 WHERE name = 'review_items';
            END;
            """,
        postgres: """
            INSERT INTO tally (name, n) SELECT 'review_items', COUNT(*) FROM review_item;
            CREATE FUNCTION shelfd_review_tally() RETURNS trigger LANGUAGE plpgsql AS $tally$
            BEGIN
                UPDATE tally SET n = n + CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END WHERE name = 'review_items';
                RETURN NULL;
            END
            $tally$;
            CREATE TRIGGER review_item_tally AFTER INSERT OR DELETE ON review_item
                FOR EACH ROW EXECUTE FUNCTION shelfd_review_tally();
            """)
}
