-- The shared lock table (SPEC §17 "No tenant can starve another"): however many memtx
-- calls run in one SQL transaction (a bulk import in psycopg's default non-autocommit mode),
-- the advisory locks memtx holds stay bounded.  Per namespace a backend holds at most 16
-- slot, 16 proposal and 16 effect-key locks; a call that would hold more takes the kind's
-- intent lock exclusive instead, which covers every later call of the SQL transaction.
\i test/sql/include/prelude.psql
SELECT memtx.register_tool('note', true);
-- memtx's advisory locks of this backend, by kind (locks.c: field2, classid here, is 'mt' << 16 | kind)
CREATE FUNCTION pg_temp.memtx_locks() RETURNS TABLE (kind text, mode text, n bigint) LANGUAGE sql AS $$
    SELECT CASE classid::bigint & 65535 WHEN 1 THEN 'slot' WHEN 2 THEN 'namespace' WHEN 3 THEN 'effect key'
                WHEN 4 THEN 'slot intent' WHEN 5 THEN 'writer' WHEN 6 THEN 'proposal'
                WHEN 7 THEN 'proposal intent' WHEN 8 THEN 'effect-key intent' END, mode, count(*)
      FROM pg_locks
     WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND objsubid = 3 AND classid::bigint >> 16 = 28020
     GROUP BY 1, 2 ORDER BY 1, 2 $$;

-- 1. 500 proposals on distinct slots with distinct proposal ids, in one SQL transaction
BEGIN;
SELECT count(*) AS proposed FROM generate_series(1, 500) i,
       LATERAL memtx.propose('p:' || i, 'a', to_jsonb(i), proposal => 'prop-' || i) p
 WHERE p.state = 'committed';
SELECT * FROM pg_temp.memtx_locks();
SELECT sum(n) AS advisory_locks FROM pg_temp.memtx_locks();
COMMIT;

-- 2. below the bound nothing escalates: 16 slots keep their own locks
BEGIN;
SELECT count(*) FROM generate_series(1, 16) i, LATERAL memtx.propose('q:' || i, 'a', to_jsonb(i));
SELECT * FROM pg_temp.memtx_locks();
-- the 17th escalates, and later calls take no slot lock
SELECT state FROM memtx.propose('q:17', 'a', '17');
SELECT state FROM memtx.propose('q:18', 'a', '18');
SELECT * FROM pg_temp.memtx_locks();
COMMIT;

-- 3. acts with 300 effect keys in one SQL transaction
SELECT memtx.begin() AS tx \gset
BEGIN;
SELECT count(*) AS allowed FROM generate_series(1, 300) i,
       LATERAL memtx.act(:tx, 'note', jsonb_build_object('n', i), effect_key => 'k-' || i) a
 WHERE a.allowed;
SELECT * FROM pg_temp.memtx_locks();
-- an effect key repeated after escalation still returns its decision
SELECT allowed, repeated FROM memtx.act(:tx, 'note', '{"n": 7}', effect_key => 'k-7');
COMMIT;

-- 4. stage_many of 200 records with proposal ids, then commit, in one SQL transaction
SELECT memtx.begin() AS tx \gset
BEGIN;
SELECT count(*) FROM memtx.stage_many(:tx, (SELECT jsonb_agg(jsonb_build_object(
    'entity', 'm:' || i, 'attribute', 'a', 'value', i, 'proposal', 'many-' || i)) FROM generate_series(1, 200) i));
SELECT count(*) FROM memtx.commit(:tx);
SELECT sum(n) AS advisory_locks FROM pg_temp.memtx_locks();
COMMIT;
SELECT * FROM memtx.check_invariants();
DROP EXTENSION memtx CASCADE;
