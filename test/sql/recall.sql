-- memtx.recall (SPEC §14): ranked full-text retrieval of exactly what memtx.read shows the
-- transaction, the best k visible matches first, served by the GIN index, joining the read set.
\i test/sql/include/prelude.psql
CREATE ROLE regress_recall_a;
CREATE ROLE regress_recall_b;
SELECT memtx.register_source('ledger', 1.0);
SET memtx.logical_now = '2030-06-01 00:00:00+00';
-- a fresh transaction of agent a at the given level (the tests run as a harness)
CREATE FUNCTION pg_temp.tx(level memtx.isolation) RETURNS bigint LANGUAGE sql AS $$
    SELECT memtx.begin(agent => 'regress_recall_a', isolation => level) $$;
-- the ids recall returns to a fresh transaction at the level, in id order
CREATE FUNCTION pg_temp.recalled(level memtx.isolation, q text DEFAULT 'refund') RETURNS bigint[]
LANGUAGE sql AS $$
    SELECT coalesce(array_agg(record_id ORDER BY record_id), '{}')
      FROM memtx.recall(pg_temp.tx(level), q, 1000) $$;
-- the ids memtx.read shows a fresh transaction at the level whose document matches q
CREATE FUNCTION pg_temp.read_matching(level memtx.isolation, q text DEFAULT 'refund') RETURNS bigint[]
LANGUAGE sql AS $$
    SELECT coalesce(array_agg(r.id ORDER BY r.id), '{}')
      FROM memtx.read(pg_temp.tx(level)) r
     WHERE memtx.recall_document(r.entity, r.attribute, r.value) @@ websearch_to_tsquery('english', q) $$;

-- 1. every state and role recall must hide (records are staged by their agents, who own them)
SELECT pg_temp.tx('committed_read') AS tx;   -- 1: agent a
SET ROLE regress_recall_a;
SELECT memtx.stage(1, 'order:1', 'status', '"refund approved"', scope => 'public');            -- 1 committed
SELECT memtx.stage(1, 'order:2', 'status', '"refund pending"');                                -- 2 superseded below
SELECT memtx.stage(1, 'order:3', 'status', '"refund maybe"', confidence => 0.1);              -- 3 quarantined
SELECT memtx.stage(1, 'order:4', 'status', '"refund withdrawn"');                              -- 4 revoked below
SELECT memtx.stage(1, 'order:5', 'status', '"refund derived"', derived_from => ARRAY[2]);     -- 5 parent superseded
SELECT record_id, state, reason FROM memtx.commit(1);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_recall_b', tier => 'low') AS tx;   -- 2: agent b
SET ROLE regress_recall_b;
SELECT memtx.stage(2, 'order:6', 'note', '"refund private to b"');                             -- 6 unreadable by a
SELECT memtx.stage(2, 'order:7', 'note', '"refund shared with a"', readers => ARRAY['regress_recall_a']);  -- 7
SELECT record_id, state FROM memtx.commit(2);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_recall_a', namespace => 'other') AS tx;   -- 3: another namespace
SET ROLE regress_recall_a;
SELECT memtx.stage(3, 'order:8', 'status', '"refund elsewhere"', scope => 'public');           -- 8
SELECT record_id, state FROM memtx.commit(3);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_recall_a', tier => 'low') AS tx;   -- 4
SET ROLE regress_recall_a;
SELECT memtx.stage(4, 'order:2', 'status', '"shipped"', source => 'ledger');                   -- 9 supersedes 2
SELECT record_id, state FROM memtx.commit(4);
SELECT count(*) AS revoked FROM memtx.revoke(4);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_recall_a', tier => 'external_action') AS tx;   -- 5
SET ROLE regress_recall_a;
SELECT memtx.stage(5, 'order:10', 'status', '"refund safe"', scope => 'public');               -- 10 action_safe
SELECT record_id, state FROM memtx.commit(5);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_recall_b', tier => 'low') AS tx;   -- 6: stays open
SET ROLE regress_recall_b;
SELECT memtx.stage(6, 'order:11', 'note', '"refund in flight"', scope => 'public');             -- 11 tentative
RESET ROLE;
SELECT memtx.begin(agent => 'regress_recall_b', tier => 'low') AS rival \gset
SET ROLE regress_recall_b;
SELECT memtx.stage(:rival, 'order:1', 'status', '"no refund"', scope => 'public');              -- 12 rival of 1, in flight
RESET ROLE;
SELECT id, entity, state, owner, readers, scope, namespace FROM memtx.records ORDER BY id;

