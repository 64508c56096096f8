-- memtx.recall_similar (SPEC §19): exactly what memtx.read shows the transaction, the k nearest
-- visible records by the model's distance (ascending, then id), found through the model's HNSW
-- index scanned iteratively with the visibility filter inside the scan; joining the read set.
\i test/vector/sql/include/prelude.psql
\i test/sql/include/fails.psql
CREATE ROLE regress_vrecall_a;
CREATE ROLE regress_vrecall_b;
SELECT memtx.register_source('ledger', 1.0);
SELECT memtx.register_embedding_model('m3', 3);
SET memtx.logical_now = '2030-06-01 00:00:00+00';
-- a fresh transaction of agent a at the given level (the tests run as a harness)
CREATE FUNCTION pg_temp.tx(level memtx.isolation) RETURNS bigint LANGUAGE sql AS $$
    SELECT memtx.begin(agent => 'regress_vrecall_a', isolation => level) $$;
-- the ids recall_similar returns to a fresh transaction at the level (all of them), in id order
CREATE FUNCTION pg_temp.similar(level memtx.isolation) RETURNS bigint[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(record_id ORDER BY record_id), '{}')
      FROM memtx.recall_similar(pg_temp.tx(level), '[1,0,0]', 'm3', 1000) $$;
-- the ids memtx.read shows a fresh transaction at the level that have an embedding under m3
CREATE FUNCTION pg_temp.read_embedded(level memtx.isolation) RETURNS bigint[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(r.id ORDER BY r.id), '{}')
      FROM memtx.read(pg_temp.tx(level)) r
     WHERE EXISTS (SELECT FROM memtx.embeddings e WHERE e.record_id = r.id AND e.model = 'm3') $$;

-- 1. every state and role recall_similar must hide, as memtx.recall's test has them
SELECT pg_temp.tx('committed_read') AS tx;   -- 1: agent a
SET ROLE regress_vrecall_a;
SELECT memtx.stage(1, 'order:1', 'status', '"approved"', scope => 'public');            -- 1 committed
SELECT memtx.stage(1, 'order:2', 'status', '"pending"');                                -- 2 superseded below
SELECT memtx.stage(1, 'order:3', 'status', '"maybe"', confidence => 0.1);              -- 3 quarantined
SELECT memtx.stage(1, 'order:4', 'status', '"withdrawn"');                              -- 4 revoked below
SELECT memtx.stage(1, 'order:5', 'status', '"derived"', derived_from => ARRAY[2]);     -- 5 parent superseded
SELECT record_id, state, reason FROM memtx.commit(1);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_vrecall_b', tier => 'low') AS tx;   -- 2: agent b
SET ROLE regress_vrecall_b;
SELECT memtx.stage(2, 'order:6', 'note', '"private to b"');                             -- 6 unreadable by a
SELECT memtx.stage(2, 'order:7', 'note', '"shared with a"', readers => ARRAY['regress_vrecall_a']);  -- 7
SELECT record_id, state FROM memtx.commit(2);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_vrecall_a', namespace => 'other') AS tx;   -- 3: another namespace
SET ROLE regress_vrecall_a;
SELECT memtx.stage(3, 'order:8', 'status', '"elsewhere"', scope => 'public');           -- 8
SELECT record_id, state FROM memtx.commit(3);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_vrecall_a', tier => 'low') AS tx;   -- 4
SET ROLE regress_vrecall_a;
SELECT memtx.stage(4, 'order:2', 'status', '"shipped"', source => 'ledger');                   -- 9 supersedes 2
SELECT record_id, state FROM memtx.commit(4);
SELECT count(*) AS revoked FROM memtx.revoke(4);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_vrecall_a', tier => 'external_action') AS tx;   -- 5
SET ROLE regress_vrecall_a;
SELECT memtx.stage(5, 'order:10', 'status', '"safe"', scope => 'public');               -- 10 action_safe
SELECT record_id, state FROM memtx.commit(5);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_vrecall_b', tier => 'low') AS tx;   -- 6: stays open
SET ROLE regress_vrecall_b;
SELECT memtx.stage(6, 'order:11', 'note', '"in flight"', scope => 'public');             -- 11 tentative
RESET ROLE;
SELECT memtx.begin(agent => 'regress_vrecall_b', tier => 'low') AS rival \gset
SET ROLE regress_vrecall_b;
SELECT memtx.stage(:rival, 'order:1', 'status', '"rejected"', scope => 'public');        -- 12 rival of 1, in flight
RESET ROLE;
-- every record gets an embedding (a harness may embed any record); 9 has none
SELECT memtx.embed(id, 'm3', format('[%s,%s,%s]', cos(id * 0.1), sin(id * 0.1), 0.5)::vector)
  FROM memtx.records WHERE id <> 9 ORDER BY id;
