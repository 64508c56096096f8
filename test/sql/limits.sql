-- Limits (SPEC §16): no call exhausts the shared lock table; memtx.max_staged.
\i test/sql/include/prelude.psql
-- the advisory locks this backend holds, by kind (field2 'mt' << 16 | kind) and mode
CREATE VIEW pg_temp.memtx_locks AS
    SELECT CASE classid::bigint & 65535 WHEN 1 THEN 'slot' WHEN 2 THEN 'namespace' WHEN 3 THEN 'effect key'
                              WHEN 4 THEN 'slot intent' WHEN 5 THEN 'writer' END AS kind, mode, count(*) AS n
      FROM pg_locks
     WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = 3
       AND classid::bigint >> 16 = 28020   -- 'mt'
     GROUP BY 1, 2 ORDER BY 1, 2;
-- every lock this backend holds, in the shared table or in its fast path
CREATE VIEW pg_temp.all_locks AS
    SELECT count(*) AS n FROM pg_locks WHERE pid = pg_backend_pid();

-- 16 distinct slots (some staged twice): one slot lock each, after the slot-intent lock shared
SELECT memtx.begin() AS tx \gset
SELECT count(memtx.stage(:tx, 'small' || (g % 16), 'a', to_jsonb(g))) FROM generate_series(1, 20) g;
BEGIN;
SELECT state, count(*) FROM memtx.commit(:tx) GROUP BY state ORDER BY state;
SELECT * FROM pg_temp.memtx_locks;
COMMIT;

-- 1,000 distinct slots, more than max_locks_per_transaction (256 on the test cluster): the commit
-- succeeds holding the slot-intent lock exclusive and no slot lock
SELECT memtx.begin(tier => 'external_action') AS tx \gset
SELECT count(memtx.stage(:tx, 'big' || g, 'a', to_jsonb(g))) FROM generate_series(1, 1000) g;
BEGIN;
SELECT state, count(*) FROM memtx.commit(:tx) GROUP BY state ORDER BY state;
SELECT * FROM pg_temp.memtx_locks;
SELECT n < 64 AS bounded FROM pg_temp.all_locks;
COMMIT;
-- 17 distinct slots already escalate
SELECT memtx.begin() AS tx \gset
SELECT count(memtx.stage(:tx, 'mid' || g, 'a', to_jsonb(g))) FROM generate_series(1, 17) g;
BEGIN;
SELECT state, count(*) FROM memtx.commit(:tx) GROUP BY state ORDER BY state;
SELECT * FROM pg_temp.memtx_locks;
COMMIT;

-- the other calls that touch many rows take no lock per row: stage with 1,000 parents,
-- act with 1,000 inputs, a cascade over 1,000 descendants
SELECT memtx.register_tool('notify_all', true, 'unnotify_all');
SELECT memtx.begin(tier => 'external_action') AS tx \gset
BEGIN;
SELECT memtx.stage(:tx, 'digest', 'a', '1', kind => 'summary',
                   derived_from => ARRAY(SELECT id FROM memtx.records WHERE entity LIKE 'big%')) AS digest \gset
SELECT n < 64 AS bounded FROM pg_temp.all_locks;
COMMIT;
SELECT state FROM memtx.commit(:tx);
BEGIN;
SELECT allowed, reason FROM memtx.act(:tx, 'notify_all', '{}',
                   derived_from => ARRAY(SELECT id FROM memtx.records WHERE entity LIKE 'big%'));
SELECT n < 64 AS bounded FROM pg_temp.all_locks;
COMMIT;
SELECT memtx.begin() AS tx \gset
SELECT count(memtx.stage(:tx, 'below' || g, 'a', '1', derived_from => ARRAY[:digest])) FROM generate_series(1, 1000) g;
SELECT state, count(*) FROM memtx.commit(:tx) GROUP BY state;
BEGIN;
SELECT action, count(*) FROM memtx.revoke(:digest) GROUP BY action ORDER BY action;
SELECT n < 64 AS bounded FROM pg_temp.all_locks;
COMMIT;

-- memtx.max_staged: superuser only
SHOW memtx.max_staged;
CREATE ROLE regress_memtx_limits;
SET ROLE regress_memtx_limits;
SELECT pg_temp.try('SET memtx.max_staged = 1000000');
RESET ROLE;
DROP ROLE regress_memtx_limits;

-- one record more than memtx.max_staged fails with 54000 and writes nothing
SET memtx.max_staged = 3;
SELECT memtx.begin() AS tx \gset
SELECT count(memtx.stage(:tx, 'm' || g, 'a', '1')) FROM generate_series(1, 3) g;
SELECT count(*) AS edges_before FROM memtx.edges \gset
SELECT pg_temp.try(format('SELECT memtx.stage(%s, %L, %L, %L, derived_from => ARRAY[%s])',
                          :tx, 'm4', 'a', '1', (SELECT min(id) FROM memtx.records WHERE tx_id = :tx)));
SELECT count(*) AS staged FROM memtx.records WHERE tx_id = :tx;
SELECT count(*) - :edges_before AS new_edges FROM memtx.edges;
-- other transactions are not affected, and the full one still commits
SELECT memtx.begin() AS other \gset
SELECT memtx.stage(:other, 'm4', 'a', '1') IS NOT NULL AS staged;
SELECT count(*) AS committed FROM memtx.commit(:tx) WHERE state = 'committed';
SELECT pg_temp.try(format('SELECT memtx.stage(%s, %L, %L, %L)', :tx, 'm5', 'a', '1'));

-- the count across SQL transactions and savepoints: a rolled-back stage does not count
SET memtx.max_staged = 4;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'n1', 'a', '1') IS NOT NULL AS staged;
SELECT memtx.stage(:tx, 'n2', 'a', '1') IS NOT NULL AS staged;
BEGIN;
SELECT memtx.stage(:tx, 'n3', 'a', '1') IS NOT NULL AS staged;
SAVEPOINT s;
SELECT memtx.stage(:tx, 'n4', 'a', '1') IS NOT NULL AS staged;
ROLLBACK TO SAVEPOINT s;
SELECT memtx.stage(:tx, 'n4b', 'a', '1') IS NOT NULL AS staged;
SELECT pg_temp.try(format('SELECT memtx.stage(%s, %L, %L, %L)', :tx, 'n5', 'a', '1'));
ROLLBACK;
-- the SQL transaction rolled back: two records, room for two more
SELECT count(*) AS staged FROM memtx.records WHERE tx_id = :tx;
SELECT count(memtx.stage(:tx, 'r' || g, 'a', '1')) FROM generate_series(1, 2) g;
SELECT pg_temp.try(format('SELECT memtx.stage(%s, %L, %L, %L)', :tx, 'r3', 'a', '1'));
SELECT entity FROM memtx.records WHERE tx_id = :tx ORDER BY staged_pos;
RESET memtx.max_staged;
DROP EXTENSION memtx CASCADE;
