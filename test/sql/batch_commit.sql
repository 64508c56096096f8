-- A commit supersedes the rivals of the records it promotes at the end of its run (the last
-- record of each slot, without children) in one statement, when no record of the run has
-- parents or a read set: what each record superseded, and every state, are those of one
-- supersession per record.  Statements are counted by the runs of the history trigger (one
-- per UPDATE of memtx.records), from pg_stat_xact_user_functions.
\i test/sql/include/prelude.psql
SET memtx.logical_now = '2030-06-01 00:00:00+00';
-- pg_temp.batch(prefix, n, base): records on slots prefix1..prefixn, values base + i
CREATE FUNCTION pg_temp.batch(prefix text, n int, base int) RETURNS jsonb LANGUAGE sql AS $$
SELECT jsonb_agg(jsonb_build_object('entity', prefix || g, 'attribute', 'a', 'value', base + g) ORDER BY g)
  FROM generate_series(1, n) g $$;
-- runs of the history trigger in this SQL transaction so far
CREATE FUNCTION pg_temp.history_runs() RETURNS bigint LANGUAGE sql AS $$
SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions
 WHERE schemaname = 'memtx' AND funcname = 'history_write' $$;

-- the store: ten committed records on slots b1..b10
SELECT memtx.begin() AS tx0 \gset
SELECT count(*) AS staged FROM memtx.stage_many(:tx0, pg_temp.batch('b', 10, 0));
SELECT count(*) AS committed FROM memtx.commit(:tx0) WHERE state = 'committed';

-- 1. ten new records on the same slots, plus two on a new slot c (the first is promoted at
--    once, the second at the end): eleven supersessions, two UPDATE statements at the end
BEGIN;
SET LOCAL track_functions = 'all';
SELECT memtx.begin() AS tx1 \gset
SELECT count(*) AS staged FROM memtx.stage_many(:tx1, pg_temp.batch('b', 10, 100)
       || '[{"entity": "c", "attribute": "a", "value": 1}, {"entity": "c", "attribute": "a", "value": 2}]');
SELECT pg_temp.history_runs() AS runs_before_commit \gset
SELECT state, count(*) FROM memtx.commit(:tx1) GROUP BY state ORDER BY state;
-- the promotion of the first record of c, then one supersession and one promotion
SELECT pg_temp.history_runs() - :runs_before_commit AS updates_in_commit;
COMMIT;
SELECT r.tx_id = :tx0 AS old, r.entity = 'c' AS on_c, r.state, count(*)
  FROM memtx.records r GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
-- what each record superseded: its slot's head before it
SELECT n.entity, n.value,
       ARRAY(SELECT memtx.receipt_ids(c.body -> 'superseded')) = ARRAY(
           SELECT o.id FROM memtx.records o
            WHERE o.namespace = n.namespace AND o.entity = n.entity AND o.attribute = n.attribute
              AND o.staged_pos < n.staged_pos ORDER BY o.staged_pos DESC LIMIT 1) AS superseded_its_head
  FROM memtx.records n JOIN memtx.receipts c ON c.kind = 'commit' AND c.subject = n.id
 WHERE n.tx_id = :tx1 ORDER BY n.staged_pos;
-- every superseded record has its history row, after its commit and before the end of tx1
SELECT count(*) AS superseded_with_history
  FROM memtx.records o JOIN memtx.history h ON h.record_id = o.id AND h.state = 'superseded'
 WHERE o.state = 'superseded' AND h.pos > o.committed_seq
   AND h.pos < (SELECT max(settled_pos) FROM memtx.records WHERE tx_id = :tx1);
-- the store is one active record per slot
SELECT entity, count(*) FILTER (WHERE memtx.is_active(state)) AS active
  FROM memtx.records GROUP BY entity HAVING count(*) FILTER (WHERE memtx.is_active(state)) <> 1;

-- 2. a run where one record has a parent: every record supersedes its rivals when it passes
--    (a later record's parent could be one of them): three supersessions, one promotion
BEGIN;
SET LOCAL track_functions = 'all';
SELECT memtx.begin() AS tx2 \gset
SELECT count(*) AS staged FROM memtx.stage_many(:tx2, pg_temp.batch('b', 2, 200)
       || jsonb_build_array(jsonb_build_object('entity', 'b3', 'attribute', 'a', 'value', 203,
              'derived_from', jsonb_build_array((SELECT id FROM memtx.records WHERE entity = 'c' AND state = 'committed')))));
SELECT pg_temp.history_runs() AS runs_before_commit \gset
SELECT state, count(*) FROM memtx.commit(:tx2) GROUP BY state ORDER BY state;
SELECT pg_temp.history_runs() - :runs_before_commit AS updates_in_commit;
COMMIT;
SELECT entity, value, state FROM memtx.records WHERE entity IN ('b1', 'b2', 'b3') ORDER BY entity, staged_pos;