SELECT id, entity, state, owner, readers, scope, namespace,
       EXISTS (SELECT FROM memtx.embeddings e WHERE e.record_id = id) AS embedded
  FROM memtx.records ORDER BY id;

-- at every level recall_similar returns exactly the embedded records memtx.read shows
SELECT l AS level, pg_temp.similar(l) AS similar, pg_temp.similar(l) = pg_temp.read_embedded(l) AS same_as_read
  FROM unnest(enum_range(NULL::memtx.isolation)) l;
SELECT count(*) FROM memtx.abort(:rival);
-- ... and for another agent (b sees 6 and 7, not a's private records)
SELECT array_agg(record_id ORDER BY record_id) AS b_sees
  FROM memtx.recall_similar(memtx.begin(agent => 'regress_vrecall_b', isolation => 'committed_read'), '[1,0,0]', 'm3', 1000);
-- the other agent's tentative record appears once it commits, for transactions begun after
SELECT record_id, state FROM memtx.commit(6);
SELECT pg_temp.similar('committed_read') AS after_commit;
-- the transaction's own tentative records are visible to it, at every level
SELECT pg_temp.tx('action_safe_read') AS own \gset
SET ROLE regress_vrecall_a;
SELECT memtx.stage(:own, 'order:13', 'status', '"own draft"') AS draft \gset
SELECT memtx.embed(:draft, 'm3', '[1,0,0]');
SELECT array_agg(record_id ORDER BY record_id) AS own_view FROM memtx.recall_similar(:own, '[1,0,0]', 'm3', 1000);
SELECT count(*) FROM memtx.abort(:own);
RESET ROLE;

-- 2. order: distance ascending, then id; rank = 1/(60 + position); k limits, default 8
SET ROLE regress_vrecall_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'shape:' || n, 'vector', to_jsonb(n), scope => 'public') FROM unnest(ARRAY['a', 'b', 'c', 'd', 'e']) n;
SELECT count(*) FROM memtx.commit(:tx);
RESET ROLE;
SELECT memtx.register_embedding_model('m2', 2);
-- c and b tie at the same distance (the same vector); d is the nearest; a the farthest
SELECT memtx.embed(r.id, 'm2', v.vec::vector)
  FROM memtx.records r JOIN (VALUES ('shape:a', '[-1,0]'), ('shape:b', '[0,1]'), ('shape:c', '[0,1]'),
                                   ('shape:d', '[1,0.1]'), ('shape:e', '[1,-1]')) v(entity, vec) ON v.entity = r.entity;
SELECT record_id, entity, attribute, value, round(distance::numeric, 6) AS distance, rank, pg_typeof(distance), pg_typeof(rank)
  FROM memtx.recall_similar(pg_temp.tx('committed_read'), '[1,0]', 'm2', 5);
-- the distances are pgvector's cosine distances
SELECT bool_and(abs(s.distance - (e.embedding <=> '[1,0]')) < 1e-6) AS cosine_distances
  FROM memtx.recall_similar(pg_temp.tx('committed_read'), '[1,0]', 'm2', 5) s
  JOIN memtx.embeddings e ON e.record_id = s.record_id AND e.model = 'm2';
