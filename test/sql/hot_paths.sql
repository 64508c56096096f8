-- Hot paths do not scan the store: each call below, on a store of 3000 committed records
-- (with their receipts and history), reads a few rows of each memtx table, however large
-- the store.  Rows read = sequential tuples read + tuples fetched through indexes, from
-- pg_stat_user_tables.  A call lists every table it read more than 100 rows of; no rows
-- listed is the pass; a batch may read 10 rows per record.  Found here: a commit that
-- joined the descendants of its records with every active record, and supersession, lookup
-- and restore reading the whole partial index of active records before ANALYZE — each
-- 3000 rows of memtx.records per call.
\i test/sql/include/prelude.psql
CREATE ROLE regress_hot_a;
SET memtx.logical_now = '2030-06-01 00:00:00+00';
SELECT memtx.register_tool('hot_note', true, 'hot_unnote');
SELECT memtx.register_source('hot_crm', 0.8), memtx.register_source('hot_erp', 0.8);

-- the store: 3000 committed records in one transaction, then one slot with two versions
SELECT memtx.begin(agent => 'regress_hot_a') AS bulk \gset
SELECT count(*) AS staged FROM memtx.stage_many(:bulk,
    (SELECT jsonb_agg(jsonb_build_object('entity', 'bulk:' || i, 'attribute', 'a', 'value', i,
                                         'scope', 'public'))
       FROM generate_series(1, 3000) i));
SELECT count(*) AS committed FROM memtx.commit(:bulk) WHERE state = 'committed';
SELECT tx_id AS p1tx, record_id AS p1 FROM memtx.propose('hot:1', 'a', '1', scope => 'public') \gset
SELECT count(*) AS records FROM memtx.records;

-- rows read of each memtx table so far, flushed to the statistics
CREATE TEMP TABLE reads_before (relname name PRIMARY KEY, n bigint);
CREATE FUNCTION pg_temp.reads() RETURNS TABLE (relname name, n bigint) LANGUAGE sql AS $$
    SELECT s.relname, coalesce(s.seq_tup_read, 0) + coalesce(s.idx_tup_fetch, 0)
      FROM pg_stat_user_tables s WHERE s.schemaname = 'memtx' $$;
-- start measuring: remember the counts (the caller flushed its statistics)
CREATE FUNCTION pg_temp.start() RETURNS void LANGUAGE sql AS $$
    SELECT pg_stat_clear_snapshot();
    DELETE FROM reads_before;
    INSERT INTO reads_before SELECT * FROM pg_temp.reads() $$;
-- the tables read more than bound rows of since start()
CREATE FUNCTION pg_temp.over(call text, bound int DEFAULT 100)
RETURNS TABLE (call text, relname name, rows_read bigint) LANGUAGE sql AS $$
    SELECT pg_stat_clear_snapshot();
    SELECT call, r.relname, r.n - coalesce(b.n, 0)
      FROM pg_temp.reads() r LEFT JOIN reads_before b USING (relname)
     WHERE r.n - coalesce(b.n, 0) > bound ORDER BY 2 $$;

SELECT pg_stat_force_next_flush();
SELECT pg_temp.start();

-- 1. propose on a new slot
SELECT state, pg_stat_force_next_flush() FROM memtx.propose('hot:2', 'a', '2', scope => 'public');
SELECT * FROM pg_temp.over('propose, new slot');
SELECT pg_temp.start();

-- 2. propose superseding the head of a slot
SELECT record_id AS p2, pg_stat_force_next_flush() FROM memtx.propose('hot:1', 'a', '3', expected_head => :p1, scope => 'public') \gset
SELECT state FROM memtx.records WHERE id IN (:p1, :p2) ORDER BY id;
SELECT * FROM pg_temp.over('propose, superseding');
SELECT pg_temp.start();

