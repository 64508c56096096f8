-- Distribution across nodes (SPEC §20): memtx.set_node(n) (harness, once, on an empty
-- store) moves every id sequence into node n's range, so every id the node allocates
-- carries n in the five bits above its low 48; a single server is node 0 with ids
-- unchanged; memtx.id_node and memtx.node_of are what the router routes by.
\i test/sql/include/prelude.psql
\i test/sql/include/fails.psql
CREATE ROLE regress_memtx_node_agent;
SELECT memtx.register_tool('ship_order', true, 'cancel_shipment');

-- a store that never ran set_node is node 0, and its ids are a single server's
SELECT memtx.node();
SELECT sequencename, min_value, max_value FROM pg_sequences
 WHERE schemaname = 'memtx' AND sequencename LIKE '%id_seq' ORDER BY 1;

-- bad input first: nothing changes
SELECT pg_temp.try('SELECT memtx.set_node(NULL)');
SELECT pg_temp.try('SELECT memtx.set_node(-1)');
SELECT pg_temp.try('SELECT memtx.set_node(32)');
SET ROLE regress_memtx_node_agent;
SELECT pg_temp.try('SELECT memtx.set_node(1)');
RESET ROLE;
SELECT memtx.node();

-- node 0 explicitly: the same ids, now bounded to node 0's range
SELECT memtx.set_node(0);
SELECT sequencename, min_value, max_value FROM pg_sequences
 WHERE schemaname = 'memtx' AND sequencename LIKE '%id_seq' ORDER BY 1;
SELECT memtx.begin() AS tx0 \gset
SELECT :tx0 AS first_id_on_node_0, memtx.id_node(:tx0);
SELECT count(*) AS repaired FROM memtx.abort(:tx0);

-- a store with a transaction keeps its number: another is refused, its own re-applies
SELECT pg_temp.fails('SELECT memtx.set_node(3)');
SELECT memtx.set_node(0);
SELECT memtx.node();

-- node 3, on a fresh store: every id sequence moves, the clock and receipt order stay
SET client_min_messages = warning;
DROP EXTENSION memtx CASCADE;
CREATE EXTENSION memtx;
RESET client_min_messages;
SELECT memtx.register_tool('ship_order', true, 'cancel_shipment');
SELECT memtx.set_node(3);
SELECT memtx.node();
SELECT sequencename, min_value, max_value, min_value = (3::bigint << 48) + 1 AS starts_at_node_3
  FROM pg_sequences WHERE schemaname = 'memtx' ORDER BY 1;

-- a flow writes ids of every kind: transactions, records, a tool action, its action log
-- row, the rollback log and a compensation
SET ROLE regress_memtx_node_agent;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'order:1', 'paid', 'true') AS paid \gset
SELECT state FROM memtx.commit(:tx);
SELECT allowed FROM memtx.act(:tx, 'ship_order', '{"order": 1}', ARRAY[:paid]);
SELECT kind, action FROM memtx.revoke(:paid) ORDER BY id;
RESET ROLE;
SELECT 'transactions' AS ids, array_agg(memtx.id_node(id)) AS nodes, array_agg(id & ((1::bigint << 48) - 1)) AS locals
  FROM memtx.transactions
UNION ALL SELECT 'records', array_agg(memtx.id_node(id) ORDER BY id), array_agg(id & ((1::bigint << 48) - 1) ORDER BY id)
  FROM memtx.records
UNION ALL SELECT 'action_log', array_agg(memtx.id_node(id)), array_agg(id & ((1::bigint << 48) - 1)) FROM memtx.action_log
UNION ALL SELECT 'rollback_log', array_agg(memtx.id_node(id) ORDER BY id), array_agg(id & ((1::bigint << 48) - 1) ORDER BY id)
  FROM memtx.rollback_log
UNION ALL SELECT 'compensations', array_agg(memtx.id_node(id)), array_agg(id & ((1::bigint << 48) - 1)) FROM memtx.compensations;
-- the action id act returned and the ids inside the rows carry the node too
SELECT memtx.id_node(action_id) AS action_node, memtx.id_node(tx_id) AS tx_node FROM memtx.action_log;
SELECT count(*) FROM memtx.check_invariants();

-- refused once the store has rows, and nothing moves
SELECT pg_temp.fails('SELECT memtx.set_node(1)');
SELECT memtx.node();
-- its own number re-applies the bounds (what a restored store needs) without restarting
ALTER SEQUENCE memtx.record_id_seq NO MINVALUE NO MAXVALUE;
SELECT memtx.set_node(3);
SELECT min_value = (3::bigint << 48) + 1 AS min_back, max_value = (4::bigint << 48) - 1 AS max_back,
       memtx.id_node(last_value) AS node
  FROM pg_sequences WHERE schemaname = 'memtx' AND sequencename = 'record_id_seq';
-- a sequence moved outside the range (behind the API) is found, and nothing changes
ALTER SEQUENCE memtx.compensation_id_seq NO MINVALUE;
SELECT pg_catalog.setval('memtx.compensation_id_seq', 7);
SELECT pg_temp.fails('SELECT memtx.set_node(3)');
SELECT min_value FROM pg_sequences WHERE schemaname = 'memtx' AND sequencename = 'compensation_id_seq';
SELECT pg_catalog.setval('memtx.compensation_id_seq', (3::bigint << 48) + 1);
SELECT memtx.set_node(3);

-- an exhausted range fails instead of spilling into node 4's
SELECT pg_catalog.setval('memtx.transaction_id_seq', (4::bigint << 48) - 1);
SELECT pg_temp.try('SELECT memtx.begin()');
SELECT count(*) AS transactions, bool_and(memtx.id_node(id) = 3) AS all_node_3 FROM memtx.transactions;

-- id_node: the bits above the low 48; NULL for what no node allocates
SELECT memtx.id_node(1) AS one, memtx.id_node((1::bigint << 48) - 1) AS last_of_0,
       memtx.id_node(1::bigint << 48) AS first_of_1, memtx.id_node((31::bigint << 48) + 5) AS node_31,
       memtx.id_node(0) AS zero, memtx.id_node(-5) AS negative, memtx.id_node(NULL) AS null_id;

-- node_of: SHA-256 of the UTF-8 text, first four bytes big-endian, top bit cleared.
-- These values are the definition: they must never change (a namespace would move).
SELECT ns, memtx.node_of(ns), memtx.node_of(ns) % 2 AS of_2, memtx.node_of(ns) % 4 AS of_4
  FROM unnest(ARRAY['default', 'eu', 'us', '', 'café', 'tenant:42']) ns;
SELECT memtx.node_of(NULL) IS NULL AS null_namespace;
-- computed independently of the function: the same
SELECT count(*) AS disagreements
  FROM generate_series(1, 200) i, LATERAL (SELECT 'ns-' || i AS ns) n,
       LATERAL (SELECT sha256(convert_to(n.ns, 'UTF8')) AS h) d
 WHERE memtx.node_of(n.ns) <> (((get_byte(d.h, 0) & 127)::bigint << 24) | (get_byte(d.h, 1) << 16)
                               | (get_byte(d.h, 2) << 8) | get_byte(d.h, 3));

DROP ROLE regress_memtx_node_agent;