-- k cuts the list after the tie is ordered by id
SELECT array_agg(record_id) AS k3 FROM memtx.recall_similar(pg_temp.tx('committed_read'), '[1,0]', 'm2', 3);
SELECT count(*) AS k1 FROM memtx.recall_similar(pg_temp.tx('committed_read'), '[1,0]', 'm2', 1);
SELECT count(*) AS default_k FROM memtx.recall_similar(pg_temp.tx('committed_read'), '[1,0,0]', 'm3');
-- l2 and inner_product models: their own operators (inner product: the negative dot product)
SELECT memtx.register_embedding_model('m2_l2', 2, 'l2'), memtx.register_embedding_model('m2_ip', 2, 'inner_product');
SELECT memtx.embed(e.record_id, m, e.embedding) FROM memtx.embeddings e, unnest(ARRAY['m2_l2', 'm2_ip']) m WHERE e.model = 'm2';
SELECT m AS model, array_agg(record_id ORDER BY distance, record_id) AS nearest,
       array_agg(round(distance::numeric, 4) ORDER BY distance, record_id) AS distances
  FROM unnest(ARRAY['m2', 'm2_l2', 'm2_ip']) m,
       LATERAL memtx.recall_similar(pg_temp.tx('committed_read'), '[2,0]', m, 5)
 GROUP BY m ORDER BY m;

-- 3. the k nearest *visible*: the nearest embeddings are invisible to a (b's private records),
-- yet recall_similar fills k from the visible ones behind them
SET ROLE regress_vrecall_b;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'secret:' || g, 'memo', to_jsonb(g)) FROM generate_series(1, 6) g;
SELECT count(*) FROM memtx.commit(:tx);
RESET ROLE;
SELECT memtx.embed(id, 'm2', format('[1,%s]', 0.001 * right(entity, 1)::int)::vector)
  FROM memtx.records WHERE entity LIKE 'secret:%';
SELECT array_agg(e.record_id ORDER BY e.embedding <=> '[1,0]', e.record_id) AS nearest_of_all
  FROM memtx.embeddings e WHERE e.model = 'm2';
SELECT array_agg(record_id) AS a_nearest_3 FROM memtx.recall_similar(pg_temp.tx('committed_read'), '[1,0]', 'm2', 3);
SELECT array_agg(record_id) AS b_nearest_3
  FROM memtx.recall_similar(memtx.begin(agent => 'regress_vrecall_b', tier => 'low'), '[1,0]', 'm2', 3);

-- 4. entity_prefix is a plain prefix; valid_at keeps the records valid at that instant
SELECT quote_nullable(p) AS prefix,
       (SELECT array_agg(entity) FROM memtx.recall_similar(pg_temp.tx('committed_read'), '[1,0]', 'm2', 10, p)) AS entities
  FROM unnest(ARRAY['shape:', 'shape:_', 'shape:%', 'SHAPE:', '', 'zz', NULL]) p;
SET memtx.logical_now = '2030-01-10 00:00:00+00';   -- committed while valid
SET ROLE regress_vrecall_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'ttl:old', 'v', '1', scope => 'public', valid => '[2030-01-01 00:00+00,2030-02-01 00:00+00)') AS old \gset
SELECT record_id, state FROM memtx.commit(:tx);
RESET ROLE;
SET memtx.logical_now = '2030-06-01 00:00:00+00';
SET ROLE regress_vrecall_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'ttl:new', 'v', '2', scope => 'public', valid => '[2030-05-01 00:00+00,)') AS new \gset
SELECT record_id, state FROM memtx.commit(:tx);
SELECT memtx.embed(:old, 'm2', '[1,0]'), memtx.embed(:new, 'm2', '[1,0]');
RESET ROLE;
SELECT quote_nullable(at) AS valid_at,
       (SELECT array_agg(entity) FROM memtx.recall_similar(pg_temp.tx('committed_read'), '[1,0]', 'm2', 10, 'ttl:', valid_at => at)) AS entities
  FROM unnest(ARRAY['2030-01-15 00:00+00', '2030-03-01 00:00+00', '2030-06-01 00:00+00', NULL]::timestamptz[]) at;