-- at every level recall returns exactly the matches memtx.read shows (raw_read: every state
-- staged before the transaction began, the other agent's tentative records included;
-- committed_read: active only; verified_read: not 5, whose parent is superseded;
-- causally_stable_read: not 1, which has a rival in flight; action_safe_read: action_safe only)
SELECT l AS level, pg_temp.recalled(l) AS recalled, pg_temp.recalled(l) = pg_temp.read_matching(l) AS same_as_read
  FROM unnest(enum_range(NULL::memtx.isolation)) l;
SELECT count(*) FROM memtx.abort(:rival);
-- ... and the same holds for another agent (b reads 6 and 7, not a's private records)
SELECT array_agg(record_id ORDER BY record_id) AS b_recalls
  FROM memtx.recall(memtx.begin(agent => 'regress_recall_b', isolation => 'committed_read'), 'refund', 1000);
-- the other agent's tentative record appears once it commits, for transactions begun after
SELECT record_id, state FROM memtx.commit(6);
SELECT pg_temp.recalled('committed_read') AS after_commit;

-- the transaction's own tentative records are visible to it, at every level
SELECT pg_temp.tx('action_safe_read') AS own \gset
SET ROLE regress_recall_a;
SELECT memtx.stage(:own, 'order:13', 'status', '"refund own draft"');                           -- 13
SELECT array_agg(record_id ORDER BY record_id) AS own_view FROM memtx.recall(:own, 'refund', 1000);
SELECT count(*) FROM memtx.abort(:own);
RESET ROLE;

-- 2. ranking: rank descending, then id ascending; result columns
SET ROLE regress_recall_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'customer:ada', 'email', '"ada@example.org"', scope => 'public');              -- 14
SELECT memtx.stage(:tx, 'customer:ada', 'refund_note', '"refund refund refund for ada"', scope => 'public');  -- 15
SELECT memtx.stage(:tx, 'customer:bob', 'refund_note', '"refund for bob"', scope => 'public');          -- 16
SELECT memtx.stage(:tx, 'customer:cy', 'refund_note', '"refund for cy"', scope => 'public');            -- 17
SELECT count(*) FROM memtx.commit(:tx);
RESET ROLE;
SELECT record_id, entity, attribute, value, round(rank::numeric, 4) AS rank, pg_typeof(rank)
  FROM memtx.recall(pg_temp.tx('committed_read'), 'refund customer', 5);
-- entity, attribute and value are all in the document; websearch syntax: "phrase", or, -word
SELECT q AS query, (SELECT array_agg(record_id) FROM memtx.recall(pg_temp.tx('committed_read'), q)) AS best_first
  FROM unnest(ARRAY['ada', 'email', 'approved refund', '"approved refund"', '"refund approved"',
                    'ada -email', 'ada@example.org or cy', 'Refunds']) q;
-- k limits the rows, and the default is 8
SELECT count(*) AS k2 FROM memtx.recall(pg_temp.tx('committed_read'), 'refund', 2);
SELECT count(*) AS default_k FROM memtx.recall(pg_temp.tx('raw_read'), 'refund');

-- 3. the best k *visible* matches: the best-ranked matches are invisible to a (b's private and
-- b's in-flight records), yet recall fills k from the visible ones below them
SET ROLE regress_recall_b;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'lead:' || g, 'memo', '"quota quota quota quota"') FROM generate_series(1, 6) g;   -- 18..23
SELECT count(*) FROM memtx.commit(:tx);
SELECT memtx.begin() AS inflight \gset
SELECT memtx.stage(:inflight, 'lead:' || g, 'memo', '"quota quota quota"', scope => 'public') FROM generate_series(7, 11) g;  -- 24..28
SET ROLE regress_recall_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'lead:' || g, 'memo', '"quota once"', scope => 'public') FROM generate_series(12, 14) g;  -- 29..31
SELECT count(*) FROM memtx.commit(:tx);
RESET ROLE;
-- all matches, by rank: b's eleven first
SELECT array_agg(id ORDER BY ts_rank(memtx.recall_document(entity, attribute, value), websearch_to_tsquery('english', 'quota')) DESC, id) AS all_matches
  FROM memtx.records WHERE memtx.recall_document(entity, attribute, value) @@ websearch_to_tsquery('english', 'quota');
SELECT record_id FROM memtx.recall(pg_temp.tx('committed_read'), 'quota', 1);
SELECT record_id FROM memtx.recall(pg_temp.tx('committed_read'), 'quota', 2);
SELECT record_id FROM memtx.recall(pg_temp.tx('committed_read'), 'quota', 3);
-- b sees its own first
SELECT array_agg(record_id) AS b_best FROM memtx.recall(memtx.begin(agent => 'regress_recall_b', tier => 'low'), 'quota', 7);
SELECT count(*) FROM memtx.abort(:inflight);

