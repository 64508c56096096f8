-- memtx.search: memtx.recall's ranking over memtx.lookup's records.  The best k matches
-- among the active records the caller may read, ranked as recall ranks (rank descending,
-- then id), with no memtx transaction and no write of any kind; each result is what a
-- lookup of its slot shows the caller.  Served by recall's GIN index; a slot's history
-- (its superseded versions) is neither returned nor ranked.
\i test/sql/include/prelude.psql
CREATE ROLE regress_search_a;
CREATE ROLE regress_search_b;
CREATE ROLE regress_search_c;
SET memtx.logical_now = '2030-06-01 00:00:00+00';

-- every state and permission search must hide, staged by their agents
SET ROLE regress_search_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'order:1', 'status', '"refund approved"', scope => 'public');      -- 1 committed
SELECT memtx.stage(:tx, 'order:2', 'status', '"refund pending"', scope => 'public');       -- 2 superseded below
SELECT memtx.stage(:tx, 'order:3', 'status', '"refund maybe"', scope => 'public', confidence => 0.1);  -- 3 quarantined
SELECT memtx.stage(:tx, 'order:4', 'status', '"refund withdrawn"', scope => 'public');     -- 4 revoked below
SELECT memtx.stage(:tx, 'order:5', 'note', '"refund refund refund"', scope => 'public');   -- 5 ranks first
SELECT memtx.stage(:tx, 'order:6', 'note', '"refund for a alone"');                        -- 6 private to a
SELECT memtx.stage(:tx, 'order:7', 'note', '"refund shown to b"', readers => ARRAY['regress_search_b']);  -- 7
SELECT record_id, state, reason FROM memtx.commit(:tx);
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'order:2', 'status', '"refund paid"', scope => 'public');          -- 8 supersedes 2
SELECT record_id, state FROM memtx.commit(:tx);
SELECT count(*) AS revoked FROM memtx.revoke(4);
SELECT memtx.begin() AS open_tx \gset
SELECT memtx.stage(:open_tx, 'order:9', 'status', '"refund staged"', scope => 'public');   -- 9 tentative
RESET ROLE;
SELECT memtx.begin(agent => 'regress_search_a', tier => 'external_action') AS tx \gset
SET ROLE regress_search_a;
SELECT memtx.stage(:tx, 'order:10', 'status', '"refund cleared"', scope => 'public');      -- 10 action_safe
SELECT record_id, state FROM memtx.commit(:tx);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_search_a', namespace => 'shop') AS tx \gset
SET ROLE regress_search_a;
SELECT memtx.stage(:tx, 'order:1', 'status', '"refund in the shop"', scope => 'public');   -- 11 another namespace
SELECT record_id, state FROM memtx.commit(:tx);
RESET ROLE;
SELECT id, entity, attribute, state, scope, readers, namespace FROM memtx.records ORDER BY id;

-- as each role: the active records it may read, best first, then by id
SET ROLE regress_search_a;
SELECT record_id, entity, attribute, value, rank > 0 AS ranked FROM memtx.search('refund', 1000);
SET ROLE regress_search_b;
SELECT record_id FROM memtx.search('refund', 1000);
SET ROLE regress_search_c;
SELECT record_id FROM memtx.search('refund', 1000);
RESET ROLE;
-- the same ids as lookup of every slot shows the role, matched as recall matches
SET ROLE regress_search_b;
SELECT (SELECT array_agg(record_id ORDER BY record_id) FROM memtx.search('refund', 1000))
     = (SELECT array_agg(l.id ORDER BY l.id)
          FROM (SELECT DISTINCT entity FROM memtx.search('refund OR paid OR cleared', 1000)
                UNION SELECT 'order:' || i FROM generate_series(1, 10) i) e,
               LATERAL memtx.lookup(e.entity) l
         WHERE memtx.recall_document(l.entity, l.attribute, l.value) @@ websearch_to_tsquery('english', 'refund'))
       AS same_as_lookup;
RESET ROLE;
-- k: the best k, ties by id; websearch syntax; a prefix; no match, stop words, empty
SET ROLE regress_search_a;
SELECT record_id FROM memtx.search('refund', 2);
SELECT record_id FROM memtx.search('"refund paid" or cleared');
SELECT record_id FROM memtx.search('refund', entity_prefix => 'order:1');
SELECT record_id FROM memtx.search('refund', entity_prefix => 'order:1_');
SELECT count(*) FROM memtx.search('zebra');
SELECT count(*) FROM memtx.search('the');
SELECT count(*) FROM memtx.search('');
-- another namespace answers its members only (SPEC §17), one error whether it exists or not
SELECT pg_temp.try($$SELECT memtx.search('refund', namespace => 'shop')$$);
SELECT pg_temp.try($$SELECT memtx.search('refund', namespace => 'nowhere')$$);
RESET ROLE;
SELECT memtx.grant_namespace('shop', 'regress_search_a');
SET ROLE regress_search_a;
SELECT record_id, entity FROM memtx.search('refund', namespace => 'shop');
RESET ROLE;
-- the open transaction's record appears once it commits
SELECT record_id, state FROM memtx.commit(:open_tx);
SET ROLE regress_search_a;
SELECT record_id FROM memtx.search('staged');
RESET ROLE;