-- 5. errors: k outside 1..1000 is 22003; NULLs 22004; an unknown model 42704; a vector of other
-- dimensions, or the zero vector of a cosine model, 22023; the transaction checks of memtx.read
SELECT pg_temp.tx('committed_read') AS etx \gset
SELECT count(*) AS k1000 FROM memtx.recall_similar(:etx, '[1,0]', 'm2', 1000);
SELECT count(*) AS l2_zero_query FROM memtx.recall_similar(:etx, '[0,0]', 'm2_l2');
SELECT count(*) AS read_set_before FROM memtx.read_set \gset
SELECT k, pg_temp.fails(format('SELECT * FROM memtx.recall_similar(%s, %L, %L, %s)', :etx, '[1,0]', 'm2', k))
  FROM unnest(ARRAY[0, -1, 1001, 2147483647]) k;
SELECT pg_temp.fails(format('SELECT * FROM memtx.recall_similar(NULL, %L, %L)', '[1,0]', 'm2'));
SELECT pg_temp.fails(format('SELECT * FROM memtx.recall_similar(%s, NULL, %L)', :etx, 'm2'));
SELECT pg_temp.fails(format('SELECT * FROM memtx.recall_similar(%s, %L, NULL)', :etx, '[1,0]'));
SELECT pg_temp.fails(format('SELECT * FROM memtx.recall_similar(%s, %L, %L, NULL)', :etx, '[1,0]', 'm2'));
SELECT pg_temp.fails(format('SELECT * FROM memtx.recall_similar(%s, %L, %L)', :etx, '[1,0]', 'nope'));
SELECT pg_temp.fails(format('SELECT * FROM memtx.recall_similar(%s, %L, %L)', :etx, '[1,0,0]', 'm2'));
SELECT pg_temp.fails(format('SELECT * FROM memtx.recall_similar(%s, %L, %L)', :etx, '[0,0]', 'm2'));
SELECT pg_temp.fails(format('SELECT * FROM memtx.recall_similar(%s, %L, %L, query => %L)', :etx, '[1,0]', 'm2', repeat('refund ', 700000)));
SELECT pg_temp.fails(format('SELECT * FROM memtx.recall_similar(999999, %L, %L)', '[1,0]', 'm2'));
SELECT count(*) FROM memtx.abort(:etx);
SELECT pg_temp.fails(format('SELECT * FROM memtx.recall_similar(%s, %L, %L)', :etx, '[1,0]', 'm2'));
-- only the transaction's agent (or a harness) may recall through it
SELECT pg_temp.tx('committed_read') AS atx \gset
SET ROLE regress_vrecall_b;
SELECT pg_temp.fails(format('SELECT * FROM memtx.recall_similar(%s, %L, %L)', :atx, '[1,0]', 'm2'));
RESET ROLE;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.fails(format('SELECT * FROM memtx.recall_similar(%s, %L, %L)', :atx, '[1,0]', 'm2'));
ROLLBACK;
SELECT count(*) - :read_set_before AS read_set_rows_of_failed_calls FROM memtx.read_set;