-- 4. entity_prefix is a plain prefix: % and _ are characters like any other
SET ROLE regress_recall_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, e, 'memo', '"widget"', scope => 'public')
  FROM unnest(ARRAY['a%b', 'axb', 'a_c', 'abc', 'A%b']) e;    -- 32..36
SELECT count(*) FROM memtx.commit(:tx);
RESET ROLE;
SELECT quote_nullable(p) AS prefix, (SELECT array_agg(entity ORDER BY record_id) FROM memtx.recall(pg_temp.tx('committed_read'), 'widget', 10, p)) AS entities
  FROM unnest(ARRAY['a%', 'a_', 'a', '', 'ab', 'zz', NULL]) p;

-- 4b. valid_at (SPEC §18): only the matches whose validity contains the instant; the best
-- k of those, not the best k filtered afterwards
SET ROLE regress_recall_a;
SELECT memtx.begin() AS tx \gset
SELECT count(*) FROM (
    SELECT memtx.stage(:tx, 'coupon:' || i, 'text', to_jsonb('gadget coupon ' || i), scope => 'public',
                       valid => CASE WHEN i <= 3 THEN '[2030-05-01 00:00+00,2030-06-02 00:00+00)'
                                     ELSE '[2030-05-01 00:00+00,)' END::tstzrange)
      FROM generate_series(1, 5) i) s;
SELECT count(*) FROM memtx.commit(:tx);
RESET ROLE;
SELECT v AS valid_at, (SELECT array_agg(entity ORDER BY entity) FROM memtx.recall(pg_temp.tx('committed_read'), 'gadget', 10, valid_at => v)) AS entities
  FROM unnest(ARRAY['2030-06-01 23:59:59+00', '2030-06-02 00:00+00', '2030-04-30 00:00+00', NULL]::timestamptz[]) v;
SELECT array_agg(entity ORDER BY entity) AS best_2_valid_later
  FROM memtx.recall(pg_temp.tx('committed_read'), 'gadget', 2, valid_at => '2030-07-01 00:00+00');

-- 5. queries that match nothing: empty, stop words only, no lexeme
SELECT count(*) AS empty FROM memtx.recall(pg_temp.tx('committed_read'), '');
SELECT count(*) AS stop_words FROM memtx.recall(pg_temp.tx('committed_read'), 'the and of');
SELECT count(*) AS punctuation FROM memtx.recall(pg_temp.tx('committed_read'), ' & | ! ');
SELECT count(*) AS no_match FROM memtx.recall(pg_temp.tx('committed_read'), 'zebra');

-- 6. errors: k outside 1..1000 is 22003; NULLs 22004; the transaction checks of memtx.read
SELECT count(*) AS k1000 FROM memtx.recall(pg_temp.tx('committed_read'), 'refund', 1000);
-- the longest query taken: 1024 terms, 2047 items
SELECT count(*) AS longest_query FROM memtx.recall(pg_temp.tx('committed_read'), repeat('refund ', 1024));
SELECT count(*) AS read_set_before FROM memtx.read_set \gset
SELECT pg_temp.try(format('SELECT * FROM memtx.recall(%s, %L, %s)', pg_temp.tx('committed_read'), 'refund', k))
  FROM unnest(ARRAY[0, -1, 1001, 2147483647]) k;
