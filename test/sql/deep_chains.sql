-- Deep DAGs are linear (SPEC §17).  Chains of 400 records, each derived from the one before,
-- staged in one memtx transaction on a fresh store (where every plan is made on empty tables):
-- staged, committed, read at the two levels that judge ancestry, revoked at the root, erased,
-- aborted, checked.  Each call reads at most 100 rows and 100 pages per record of the chain
-- (and 500 more) of every memtx table with its indexes: rows are tuples read by sequential
-- scans and fetched through indexes, pages are buffer requests, both this backend's own in
-- the call's SQL transaction (pg_stat_get_xact_*), so nothing another process does counts.
-- A call lists every table it read more of; no rows listed is the pass.  The linear calls
-- read at most 46 per record; each of the walks this test was written for read 200 to 1,250
-- per record here (about n²/2 for a chain of n): one walk of descendants or ancestors per
-- record (the look for tool actions below a commit's staging, an abort's roots,
-- verified_read, I2 and G3), and probes that a plan made on the empty store turned into
-- scans of a whole index per record (the reference trigger's record lookup, the rivals
-- probe, the promotion of a committed record).
\i test/sql/include/prelude.psql
SET memtx.logical_now = '2030-06-01 00:00:00+00';
\set n 400
\set bound 100

CREATE FUNCTION pg_temp.stage_chain(tx bigint, n int, prefix text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE p bigint; root bigint;
BEGIN
    FOR i IN 1 .. n LOOP
        p := memtx.stage(tx, prefix || i, 'a', to_jsonb(i),
                         derived_from => CASE WHEN p IS NULL THEN '{}'::bigint[] ELSE ARRAY[p] END);
        root := coalesce(root, p);
    END LOOP;
    RETURN root;
END $$;

-- rows and pages read of each memtx table (with its indexes) by this backend in the current
-- SQL transaction: each call below runs in a transaction of its own, between start() and over()
CREATE TEMP TABLE reads_before (relname name PRIMARY KEY, nrows bigint, npages bigint);
CREATE FUNCTION pg_temp.reads() RETURNS TABLE (relname name, nrows bigint, npages bigint) LANGUAGE sql AS $$
    SELECT c.relname,
           pg_stat_get_xact_tuples_returned(c.oid) + pg_stat_get_xact_tuples_fetched(c.oid)
         + coalesce(sum(pg_stat_get_xact_tuples_fetched(i.indexrelid)), 0),
           pg_stat_get_xact_blocks_fetched(c.oid) + coalesce(sum(pg_stat_get_xact_blocks_fetched(i.indexrelid)), 0)
      FROM pg_class c LEFT JOIN pg_index i ON i.indrelid = c.oid
     WHERE c.relnamespace = 'memtx'::regnamespace AND c.relkind = 'r'
     GROUP BY c.oid, c.relname $$;
CREATE FUNCTION pg_temp.start() RETURNS void LANGUAGE sql AS $$
    DELETE FROM reads_before;
    INSERT INTO reads_before SELECT * FROM pg_temp.reads() $$;
-- the tables the call since start() read more than per_record rows or pages of per record
-- of the chain (and 500 more, for what any call reads)
CREATE FUNCTION pg_temp.over(call text, per_record int)
RETURNS TABLE (call text, relname name, rows_read bigint, pages_read bigint) LANGUAGE sql AS $$
    SELECT call, r.relname, r.nrows - b.nrows, r.npages - b.npages
      FROM pg_temp.reads() r JOIN reads_before b USING (relname)
     WHERE greatest(r.nrows - b.nrows, r.npages - b.npages) > per_record * 400 + 500
     ORDER BY 2 $$;

SELECT memtx.begin() AS tx \gset

-- staging: each stage reads its parent and writes the record, its edge and its history
BEGIN;
SELECT pg_temp.start();
SELECT pg_temp.stage_chain(:tx, :n, 'c') AS root \gset
SELECT * FROM pg_temp.over('stage', :bound);
COMMIT;

-- the commit: all committed
BEGIN;
SELECT pg_temp.start();
SELECT count(*) FILTER (WHERE state = 'committed') AS committed FROM memtx.commit(:tx);
SELECT * FROM pg_temp.over('commit', :bound);
COMMIT;

-- reads at the levels that judge every record's ancestry: the whole chain is visible
SELECT memtx.begin(isolation => 'verified_read') AS rv, memtx.begin(isolation => 'causally_stable_read') AS rc \gset
BEGIN;
SELECT pg_temp.start();
SELECT count(*) AS verified FROM memtx.read(:rv);
SELECT * FROM pg_temp.over('read, verified_read', :bound);
COMMIT;
BEGIN;
SELECT pg_temp.start();
SELECT count(*) AS causally_stable FROM memtx.read(:rc);
SELECT * FROM pg_temp.over('read, causally_stable_read', :bound);
COMMIT;

BEGIN;
SELECT pg_temp.start();
SELECT count(*) AS violations FROM memtx.check_invariants();
SELECT * FROM pg_temp.over('check_invariants, committed', :bound);
COMMIT;

-- the root revoked: the whole chain with it, one log row each
BEGIN;
SELECT pg_temp.start();
SELECT count(*) AS repaired FROM memtx.revoke(:root);
SELECT * FROM pg_temp.over('revoke', :bound);
COMMIT;
BEGIN;
SELECT pg_temp.start();
SELECT count(*) AS violations FROM memtx.check_invariants();
SELECT * FROM pg_temp.over('check_invariants, revoked', :bound);
COMMIT;
BEGIN;
SELECT pg_temp.start();
SELECT count(*) AS repaired FROM memtx.erase(:root);
SELECT * FROM pg_temp.over('erase, revoked', :bound);
COMMIT;

-- a second chain, committed, then erased at its root: a cascade like revoke's
SELECT memtx.begin() AS tx2 \gset
SELECT pg_temp.stage_chain(:tx2, :n, 'd') AS root2 \gset
SELECT count(*) FILTER (WHERE state = 'committed') AS committed FROM memtx.commit(:tx2);
BEGIN;
SELECT pg_temp.start();
SELECT count(*) AS repaired FROM memtx.erase(:root2);
SELECT * FROM pg_temp.over('erase', :bound);
COMMIT;

-- a third chain, aborted: every record a root of the repair, each below the one before
SELECT memtx.begin() AS tx3 \gset
SELECT pg_temp.stage_chain(:tx3, :n, 'e') IS NOT NULL AS staged;
BEGIN;
SELECT pg_temp.start();
SELECT count(*) AS repaired, count(DISTINCT root_id) AS roots FROM memtx.abort(:tx3);
SELECT * FROM pg_temp.over('abort', :bound);
COMMIT;

-- the store as a whole, and one namespace of it
BEGIN;
SELECT pg_temp.start();
SELECT count(*) AS violations FROM memtx.check_invariants();
SELECT * FROM pg_temp.over('check_invariants, every chain', :bound);
COMMIT;
BEGIN;
SELECT pg_temp.start();
SELECT count(*) AS violations FROM memtx.check_invariants('default');
SELECT * FROM pg_temp.over('check_invariants, one namespace', :bound);
COMMIT;

SELECT state, count(*) FROM memtx.records GROUP BY state ORDER BY state;

-- the history trigger matches an UPDATE's old and new rows with a hash join, whatever the
-- settings of the call whose UPDATE fires it (a nested loop over the two transition tables,
-- which no statistics count, read each old row once per new row: n² for a cascade of n)
SELECT proconfig @> ARRAY['enable_hashjoin=on', 'enable_nestloop=off'] AS hash_join
  FROM pg_proc WHERE oid = 'memtx.history_write()'::regprocedure;
