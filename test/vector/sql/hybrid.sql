-- memtx.recall_similar with a text query (SPEC §19): the vector ranking and memtx.recall's
-- ranking (§14), each over the visible records, fused by reciprocal rank: score
-- Σ 1/(60 + position), positions from 1 in each list, a missing list contributing nothing;
-- rank that score descending, then id; distance NULL for rows only the text matched.
\i test/vector/sql/include/prelude.psql
CREATE ROLE regress_vhybrid_a;
CREATE ROLE regress_vhybrid_b;
SELECT memtx.register_embedding_model('m2', 2, 'l2');
SET memtx.logical_now = '2030-06-01 00:00:00+00';
CREATE FUNCTION pg_temp.tx() RETURNS bigint LANGUAGE sql AS $$
    SELECT memtx.begin(agent => 'regress_vhybrid_a', isolation => 'committed_read') $$;
-- the fusion computed from the two lists as the functions return them
CREATE FUNCTION pg_temp.expected(q vector, query text, k integer, prefix text DEFAULT NULL)
RETURNS TABLE (record_id bigint, rank real, from_vector boolean) LANGUAGE sql AS $$
    WITH v AS (SELECT s.record_id, s.pos FROM memtx.recall_similar(pg_temp.tx(), q, 'm2', k, prefix)
                                              WITH ORDINALITY s(record_id, e, a, val, d, r, pos)),
         t AS (SELECT s.record_id, s.pos FROM memtx.recall(pg_temp.tx(), query, k, prefix)
                                              WITH ORDINALITY s(record_id, e, a, val, r, pos)),
         f AS (SELECT coalesce(v.record_id, t.record_id) AS record_id,
                      (coalesce(1.0 / (60 + v.pos), 0) + coalesce(1.0 / (60 + t.pos), 0))::real AS rank,
                      v.record_id IS NOT NULL AS from_vector
                 FROM v FULL JOIN t ON t.record_id = v.record_id)
    SELECT f.record_id, f.rank, f.from_vector FROM f ORDER BY f.rank DESC, f.record_id LIMIT k $$;

-- a's notes: words and vectors that agree for some, disagree for others; b's private note
-- matches both the words and the vector and must never appear
SET ROLE regress_vhybrid_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, e, 'note', to_jsonb(v), scope => 'public')
  FROM (VALUES ('n:1', 'refund for the broken lamp'), ('n:2', 'lamp shipped'), ('n:3', 'refund approved'),
               ('n:4', 'weather report'), ('n:5', 'refund refund refund'), ('n:6', 'invoice sent'),
               ('n:7', 'broken lamp returned')) x(e, v);
SELECT count(*) FROM memtx.commit(:tx);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_vhybrid_b', tier => 'low') AS txb \gset
SET ROLE regress_vhybrid_b;
SELECT memtx.stage(:txb, 'n:8', 'note', '"refund lamp secret"') AS secret \gset
SELECT count(*) FROM memtx.commit(:txb);
RESET ROLE;
SELECT memtx.embed(r.id, 'm2', v.vec::vector)
  FROM memtx.records r JOIN (VALUES ('n:1', '[1,0]'), ('n:2', '[0.9,0.1]'), ('n:4', '[0.8,0.3]'),
                                   ('n:6', '[0.1,1]'), ('n:7', '[0.95,0]'), ('n:8', '[1,0]')) v(e, vec) ON v.e = r.entity;
-- (n:3 and n:5 have no embedding: only the text can find them)

-- the two lists, then the fused one
SELECT record_id, entity, round(distance::numeric, 4) AS distance, rank FROM memtx.recall_similar(pg_temp.tx(), '[1,0]', 'm2', 4);
SELECT record_id, entity, round(rank::numeric, 4) AS text_rank FROM memtx.recall(pg_temp.tx(), 'refund or lamp', 4);
SELECT record_id, entity, value, round(distance::numeric, 4) AS distance, rank
  FROM memtx.recall_similar(pg_temp.tx(), '[1,0]', 'm2', 4, query => 'refund or lamp');
-- exactly the fusion of the two lists, for several k, queries and prefixes
SELECT k, q, p,
       (SELECT array_agg(s.record_id) FROM memtx.recall_similar(pg_temp.tx(), '[1,0]', 'm2', k, p, q) s)
         = (SELECT array_agg(x.record_id) FROM pg_temp.expected('[1,0]', q, k, p) x) AS same_rows,
       (SELECT array_agg(s.rank) FROM memtx.recall_similar(pg_temp.tx(), '[1,0]', 'm2', k, p, q) s)
         = (SELECT array_agg(x.rank) FROM pg_temp.expected('[1,0]', q, k, p) x) AS same_ranks,
       (SELECT bool_and((s.distance IS NULL) = NOT x.from_vector)
          FROM memtx.recall_similar(pg_temp.tx(), '[1,0]', 'm2', k, p, q) s
          JOIN pg_temp.expected('[1,0]', q, k, p) x ON x.record_id = s.record_id) AS distance_null_for_text_only
  FROM unnest(ARRAY[1, 2, 3, 8]) k, unnest(ARRAY['refund', 'refund or lamp', 'broken lamp', 'weather']) q,
       unnest(ARRAY[NULL, 'n:']) p
 ORDER BY k, q, p;
-- b's secret is in neither list
SELECT count(*) AS secret_returned FROM memtx.recall_similar(pg_temp.tx(), '[1,0]', 'm2', 1000, query => 'refund lamp secret')
 WHERE record_id = :secret;
-- a query of stop words only (or empty) matches nothing: the vector list alone
SELECT (SELECT array_agg(record_id) FROM memtx.recall_similar(pg_temp.tx(), '[1,0]', 'm2', 5, query => q))
     = (SELECT array_agg(record_id) FROM memtx.recall_similar(pg_temp.tx(), '[1,0]', 'm2', 5)) AS vector_list_alone
  FROM unnest(ARRAY['', 'the and of', 'zebra']) q;
-- valid_at filters both lists
SET memtx.logical_now = '2030-01-10 00:00:00+00';   -- committed while valid
SET ROLE regress_vhybrid_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'n:9', 'note', '"refund lamp expired"', scope => 'public', valid => '[2030-01-01 00:00+00,2030-02-01 00:00+00)') AS expired \gset
SELECT record_id, state FROM memtx.commit(:tx);
SELECT memtx.embed(:expired, 'm2', '[1,0]');
RESET ROLE;
SET memtx.logical_now = '2030-06-01 00:00:00+00';
SELECT at, (SELECT bool_or(record_id = :expired)
              FROM memtx.recall_similar(pg_temp.tx(), '[1,0]', 'm2', 10, query => 'expired', valid_at => at)) AS expired_returned
  FROM unnest(ARRAY['2030-01-15 00:00+00', '2030-06-01 00:00+00']::timestamptz[]) at;
-- every returned row joins the read set, those only the text found included
SELECT pg_temp.tx() AS rtx \gset
SELECT array_agg(record_id ORDER BY record_id) AS returned
  FROM memtx.recall_similar(:rtx, '[0,1]', 'm2', 2, query => 'refund approved');
SELECT array_agg(record_id ORDER BY record_id) AS read_set FROM memtx.read_set WHERE tx_id = :rtx;

DROP FUNCTION pg_temp.expected(vector, text, integer, text);
DROP FUNCTION pg_temp.tx();
SET client_min_messages = warning;
DROP EXTENSION memtx CASCADE;
RESET client_min_messages;
DROP ROLE regress_vhybrid_a;
DROP ROLE regress_vhybrid_b;