-- errors name the argument: query, k, namespace; k in 1..1000; a query too long
SELECT pg_temp.try('SELECT * FROM memtx.search(NULL)');
SELECT pg_temp.try('SELECT * FROM memtx.search(''refund'', NULL)');
SELECT pg_temp.try('SELECT * FROM memtx.search(''refund'', namespace => NULL)');
SELECT pg_temp.try('SELECT * FROM memtx.search(''refund'', 0)');
SELECT pg_temp.try('SELECT * FROM memtx.search(''refund'', 1001)');
SELECT pg_temp.try(format('SELECT * FROM memtx.search(%L)', repeat('refund ', 10000)));

-- no write of any kind: no xid, no sequence value, no read set, no memtx transaction, no lease
SELECT (SELECT last_value FROM memtx.clock) AS clock_before,
       (SELECT last_value FROM memtx.transaction_id_seq) AS tx_seq_before,
       (SELECT count(*) FROM memtx.read_set) AS read_set_before,
       (SELECT max(lease_expires_at) FROM memtx.transactions) AS lease_before \gset
SET ROLE regress_search_a;
BEGIN READ ONLY;
SELECT count(*) FROM memtx.search('refund');
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM memtx.search('refund');
COMMIT;
RESET ROLE;
SELECT (SELECT last_value FROM memtx.clock) = :clock_before AS clock_unchanged,
       (SELECT last_value FROM memtx.transaction_id_seq) = :tx_seq_before AS no_transaction,
       (SELECT count(*) FROM memtx.read_set) = :read_set_before AS no_read_set,
       (SELECT max(lease_expires_at) FROM memtx.transactions) = :'lease_before' AS no_lease;

-- valid_at (SPEC §18): only the records whose validity contains the instant
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'cache:1', 'quote', '"quote amber"', scope => 'public', valid => '[2030-05-31 00:00+00,2030-06-01 01:00+00)');
SELECT memtx.stage(:tx, 'cache:1', 'rate', '"rate amber"', scope => 'public', valid => '[2030-06-01 00:00+00,)');
SELECT record_id, state FROM memtx.commit(:tx);
SELECT attribute FROM memtx.search('amber', valid_at => '2030-05-31 23:00+00');
SELECT attribute FROM memtx.search('amber', valid_at => '2030-06-01 01:00+00');
SELECT attribute FROM memtx.search('amber') ORDER BY 1;

-- served by the index, not by the store or a slot's history: a slot updated 200 times
-- among 2000 other records; one search reads the one active match (rows read =
-- sequential tuples read + tuples fetched through indexes of memtx.records)
SELECT memtx.begin() AS bulk \gset
SELECT count(*) AS staged FROM memtx.stage_many(:bulk, (SELECT jsonb_agg(jsonb_build_object(
    'entity', 'bulk:' || i, 'attribute', 'a', 'value', 'filler ' || i, 'scope', 'public')) FROM generate_series(1, 2000) i));
SELECT count(*) AS committed FROM memtx.commit(:bulk) WHERE state = 'committed';
SELECT count(*) AS committed FROM generate_series(1, 200) i,
       LATERAL memtx.propose('hist:1', 'a', to_jsonb('walnut ' || i), scope => 'public') p WHERE p.state = 'committed';
ANALYZE memtx.records;
CREATE FUNCTION pg_temp.reads() RETURNS bigint LANGUAGE sql AS $$
    SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)
      FROM pg_stat_user_tables WHERE schemaname = 'memtx' AND relname = 'records' $$;
SELECT pg_stat_force_next_flush();
SELECT pg_temp.reads() AS before \gset
SELECT value, pg_stat_force_next_flush() FROM memtx.search('walnut', 10);
SELECT pg_temp.reads() - :before <= 10 AS search_reads_at_most_10_rows;

DROP EXTENSION memtx CASCADE;
DROP ROLE regress_search_a;
DROP ROLE regress_search_b;
DROP ROLE regress_search_c;
