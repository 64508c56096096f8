-- Leases: a call on a transaction whose lease ran out fails (25P03); memtx.expire_transactions() aborts it.
\i test/sql/include/prelude.psql
CREATE ROLE regress_memtx_agent;
SHOW memtx.lease_timeout;
SELECT memtx.begin() AS tx;   -- 1: default lease (5 min)
SELECT lease_expires_at - opened_at BETWEEN interval '299 s' AND interval '301 s' AS five_minutes
  FROM memtx.transactions WHERE id = 1;

SET memtx.lease_timeout = 1;
SELECT memtx.begin() AS tx;   -- 2: expires
SELECT memtx.stage(2, 'e', 'a', '1');                                   -- 1
SELECT memtx.stage(2, 'e2', 'a', '1', derived_from => ARRAY[1]);        -- 2
SELECT memtx.begin() AS tx;   -- 3: kept alive by calls
SELECT memtx.begin() AS tx;   -- 4: committed before expiry
SELECT memtx.stage(4, 'f', 'a', '1');                                   -- 3
SELECT record_id, state FROM memtx.commit(4);
-- nothing happens before expiry
SELECT * FROM memtx.expire_transactions();
SELECT id, status FROM memtx.transactions ORDER BY id;

SELECT pg_sleep(0.6);
SELECT memtx.stage(3, 'g', 'a', '1');   -- 4: renews 3's lease
SELECT pg_sleep(0.6);
SELECT count(*) FROM memtx.read(3);     -- past the first lease, within the renewed one
SELECT record_id, state FROM memtx.commit(3);

-- 2 has been idle for longer than its lease: every call on it fails, and writes nothing
SELECT pg_temp.try('SELECT memtx.stage(2, ''e3'', ''a'', ''1'')');
SELECT pg_temp.try('SELECT count(*) FROM memtx.read(2)');
SELECT pg_temp.try('SELECT count(*) FROM memtx.commit(2)');
SELECT pg_temp.try('SELECT count(*) FROM memtx.abort(2)');
SELECT count(*) AS records FROM memtx.records;
SELECT status FROM memtx.transactions WHERE id = 2;
-- a committed transaction has no lease to run out
SELECT record_id, state FROM memtx.commit(4);

-- the expiry run is a harness operation
SET ROLE regress_memtx_agent;
SELECT pg_temp.try('SELECT * FROM memtx.expire_transactions()');
RESET ROLE;
-- it aborts 2 through the abort path: staging revoked with reason expired, and logged
SELECT * FROM memtx.expire_transactions();
SELECT id, status, end_reason FROM memtx.transactions ORDER BY id;
SELECT id, state, reason FROM memtx.records ORDER BY id;
SELECT root_id, record_id, action, reason FROM memtx.rollback_log ORDER BY id;
-- a second run finds nothing more
SELECT * FROM memtx.expire_transactions();
-- the expired transaction reports as aborted
SELECT pg_temp.try('SELECT memtx.stage(2, ''e3'', ''a'', ''1'')');
RESET memtx.lease_timeout;
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_agent;