-- 3. begin, stage and commit as three calls, the record derived from two records of the bulk
SELECT memtx.begin(agent => 'regress_hot_a') AS tx, pg_stat_force_next_flush() \gset
SELECT pg_stat_force_next_flush() FROM memtx.stage(:tx, 'hot:3', 'a', '4', scope => 'public',
    derived_from => ARRAY[(SELECT min(id) FROM memtx.records), :p2]);
SELECT state, pg_stat_force_next_flush() FROM memtx.commit(:tx);
SELECT * FROM pg_temp.over('begin, stage, commit');
SELECT pg_temp.start();

-- 4. a read by slot at every level (each in its own SQL transaction, so its statistics are
-- flushed before the next), a read by entity, a lookup, and the gate
SELECT memtx.begin(agent => 'regress_hot_a', isolation => 'raw_read') AS r1,
       memtx.begin(agent => 'regress_hot_a', isolation => 'committed_read') AS r2,
       memtx.begin(agent => 'regress_hot_a', isolation => 'verified_read') AS r3,
       memtx.begin(agent => 'regress_hot_a', isolation => 'causally_stable_read') AS r4,
       memtx.begin(agent => 'regress_hot_a', isolation => 'action_safe_read') AS r5,
       pg_stat_force_next_flush() \gset
SELECT pg_temp.start();
-- each level's read, then its figures, one statement each (statistics are flushed between)
SELECT q FROM (VALUES (1, :r1, 'raw_read'), (2, :r2, 'committed_read'), (3, :r3, 'verified_read'),
                      (4, :r4, 'causally_stable_read'), (5, :r5, 'action_safe_read')) v(n, tx, level),
     LATERAL (VALUES
         (1, format('SELECT %L AS level, count(*), pg_stat_force_next_flush() FROM memtx.read(%s, %L, %L)',
                    level, tx, 'hot:3', 'a')),
         (2, format('SELECT * FROM pg_temp.over(%L)', 'read, ' || level)),
         (3, 'SELECT pg_temp.start()')) w(m, q)
 ORDER BY n, m \gexec
SELECT count(*), pg_stat_force_next_flush() FROM memtx.read(:r4, 'hot:1');
SELECT * FROM pg_temp.over('read by entity');
SELECT pg_temp.start();
SELECT count(*), pg_stat_force_next_flush() FROM memtx.lookup('hot:1', 'a');
SELECT * FROM pg_temp.over('lookup by slot');
SELECT pg_temp.start();
SELECT count(*), pg_stat_force_next_flush() FROM memtx.lookup('hot:1');
SELECT * FROM pg_temp.over('lookup by entity');
SELECT pg_temp.start();
SELECT allowed, pg_stat_force_next_flush() FROM memtx.gate(:r4, 'hot_launch');
SELECT * FROM pg_temp.over('gate');
SELECT pg_temp.start();

-- 5. an act on a record, then a commit of a transaction that acted on its own staging
SELECT memtx.begin(agent => 'regress_hot_a') AS atx, pg_stat_force_next_flush() \gset
SELECT memtx.stage(:atx, 'hot:4', 'a', '5', scope => 'public') AS staged, pg_stat_force_next_flush() \gset
SELECT pg_temp.start();
SELECT allowed, pg_stat_force_next_flush() FROM memtx.act(:atx, 'hot_note', '{}', ARRAY[:staged, :p2]);
SELECT * FROM pg_temp.over('act');
SELECT pg_temp.start();
SELECT state, pg_stat_force_next_flush() FROM memtx.commit(:atx);
SELECT * FROM pg_temp.over('commit with an action below its staging');
SELECT pg_temp.start();

-- 6. revoke of a record with two descendants (a belief and an action)
SELECT count(*), pg_stat_force_next_flush() FROM memtx.revoke(:p2);
SELECT * FROM pg_temp.over('revoke');
SELECT pg_temp.start();