-- 6. the read set: exactly the returned rows join it, and flow control covers them
SET ROLE regress_vrecall_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'invoice:1', 'status', '"disputed"') AS private_record \gset
SELECT record_id, state FROM memtx.commit(:tx);
SELECT memtx.embed(:private_record, 'm2', '[-1,-1]');
SELECT memtx.begin() AS tx \gset
SELECT array_agg(record_id) AS recalled FROM memtx.recall_similar(:tx, '[-1,-1]', 'm2', 2);
SELECT array_agg(record_id ORDER BY record_id) AS read_set FROM memtx.read_set WHERE tx_id = :tx;
-- a recalled private value transcribed into a public record is laundering (no declared parent)
SELECT memtx.stage(:tx, 'digest', 'invoices', '"invoice 1 disputed"', scope => 'public') AS copy;
SELECT record_id, state, reason FROM memtx.commit(:tx);
-- a recall whose SQL transaction rolls back still counts (the durable read set)
SELECT memtx.begin() AS tx \gset
BEGIN;
SELECT record_id FROM memtx.recall_similar(:tx, '[-1,-1]', 'm2', 1);
ROLLBACK;
SELECT memtx.stage(:tx, 'digest', 'invoices2', '"invoice 1 disputed"', scope => 'public') AS copy;
SELECT record_id, state, reason FROM memtx.commit(:tx);
-- ... and so does one in a READ ONLY transaction, which writes nothing (no xid)
SELECT memtx.begin() AS tx \gset
BEGIN READ ONLY;
SELECT record_id FROM memtx.recall_similar(:tx, '[-1,-1]', 'm2', 1);
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
COMMIT;
SELECT count(*) AS read_set_rows FROM memtx.read_set WHERE tx_id = :tx;
SELECT memtx.stage(:tx, 'digest', 'invoices3', '"invoice 1 disputed"', scope => 'public') AS copy;
SELECT record_id, state, reason FROM memtx.commit(:tx);
RESET ROLE;

-- 7. served by the model's HNSW index, never by a scan of the store.  The generic plan of the
-- query recall_similar runs (vector.c) walks the index in distance order and reaches each
-- record by its key ...
SET plan_cache_mode = force_generic_plan;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_seqscan = off; SET enable_sort = off;
PREPARE similar_query(vector, text, text, timestamptz) AS
    SELECT r.*, (e.embedding::vector(2)) <=> $1 AS recall_distance
      FROM memtx.embeddings e
     CROSS JOIN LATERAL (SELECT x.* FROM memtx.records x WHERE x.id = e.record_id OFFSET 0) r
     WHERE e.model = 'm2' AND e.namespace = $2 AND r.namespace = e.namespace
       AND ($3 IS NULL OR starts_with(r.entity, $3)) AND ($4 IS NULL OR r.valid @> $4)
     ORDER BY (e.embedding::vector(2)) <=> $1;
EXPLAIN (COSTS OFF) EXECUTE similar_query('[1,0]', 'default', NULL, NULL);
DEALLOCATE similar_query;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_seqscan; RESET enable_sort;
RESET plan_cache_mode;
-- ... and a call counts one scan of that index and no sequential scan of records or embeddings
SELECT pg_temp.tx('verified_read') AS vtx \gset
SELECT pg_stat_force_next_flush();
SELECT idx_scan AS idx_before FROM pg_stat_user_indexes WHERE indexrelname = memtx.embedding_index_name('m2') \gset
SELECT sum(seq_scan) AS seq_before FROM pg_stat_user_tables WHERE relid IN ('memtx.records'::regclass, 'memtx.embeddings'::regclass) \gset
SELECT count(*), pg_stat_force_next_flush() FROM memtx.recall_similar(:vtx, '[1,0]', 'm2', 3);
SELECT pg_stat_clear_snapshot();
SELECT idx_scan - :idx_before AS hnsw_index_scans FROM pg_stat_user_indexes WHERE indexrelname = memtx.embedding_index_name('m2');
SELECT sum(seq_scan) - :seq_before AS seq_scans FROM pg_stat_user_tables WHERE relid IN ('memtx.records'::regclass, 'memtx.embeddings'::regclass);

-- 8. 90% of the embeddings invisible: k visible rows all the same.  200 records of model m4,
-- one in ten a's, the rest b's private ones.
SELECT memtx.register_embedding_model('m4', 4);
SELECT memtx.begin(agent => 'regress_vrecall_a', tier => 'low') AS txa \gset
SELECT memtx.begin(agent => 'regress_vrecall_b', tier => 'low') AS txb \gset
SET ROLE regress_vrecall_a;
SELECT count(*) FROM (SELECT memtx.embed(memtx.stage(:txa, 'pt:' || g, 'v', to_jsonb(g)), 'm4',
                                         format('[%s,%s,%s,%s]', sin(g), cos(g), sin(2 * g), cos(3 * g))::vector)
                        FROM generate_series(1, 200) g WHERE g % 10 = 0) s;
