-- A slot's history is not what a call for its present reads: a lookup by slot (how a
-- store's get and a proposer's head read) reads the slot's active records through the
-- single-truth index, never the versions its updates superseded.  Found here: with
-- the statistics of a store whose slots have histories, the planner's generic plan
-- preferred the slot index, which holds every version — 300 rows read for one lookup
-- of a slot updated 300 times (6,000 for one updated 5,000 times).  Rows read =
-- sequential tuples read + tuples fetched through indexes of memtx.records.
\i test/sql/include/prelude.psql
-- 1000 slots, each written in four batches: three versions superseded, one active
DO $$
DECLARE
    tx bigint;
BEGIN
    FOR n IN 1..4 LOOP
        tx := memtx.begin();
        PERFORM memtx.stage_many(tx, (SELECT jsonb_agg(jsonb_build_object(
            'entity', 'bulk:' || i, 'attribute', 'a', 'value', i * 10 + n, 'scope', 'public'))
                                        FROM generate_series(1, 1000) i));
        PERFORM memtx.commit(tx);
    END LOOP;
END $$;
SELECT state, count(*) FROM memtx.records WHERE entity LIKE 'bulk:%' GROUP BY state ORDER BY state;
-- one slot updated 300 times, each value superseding the one before
SELECT count(*) AS committed FROM generate_series(1, 300) i,
       LATERAL memtx.propose('hist:1', 'a', to_jsonb(i), scope => 'public') p WHERE p.state = 'committed';
SELECT state, count(*) FROM memtx.records WHERE entity = 'hist:1' GROUP BY state ORDER BY state;
ANALYZE memtx.records;

-- a new session, whose plans are made with these statistics
\c
CREATE FUNCTION pg_temp.reads() RETURNS bigint LANGUAGE sql AS $$
    SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)
      FROM pg_stat_user_tables WHERE schemaname = 'memtx' AND relname = 'records' $$;
SELECT pg_stat_force_next_flush();
SELECT pg_temp.reads() AS before \gset
SELECT value, pg_stat_force_next_flush() FROM memtx.lookup('hist:1', 'a');
SELECT pg_temp.reads() - :before <= 10 AS lookup_reads_at_most_10_rows;
-- and again, once the plan is cached
SELECT pg_temp.reads() AS before \gset
SELECT value, pg_stat_force_next_flush() FROM memtx.lookup('hist:1', 'a', valid_at => now());
SELECT pg_temp.reads() - :before <= 10 AS lookup_reads_at_most_10_rows;

-- the records under an entity prefix, read as an agent under row-level security (how a
-- store lists a namespace of its items): starts_with is leakproof, so it bounds the
-- index range before the policy runs; the 300 versions of hist:1 are read, not the 4000
-- records of the 1000 other slots
CREATE ROLE regress_hist_agent;
SET ROLE regress_hist_agent;
SELECT pg_temp.reads() AS before \gset
SELECT count(*), pg_stat_force_next_flush() FROM memtx.records r
 WHERE r.namespace = 'default' AND starts_with(r.entity, 'hist:') AND memtx.is_active(r.state);
SELECT pg_temp.reads() - :before <= 310 AS prefix_reads_its_own_records;
RESET ROLE;
DROP ROLE regress_hist_agent;
