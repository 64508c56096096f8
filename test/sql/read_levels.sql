-- memtx.read isolation levels: the exposure set of each of the five levels.
\i test/sql/include/prelude.psql
-- ids a fresh transaction at the given level sees in the namespace
CREATE FUNCTION pg_temp.sees(level memtx.isolation) RETURNS bigint[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(r.id ORDER BY r.id), '{}')
      FROM memtx.read(memtx.begin(isolation => level)) r $$;
SELECT memtx.register_source('ledger', 1.0);
SET memtx.logical_now = '2030-06-01 00:00:00+00';

-- group a: a chain a1 <- a2 <- a3; group b: b1 <- b2; group c: c1 <- c2; d2 plain
SELECT memtx.begin('medium') AS tx;   -- 1
SELECT memtx.stage(1, 'a', 'x', '1');                                  -- 1 a1
SELECT memtx.stage(1, 'a2', 'x', '2', derived_from => ARRAY[1]);       -- 2 a2
SELECT memtx.stage(1, 'a3', 'x', '3', derived_from => ARRAY[2]);       -- 3 a3
SELECT memtx.stage(1, 'b', 'x', '4');                                  -- 4 b1
SELECT memtx.stage(1, 'b2', 'x', '5', derived_from => ARRAY[4]);       -- 5 b2
SELECT memtx.stage(1, 'c', 'x', '6');                                  -- 6 c1
SELECT memtx.stage(1, 'c2', 'x', '7', derived_from => ARRAY[6]);       -- 7 c2
SELECT memtx.stage(1, 'd2', 'x', '8', valid => '[2030-01-01 00:00+00, 2031-01-01 00:00+00)');  -- 8 d2
SELECT * FROM memtx.commit(1);
-- action_safe records come from the external_action tier
SELECT memtx.begin('external_action') AS tx;   -- 2
SELECT memtx.stage(2, 'd', 'x', '9');                                  -- 9 d1
SELECT memtx.stage(2, 'd3', 'x', '10', derived_from => ARRAY[9]);      -- 10 d3
SELECT * FROM memtx.commit(2);

-- everything active and stable: every level but action_safe_read sees all
SELECT l AS level, pg_temp.sees(l) FROM unnest(enum_range(NULL::memtx.isolation)) l;

-- verified_read: a1 superseded, so a2 and a3 (committed) lose an active ancestor
SELECT memtx.begin('medium') AS tx;   -- 8
SELECT memtx.stage(8, 'a', 'x', '100', source => 'ledger');           -- 11 a1'
SELECT * FROM memtx.commit(8);
-- causally_stable_read: a tentative rival on b1's slot is in flight (hides b1, and b2 through
-- its ancestor); a tentative record with the same value on b2's slot, or a rival whose validity
-- does not overlap, is no rival
SELECT memtx.begin('medium') AS tx;   -- 9
SELECT memtx.stage(9, 'b', 'x', '44');                                 -- 12 rival of b1
SELECT memtx.stage(9, 'b2', 'x', '5');                                 -- 13 same value as b2
SELECT memtx.stage(9, 'd2', 'x', '88', valid => '[2000-01-01 00:00+00, 2000-01-02 00:00+00)');  -- 14
-- ... and the revocation-registry rule: c1 awaits rebuild, so c2 is not causally stable
INSERT INTO memtx.revocation_registry (record_id, root_id, namespace) VALUES (6, 6, 'default');
SELECT id, entity, state FROM memtx.records ORDER BY id;
SELECT l AS level, pg_temp.sees(l) FROM unnest(enum_range(NULL::memtx.isolation)) l;

-- the in-flight rule follows the rival: once its transaction aborts, b1 and b2 are stable again
SELECT count(*) FROM memtx.abort(9);
DELETE FROM memtx.revocation_registry WHERE record_id = 6;
SELECT l AS level, pg_temp.sees(l) FROM unnest(enum_range(NULL::memtx.isolation)) l;

-- the levels nest: each exposes a subset of the level above it
SELECT memtx.begin('medium') AS tx \gset
SELECT memtx.stage(:tx, 'b', 'x', '45');
SELECT bool_and(pg_temp.sees(l2) <@ pg_temp.sees(l1)) AS nested
  FROM unnest(enum_range(NULL::memtx.isolation)) WITH ORDINALITY a(l1, i)
  JOIN unnest(enum_range(NULL::memtx.isolation)) WITH ORDINALITY b(l2, j) ON j = i + 1;

-- tiers pick the level: a high-tier transaction reads causally stable records only
SELECT array_agg(id ORDER BY id) FROM memtx.read(memtx.begin('high'));
SELECT array_agg(id ORDER BY id) FROM memtx.read(memtx.begin('low'));

-- a transaction's own tentative rival is not "in flight" for its own reads: it still sees b1
-- (and its own record), while other causally stable readers do not
SELECT count(*) FROM memtx.abort(:tx);
SELECT memtx.begin('high') AS tx \gset
SELECT memtx.stage(:tx, 'b', 'x', '46');
SELECT array_agg(id ORDER BY id) AS own_view FROM memtx.read(:tx, 'b');
SELECT coalesce(array_agg(id ORDER BY id), '{}') AS other_view FROM memtx.read(memtx.begin('high'), 'b');

DROP FUNCTION pg_temp.sees(memtx.isolation);
DROP EXTENSION memtx CASCADE;
