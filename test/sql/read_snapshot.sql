-- memtx.read: snapshot, raw_read's staging rule, own writes, namespace, readability, the read set.
\i test/sql/include/prelude.psql
CREATE FUNCTION pg_temp.ids(tx bigint, e text DEFAULT NULL, a text DEFAULT NULL) RETURNS bigint[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(r.id ORDER BY r.id), '{}') FROM memtx.read(tx, e, a) r $$;
SELECT memtx.register_source('ledger', 1.0);

-- snapshot: a record committed after begin is invisible, one committed before is visible
SELECT memtx.begin('low') AS tx;                                  -- 1: reader, before
SELECT memtx.begin(isolation => 'raw_read') AS tx;                -- 2: raw reader, before
SELECT memtx.begin('low') AS tx;                                  -- 3: writer
SELECT memtx.stage(3, 'x', 'v', '1');                             -- 1
SELECT memtx.begin('low') AS tx;                                  -- 4: reader, after staging
SELECT memtx.begin(isolation => 'raw_read') AS tx;                -- 5: raw reader, after staging
SELECT * FROM memtx.commit(3);
SELECT memtx.begin('low') AS tx;                                  -- 6: reader, after commit
SELECT t AS tx, pg_temp.ids(t) FROM generate_series(1, 6) t WHERE t <> 3;
-- raw_read goes by staging, not commit: 5 saw record 1 staged, 2 began before it was
SELECT pg_temp.ids(2) AS raw_before, pg_temp.ids(5) AS raw_after;

-- the snapshot fixes which records, not their states: superseding record 1 after
-- tx 6 began hides it from 6, and the new record is not in 6's snapshot either
SELECT memtx.begin('low') AS tx;                                  -- 7
SELECT memtx.stage(7, 'x', 'v', '2', source => 'ledger');         -- 2
SELECT * FROM memtx.commit(7);
SELECT pg_temp.ids(6) AS before_supersede, pg_temp.ids(memtx.begin('low')) AS fresh;  -- fresh is tx 8
SELECT pg_temp.ids(2) AS raw_before, pg_temp.ids(5) AS raw_after;

-- inside one SQL transaction, the clock position decides: a commit after begin is after the snapshot
BEGIN;
SELECT memtx.begin('low') AS tx;                                  -- 9
SELECT memtx.begin('low') AS tx;                                  -- 10
SELECT memtx.stage(10, 'y', 'v', '1');                            -- 3
SELECT record_id, state FROM memtx.commit(10);
SELECT pg_temp.ids(9, 'y') AS begun_before, pg_temp.ids(memtx.begin('low'), 'y') AS begun_after;  -- 11
COMMIT;

-- read-your-own-writes: own tentative records at every level, even action_safe_read
SELECT memtx.begin(isolation => l) AS tx FROM unnest(enum_range(NULL::memtx.isolation)) l;  -- 12..16
SELECT memtx.stage(t, 'own', 'v' || t, to_jsonb(t)) FROM generate_series(12, 16) t;        -- 4..8
SELECT t AS tx, isolation, pg_temp.ids(t, 'own')
  FROM generate_series(12, 16) t JOIN memtx.transactions ON id = t ORDER BY t;
-- once settled, own records follow the level regardless of the snapshot
SELECT t AS tx, (SELECT string_agg(record_id || ':' || state, ',') FROM memtx.commit(t)) AS outcome
  FROM generate_series(12, 16) t;
SELECT t AS tx, isolation, pg_temp.ids(t, 'own')
  FROM generate_series(12, 16) t JOIN memtx.transactions ON id = t ORDER BY t;
-- an own record quarantined at commit: raw_read still shows it, committed_read does not
SELECT memtx.begin(isolation => 'raw_read') AS tx;                -- 17
SELECT memtx.begin(isolation => 'committed_read') AS tx;          -- 18
SELECT memtx.stage(17, 'weak', 'v17', '1', confidence => 0.1);    -- 9
SELECT memtx.stage(17, 'weak', 'w17', '1');                       -- 10
SELECT memtx.stage(18, 'weak', 'v18', '1', confidence => 0.1);    -- 11
SELECT memtx.stage(18, 'weak', 'w18', '1');                       -- 12
SELECT * FROM memtx.commit(17);
SELECT * FROM memtx.commit(18);
SELECT pg_temp.ids(17, 'weak') AS raw, pg_temp.ids(18, 'weak') AS committed;

-- namespace isolation: the same slot in another namespace is another slot
SELECT memtx.begin('low', namespace => 'other') AS tx;            -- 19
SELECT memtx.stage(19, 'x', 'v', '"other"');                      -- 13
SELECT record_id, state, reason FROM memtx.commit(19);
SELECT pg_temp.ids(memtx.begin('low', namespace => 'other')) AS other_ns,   -- 20
       pg_temp.ids(memtx.begin('low'), 'x') AS default_ns;                  -- 21

-- readability: the agent sees its own records, those it is a reader of, and public ones
CREATE ROLE regress_memtx_a;
CREATE ROLE regress_memtx_b;
SELECT memtx.begin('low', agent => 'regress_memtx_a') AS tx;      -- 22
SET ROLE regress_memtx_a;
SELECT memtx.stage(22, 'p', 'private', '1');                                     -- 14
SELECT memtx.stage(22, 'p', 'reader', '1', readers => ARRAY['regress_memtx_b']); -- 15
SELECT memtx.stage(22, 'p', 'public', '1', scope => 'public');                   -- 16
SELECT record_id, state FROM memtx.commit(22);
RESET ROLE;
SELECT memtx.begin('low', agent => 'regress_memtx_b') AS tx;      -- 23
SET ROLE regress_memtx_b;
SELECT pg_temp.ids(23, 'p') AS b_sees;
RESET ROLE;
SET ROLE regress_memtx_a;
SELECT pg_temp.ids(memtx.begin(), 'p') AS a_sees;                 -- 24
RESET ROLE;

-- the read set: what read returned, each record once; filters by entity and attribute
SELECT memtx.begin('low') AS tx;                                  -- 25
SELECT pg_temp.ids(25, 'x', 'v') AS slot, pg_temp.ids(25, 'x') AS entity,
       pg_temp.ids(25, NULL, 'private') AS attribute, pg_temp.ids(25, 'nothing') AS none;
SELECT record_id FROM memtx.read_set WHERE tx_id = 25 ORDER BY record_id;
SELECT tx_id, array_agg(record_id ORDER BY record_id) FROM memtx.read_set
 WHERE tx_id IN (6, 23) GROUP BY tx_id ORDER BY tx_id;

-- bad input
SELECT pg_temp.try('SELECT * FROM memtx.read(NULL)');
SELECT pg_temp.try('SELECT * FROM memtx.read(999)');
SELECT count(*) FROM memtx.abort(memtx.begin());                  -- 26
SELECT pg_temp.try('SELECT * FROM memtx.read(26)');
SET ROLE regress_memtx_b;
SELECT pg_temp.try('SELECT * FROM memtx.read(22)');
RESET ROLE;
SELECT count(*) AS read_set_rows FROM memtx.read_set;

DROP FUNCTION pg_temp.ids(bigint, text, text);
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_a;
DROP ROLE regress_memtx_b;
