-- The durable read set (SPEC §16): a record memtx.read returned counts as read by its memtx
-- transaction even when the SQL transaction or savepoint that read it rolls back, so
-- transcribing it into a wider record is still permission_laundering.
\i test/sql/include/prelude.psql
CREATE ROLE regress_memtx_rd;
GRANT regress_memtx_rd TO CURRENT_USER;
SET ROLE regress_memtx_rd;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'secret', 'pin', '"4711"') AS secret \gset
SELECT state FROM memtx.commit(:tx);

-- 1. read inside a savepoint that rolls back, then transcribe into a public record
SELECT memtx.begin() AS t1 \gset
BEGIN;
SAVEPOINT s;
SELECT value FROM memtx.read(:t1, 'secret', 'pin');
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT count(*) AS read_set_rows FROM memtx.read_set WHERE tx_id = :t1;
SELECT memtx.stage(:t1, 'leak', 'pin', '"4711"', scope => 'public') > 0 AS staged;
SELECT state, reason FROM memtx.commit(:t1);
SELECT count(*) AS read_set_rows FROM memtx.read_set WHERE tx_id = :t1;

-- 2. read in a whole SQL transaction that rolls back
SELECT memtx.begin() AS t2 \gset
BEGIN;
SELECT value FROM memtx.read(:t2, 'secret', 'pin');
ROLLBACK;
SELECT memtx.stage(:t2, 'leak2', 'pin', '"4711"', scope => 'public') > 0 AS staged;
SELECT state, reason FROM memtx.commit(:t2);

-- 3. the read is in a PL/pgSQL block whose exception handler rolls it back
SELECT memtx.begin() AS t3 \gset
SET regress.t3 = :t3;
DO $$
DECLARE v jsonb;
BEGIN
  BEGIN
    SELECT value INTO v FROM memtx.read(current_setting('regress.t3')::bigint, 'secret', 'pin');
    RAISE EXCEPTION 'rolled back after reading %', v;
  EXCEPTION WHEN raise_exception THEN NULL;
  END;
END $$;
SELECT memtx.stage(:t3, 'leak3', 'pin', '"4711"', scope => 'public') > 0 AS staged;
SELECT state, reason FROM memtx.commit(:t3);

-- 4. a read that committed stays counted once; a private transcription still passes
SELECT memtx.begin() AS t4 \gset
SELECT count(*) FROM memtx.read(:t4, 'secret', 'pin');
BEGIN;
SAVEPOINT s;
SELECT count(*) FROM memtx.read(:t4, 'secret', 'pin');
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT memtx.stage(:t4, 'copy', 'pin', '"4711"') > 0 AS staged;
SELECT state, reason FROM memtx.commit(:t4);
SELECT count(*) AS read_set_rows FROM memtx.read_set WHERE tx_id = :t4;

-- 5. a memtx transaction begun and read in a SQL transaction that rolls back never existed:
--    nothing of it is kept, and its id is not reused
BEGIN;
SELECT memtx.begin() AS t5 \gset
SELECT count(*) FROM memtx.read(:t5, 'secret', 'pin');
ROLLBACK;
SELECT count(*) AS transactions FROM memtx.transactions WHERE id = :t5;

-- 6. an aborted transaction's lost reads are dropped with it
SELECT memtx.begin() AS t6 \gset
BEGIN;
SELECT count(*) FROM memtx.read(:t6, 'secret', 'pin');
ROLLBACK;
SELECT count(*) AS rows FROM memtx.abort(:t6);
SELECT count(*) AS read_set_rows FROM memtx.read_set WHERE tx_id = :t6;

-- 7. a transaction that read cannot be prepared
BEGIN;
SELECT memtx.begin() AS t7 \gset
SELECT count(*) FROM memtx.read(:t7, 'secret', 'pin');
PREPARE TRANSACTION 'memtx_read';
RESET ROLE;

SELECT * FROM memtx.check_invariants();
RESET ROLE;
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_rd;