-- 7. a batch: stage_many of 20 records (two of them rivals of one slot) and its commit
SELECT memtx.begin(agent => 'regress_hot_a') AS btx, pg_stat_force_next_flush() \gset
SELECT pg_temp.start();
SELECT count(*), pg_stat_force_next_flush() FROM memtx.stage_many(:btx,
    (SELECT jsonb_agg(jsonb_build_object('entity', 'batch:' || least(i, 19), 'attribute', 'a', 'value', i))
       FROM generate_series(1, 20) i));
SELECT * FROM pg_temp.over('stage_many', 200);
SELECT pg_temp.start();
SELECT state, reason, count(*), pg_stat_force_next_flush() FROM memtx.commit(:btx) GROUP BY 1, 2 ORDER BY 1, 2;
-- a batch reads its own records a few times each: at most 10 rows per record
SELECT * FROM pg_temp.over('commit of 20', 200);
SELECT pg_temp.start();

-- 8. a proposal's outcome, an abort, a resolution either way, expiry with nothing to expire
SELECT state, pg_stat_force_next_flush() FROM memtx.propose('hot:5', 'a', '6', proposal => 'hot-p1');
SELECT pg_temp.start();
SELECT state, pg_stat_force_next_flush() FROM memtx.outcome('hot-p1');
SELECT * FROM pg_temp.over('outcome');
SELECT memtx.begin(agent => 'regress_hot_a') AS xtx, pg_stat_force_next_flush() \gset
SELECT memtx.stage(:xtx, 'hot:6', 'a', '7') IS NOT NULL AS staged, pg_stat_force_next_flush();
SELECT pg_temp.start();
SELECT count(*), pg_stat_force_next_flush() FROM memtx.abort(:xtx);
SELECT * FROM pg_temp.over('abort');
-- contenders from a source of the same authority as the heads': both await review
SELECT state FROM memtx.propose('hot:r1', 'a', '1', source => 'hot_crm');
SELECT state FROM memtx.propose('hot:r2', 'a', '1', source => 'hot_crm');
SELECT memtx.begin(agent => 'regress_hot_a') AS htx, pg_stat_force_next_flush() \gset
SELECT memtx.stage(:htx, 'hot:r1', 'a', '2', source => 'hot_erp') AS review1,
       memtx.stage(:htx, 'hot:r2', 'a', '2', source => 'hot_erp') AS review2,
       pg_stat_force_next_flush() \gset
SELECT reason, count(*), pg_stat_force_next_flush() FROM memtx.commit(:htx) GROUP BY 1;
SELECT pg_temp.start();
SELECT memtx.resolve(:review1, true), pg_stat_force_next_flush();
SELECT * FROM pg_temp.over('resolve, accept');
SELECT pg_temp.start();
SELECT memtx.resolve(:review2, false), pg_stat_force_next_flush();
SELECT * FROM pg_temp.over('resolve, reject');
SELECT pg_temp.start();
SELECT count(*), pg_stat_force_next_flush() FROM memtx.expire_transactions();
SELECT * FROM pg_temp.over('expire_transactions');
SELECT pg_temp.start();

-- 9. continuity: the state at a time, a restore, an erasure
SELECT count(*), pg_stat_force_next_flush() FROM memtx.read_as_of(memtx.now(), 'hot:2', 'a');
SELECT * FROM pg_temp.over('read_as_of');
SELECT memtx.begin(agent => 'regress_hot_a') AS stx, pg_stat_force_next_flush() \gset
SELECT pg_temp.start();
SELECT memtx.restore(:stx, 'hot:2', 'a', memtx.now()) IS NOT NULL AS restored, pg_stat_force_next_flush();
SELECT * FROM pg_temp.over('restore');
SELECT pg_temp.start();
SELECT count(*), pg_stat_force_next_flush() FROM memtx.erase(:staged, 'hot paths test');
SELECT * FROM pg_temp.over('erase');
SELECT pg_temp.start();

-- the measure sees a scan: a count of the records reads every one
SELECT count(*) > 3000 AS scanned, pg_stat_force_next_flush() FROM memtx.records;
SELECT call, relname FROM pg_temp.over('a scan');

DROP ROLE regress_hot_a;
