-- The read set's limits (SPEC §17 "No tenant can starve another"): each (transaction,
-- record) pair is kept once however often it is read, in whatever form (a read_set row, a
-- lost read in the shared buffer, an entry of the session); a transaction holds at most
-- memtx.max_read_set distinct records (54000); memtx.read_set_usage() shows the buffer.
-- (The per-session share of the buffer and restarts: test/t/015_read_set.pl.)
\i test/sql/include/prelude.psql
CREATE ROLE regress_rsl_a;
CREATE ROLE regress_rsl_owner;
SELECT memtx.begin(agent => 'regress_rsl_owner') AS tx \gset
SELECT count(*) FROM memtx.stage_many(:tx, (SELECT jsonb_agg(jsonb_build_object(
    'entity', 'b:' || i, 'attribute', 'a', 'value', i, 'scope', 'public')) FROM generate_series(1, 10) i));
SELECT count(*) FROM memtx.commit(:tx);
SELECT memtx.begin(agent => 'regress_rsl_owner') AS tx \gset
SELECT memtx.stage(:tx, 'secret', 'pin', '"4711"', readers => ARRAY['regress_rsl_a']) AS secret \gset
SELECT count(*) FROM memtx.commit(:tx);
-- (the store's lost reads and this session's use: other sessions may come and go meanwhile)
CREATE FUNCTION pg_temp.usage() RETURNS TABLE (lost bigint, session_used int)
LANGUAGE sql AS $$ SELECT store_lost_reads, session_used FROM memtx.read_set_usage() $$;
SELECT * FROM pg_temp.usage() \gset before_

-- 1. the cap: 5 distinct records; re-reading what the read set holds is free
SET memtx.max_read_set = 5;
SELECT memtx.begin(agent => 'regress_rsl_a') AS t1 \gset
SELECT sum((SELECT count(*) FROM memtx.read(:t1, 'b:' || i))) AS read FROM generate_series(1, 5) i;
SELECT count(*) AS again FROM memtx.read(:t1, 'b:1');
SELECT pg_temp.try(format('SELECT memtx.read(%s, %L)', :t1, 'b:6'));
-- a read that returns more than the cap allows fails whole: nothing of it is kept
SELECT memtx.begin(agent => 'regress_rsl_a') AS t2 \gset
SELECT pg_temp.try(format('SELECT memtx.read(%s)', :t2));
SELECT count(*) AS read_set_rows FROM memtx.read_set WHERE tx_id IN (:t1, :t2) GROUP BY tx_id ORDER BY tx_id;
-- a READ ONLY read holds its records in the buffer, and they count toward the cap
SELECT memtx.begin(agent => 'regress_rsl_a') AS t3 \gset
BEGIN READ ONLY;
SELECT sum((SELECT count(*) FROM memtx.read(:t3, 'b:' || i))) AS read FROM generate_series(1, 4) i;
SELECT session_used - :before_session_used AS held_in_read_only FROM pg_temp.usage();
COMMIT;
SELECT lost - :before_lost AS lost_after_read_only FROM pg_temp.usage();
SELECT count(*) AS read FROM memtx.read(:t3, 'b:5');
SELECT pg_temp.try(format('SELECT memtx.read(%s, %L)', :t3, 'b:6'));
RESET memtx.max_read_set;
-- the transaction's end drops its lost reads
SELECT count(*) FROM memtx.abort(:t3);
SELECT lost - :before_lost AS lost_after_abort FROM pg_temp.usage();

-- 2. re-reading one record in rolled-back subtransactions keeps it once
SELECT memtx.begin(agent => 'regress_rsl_a') AS t4 \gset
SET regress.t4 = :t4;
DO $$
DECLARE v jsonb;
BEGIN
  FOR i IN 1..2000 LOOP
    BEGIN
      SELECT value INTO v FROM memtx.read(current_setting('regress.t4')::bigint, 'secret', 'pin');
      RAISE EXCEPTION 'rolled back';
    EXCEPTION WHEN raise_exception THEN NULL;
    END;
  END LOOP;
END $$;
SELECT lost - :before_lost AS lost, session_used - :before_session_used AS session_used FROM pg_temp.usage();
-- still a read: transcribing it launders
SELECT memtx.stage(:t4, 'leak', 'pin', '"4711"', scope => 'public') > 0 AS staged;
SELECT state, reason FROM memtx.commit(:t4);
SELECT lost - :before_lost AS lost_after_commit FROM pg_temp.usage();

-- 3. a read that commits makes a lost read of the same record durable: the buffer lets it go
SELECT memtx.begin(agent => 'regress_rsl_a') AS t5 \gset
BEGIN;
SELECT count(*) FROM memtx.read(:t5, 'secret', 'pin');
ROLLBACK;
SELECT lost - :before_lost AS lost_after_rollback FROM pg_temp.usage();
SELECT count(*) FROM memtx.read(:t5, 'secret', 'pin');
SELECT lost - :before_lost AS lost_after_a_committed_read,
       (SELECT count(*) FROM memtx.read_set WHERE tx_id = :t5) AS read_set_rows FROM pg_temp.usage();
-- and it is still a read
SELECT memtx.stage(:t5, 'leak', 'pin', '"4711"', scope => 'public') > 0 AS staged;
SELECT state, reason FROM memtx.commit(:t5);

-- 4. the reads of a transaction that is no longer open are not kept
SELECT memtx.begin(agent => 'regress_rsl_a') AS t6 \gset
SELECT count(*) FROM memtx.commit(:t6);
BEGIN;
SELECT count(*) FROM memtx.read(:t6, 'secret', 'pin');
ROLLBACK;
SELECT lost - :before_lost AS lost, session_used - :before_session_used AS session_used FROM pg_temp.usage();

-- 5. a memtx transaction begun in a SQL transaction that rolls back never existed: the
-- reads an inner savepoint lost go with it (else each such turn would keep them for good)
BEGIN;
SELECT memtx.begin(agent => 'regress_rsl_a') AS t7 \gset
SAVEPOINT s;
SELECT count(*) FROM memtx.read(:t7, 'secret', 'pin');
ROLLBACK TO SAVEPOINT s;
SELECT lost - :before_lost AS lost_inside FROM pg_temp.usage();
ROLLBACK;
SELECT lost - :before_lost AS lost_after, session_used - :before_session_used AS session_used FROM pg_temp.usage();

-- 6. the buffer is a harness's to inspect; the cap is a superuser's to set
SET ROLE regress_rsl_a;
SELECT pg_temp.try('SELECT memtx.read_set_usage()');
SELECT pg_temp.try('SET memtx.max_read_set = 1000000');
RESET ROLE;

DROP EXTENSION memtx CASCADE;
DROP ROLE regress_rsl_a;
DROP ROLE regress_rsl_owner;