SELECT count(*) FROM memtx.commit(:txa);
SET ROLE regress_vrecall_b;
SELECT count(*) FROM (SELECT memtx.embed(memtx.stage(:txb, 'pt:' || g, 'v', to_jsonb(g)), 'm4',
                                         format('[%s,%s,%s,%s]', sin(g), cos(g), sin(2 * g), cos(3 * g))::vector)
                        FROM generate_series(1, 200) g WHERE g % 10 <> 0) s;
SELECT count(*) FROM memtx.commit(:txb);
RESET ROLE;
CREATE TEMP TABLE q4 AS SELECT '[0.3,0.9,-0.2,0.1]'::vector AS v;
-- the exact 10 nearest of a's records
CREATE TEMP TABLE exact_a AS
    SELECT e.record_id FROM memtx.embeddings e JOIN memtx.records r ON r.id = e.record_id, q4
     WHERE e.model = 'm4' AND r.owner = 'regress_vrecall_a' ORDER BY e.embedding <=> q4.v, e.record_id LIMIT 10;
-- pgvector alone, filtering after the index's ef_search candidates, finds fewer than 10
SET hnsw.ef_search = 10;
SET enable_seqscan = off; SET enable_sort = off;
SELECT count(*) < 10 AS post_filtered_fewer
  FROM (SELECT e.record_id FROM memtx.embeddings e JOIN memtx.records r ON r.id = e.record_id
         WHERE e.model = 'm4' AND r.owner = 'regress_vrecall_a'
         ORDER BY e.embedding::vector(4) <=> (SELECT v FROM q4) LIMIT 10) x;
RESET enable_seqscan; RESET enable_sort;
-- recall_similar scans the index on (iteratively) until 10 of a's records are found: all
-- visible, ordered by distance, at pgvector's exact distances
CREATE TEMP TABLE got AS SELECT s.* FROM q4, memtx.recall_similar(pg_temp.tx('committed_read'), q4.v, 'm4', 10) s;
SELECT count(*) AS rows, bool_and(r.owner = 'regress_vrecall_a') AS all_visible
  FROM got JOIN memtx.records r ON r.id = got.record_id;
SELECT bool_and(abs(got.distance - (e.embedding <=> q4.v)) < 1e-6) AS exact_distances
  FROM got JOIN memtx.embeddings e ON e.record_id = got.record_id AND e.model = 'm4', q4;
SELECT array_agg(record_id) = array_agg(record_id ORDER BY distance, record_id) AS ordered FROM got;
-- when the index gives out first (hnsw.max_scan_tuples reached, here after its first
-- candidates), the namespace's embeddings of the model are searched exactly: the exact answer
SET hnsw.max_scan_tuples = 1;
SELECT (SELECT array_agg(record_id) FROM q4, memtx.recall_similar(pg_temp.tx('committed_read'), q4.v, 'm4', 10))
     = (SELECT array_agg(record_id) FROM exact_a) AS exact_after_the_index;
-- the same holds where a sees fewer than k: every visible embedded record, nearest first
SELECT count(*) AS all_of_a FROM q4, memtx.recall_similar(pg_temp.tx('committed_read'), q4.v, 'm4', 1000);
RESET hnsw.max_scan_tuples;
RESET hnsw.ef_search;

DROP FUNCTION pg_temp.similar(memtx.isolation);
DROP FUNCTION pg_temp.read_embedded(memtx.isolation);
DROP FUNCTION pg_temp.tx(memtx.isolation);
SET client_min_messages = warning;
DROP EXTENSION memtx CASCADE;
RESET client_min_messages;
DROP ROLE regress_vrecall_a;
DROP ROLE regress_vrecall_b;