SELECT pg_temp.try('SELECT * FROM memtx.recall(NULL, ''refund'')');
SELECT pg_temp.try(format('SELECT * FROM memtx.recall(%s, NULL)', pg_temp.tx('committed_read')));
SELECT pg_temp.try(format('SELECT * FROM memtx.recall(%s, ''refund'', NULL)', pg_temp.tx('committed_read')));
SELECT pg_temp.try('SELECT * FROM memtx.recall(999999, ''refund'')');
-- an over-long query is 54000, by its text and by its parsed terms (a
-- query of 860k terms ran past the fuzzer's 60 s statement timeout)
SELECT pg_temp.try(format('SELECT * FROM memtx.recall(%s, %L)', pg_temp.tx('committed_read'), repeat('refund ', 700000)));
SELECT pg_temp.try(format('SELECT * FROM memtx.recall(%s, %L)', pg_temp.tx('committed_read'), repeat('a1 ', 1100)));
SELECT pg_temp.tx('committed_read') AS aborted \gset
SELECT count(*) FROM memtx.abort(:aborted);
SELECT pg_temp.try('SELECT * FROM memtx.recall(' || :aborted || ', ''refund'')');
-- only the transaction's agent (or a harness) may recall through it
SET ROLE regress_recall_b;
SELECT pg_temp.try('SELECT * FROM memtx.recall(' || 1 || ', ''refund'')');
RESET ROLE;
-- REPEATABLE READ is refused like memtx.read
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.try('SELECT * FROM memtx.recall(1, ''refund'')');
ROLLBACK;
-- errors write nothing: no read-set row for any of the calls above
SELECT count(*) - :read_set_before AS read_set_rows_of_failed_calls FROM memtx.read_set;

-- 7. the read set: exactly the returned rows join it, and flow control covers them
SET ROLE regress_recall_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'invoice:1', 'status', '"disputed by the customer"') AS private_record;   -- private to a
SELECT record_id, state FROM memtx.commit(:tx);
SELECT memtx.begin() AS tx \gset
SELECT record_id FROM memtx.recall(:tx, 'refund', 2);
SELECT array_agg(record_id ORDER BY record_id) AS read_set FROM memtx.read_set WHERE tx_id = :tx;
-- a recalled private value transcribed into a public record is laundering (no declared parent)
SELECT record_id, entity, value FROM memtx.recall(:tx, 'disputed');
SELECT memtx.stage(:tx, 'digest', 'invoices', '"invoice 1 disputed by the customer"', scope => 'public') AS copy;
SELECT record_id, state, reason FROM memtx.commit(:tx);
-- the same copy without the recall commits
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'digest', 'invoices2', '"invoice 1 disputed by the customer"', scope => 'public') AS copy;
SELECT record_id, state, reason FROM memtx.commit(:tx);
-- a recall whose SQL transaction rolls back still counts (the durable read set)
SELECT memtx.begin() AS tx \gset
BEGIN;
SELECT record_id FROM memtx.recall(:tx, 'disputed customer', 1, 'invoice:');
ROLLBACK;
SELECT memtx.stage(:tx, 'digest', 'invoices3', '"invoice 1 disputed by the customer"', scope => 'public') AS copy;
SELECT record_id, state, reason FROM memtx.commit(:tx);
-- ... and so does one in a READ ONLY transaction, which writes nothing (no xid)
SELECT memtx.begin() AS tx \gset
BEGIN READ ONLY;
SELECT record_id FROM memtx.recall(:tx, 'disputed');
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
COMMIT;
SELECT count(*) AS read_set_rows FROM memtx.read_set WHERE tx_id = :tx;
SELECT memtx.stage(:tx, 'digest', 'invoices4', '"invoice 1 disputed by the customer"', scope => 'public') AS copy;
SELECT record_id, state, reason FROM memtx.commit(:tx);
RESET ROLE;

-- 8. served by the GIN index, never by a scan of the store.  The generic plan of the query
-- recall runs (recall.c) probes records_recall_idx and has no Seq Scan on records ...
SET plan_cache_mode = force_generic_plan;
PREPARE recall_query(text, tsquery, text, timestamptz) AS
    WITH m AS MATERIALIZED (
      SELECT r.* FROM memtx.records r
       WHERE memtx.recall_document(r.entity, r.attribute, r.value) @@ $2)
    SELECT m.*, ts_rank(memtx.recall_document(m.entity, m.attribute, m.value), $2) AS recall_rank
      FROM m WHERE m.namespace = $1 AND ($3 IS NULL OR starts_with(m.entity, $3))
       AND ($4 IS NULL OR m.valid @> $4)
     ORDER BY recall_rank DESC, m.id;
EXPLAIN (COSTS OFF) EXECUTE recall_query('default', 'refund', NULL, NULL);
DEALLOCATE recall_query;
RESET plan_cache_mode;
-- ... and a call counts one scan of that index and no sequential scan of records
SELECT pg_temp.tx('verified_read') AS vtx \gset
SELECT pg_stat_force_next_flush();
SELECT idx_scan AS idx_before FROM pg_stat_user_indexes WHERE indexrelname = 'records_recall_idx' \gset
SELECT seq_scan AS seq_before FROM pg_stat_user_tables WHERE relid = 'memtx.records'::regclass \gset
SELECT count(*), pg_stat_force_next_flush() FROM memtx.recall(:vtx, 'refund', 3);
SELECT pg_stat_clear_snapshot();
SELECT idx_scan - :idx_before AS recall_index_scans FROM pg_stat_user_indexes WHERE indexrelname = 'records_recall_idx';
SELECT seq_scan - :seq_before AS records_seq_scans FROM pg_stat_user_tables WHERE relid = 'memtx.records'::regclass;

-- 9. the index is on every record, whatever its state (raw_read and own tentative records need it)
SELECT indexdef FROM pg_indexes WHERE indexname = 'records_recall_idx';

DROP FUNCTION pg_temp.recalled(memtx.isolation, text);
DROP FUNCTION pg_temp.read_matching(memtx.isolation, text);
DROP FUNCTION pg_temp.tx(memtx.isolation);
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_recall_a;
DROP ROLE regress_recall_b;
