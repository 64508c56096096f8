-- Transaction status after commit (committed, partially_committed, aborted) and calls on ended transactions.
\i test/sql/include/prelude.psql
SELECT memtx.begin() AS tx;   -- 1: everything passes
SELECT memtx.stage(1, 'a', 'x', '1');
SELECT memtx.stage(1, 'b', 'x', '1');
SELECT * FROM memtx.commit(1);
SELECT memtx.begin() AS tx;   -- 2: some pass
SELECT memtx.stage(2, 'c', 'x', '1');
SELECT memtx.stage(2, 'd', 'x', '1', confidence => 0);
SELECT * FROM memtx.commit(2);
SELECT memtx.begin() AS tx;   -- 3: nothing passes
SELECT memtx.stage(3, 'e', 'x', '1', confidence => 0);
SELECT memtx.stage(3, 'f', 'x', '1', confidence => 0);
SELECT * FROM memtx.commit(3);
SELECT memtx.begin() AS tx;   -- 4: nothing staged
SELECT * FROM memtx.commit(4);
SELECT memtx.begin('external_action') AS tx;   -- 5: external_action tier
SELECT memtx.stage(5, 'g', 'x', '1');
SELECT * FROM memtx.commit(5);
SELECT memtx.begin() AS tx;   -- 6: aborted explicitly
SELECT memtx.stage(6, 'h', 'x', '1');
SELECT record_id, action, reason FROM memtx.abort(6);
SELECT memtx.begin() AS tx;   -- 7: still open
SELECT id, status, end_reason, ended_at IS NOT NULL AS ended FROM memtx.transactions ORDER BY id;
SELECT id, tx_id, state, reason FROM memtx.records ORDER BY id;

-- no staging into an ended transaction, whatever its status; nothing is written
SELECT count(*) AS records FROM memtx.records;
SELECT t AS tx, pg_temp.try(format('SELECT memtx.stage(%s, ''late'', ''x'', ''1'')', t))
  FROM generate_series(1, 6) t;
-- no abort of a committed transaction; aborting an aborted one does nothing
SELECT t AS tx, pg_temp.try(format('SELECT count(*) FROM memtx.abort(%s)', t))
  FROM generate_series(1, 6) t;
SELECT count(*) FROM memtx.abort(3);
SELECT count(*) FROM memtx.abort(6);
SELECT count(*) AS records FROM memtx.records;
SELECT id, tx_id, state, reason FROM memtx.records WHERE tx_id IN (3, 6) ORDER BY id;
SELECT count(*) AS log_rows FROM memtx.rollback_log;
SELECT id, status FROM memtx.transactions ORDER BY id;
-- reading stays possible after commit
SELECT id FROM memtx.read(1) ORDER BY id;
-- bad input to commit
SELECT pg_temp.try('SELECT * FROM memtx.commit(NULL)');
SELECT pg_temp.try('SELECT * FROM memtx.commit(999)');
SELECT pg_temp.try('SELECT * FROM memtx.abort(NULL)');
SELECT pg_temp.try('SELECT * FROM memtx.abort(999)');
-- the open one still commits
SELECT memtx.stage(7, 'i', 'x', '1');
SELECT * FROM memtx.commit(7);
SELECT commits, quarantines, open_transactions FROM memtx.stats;
-- a commit from a fresh session, which has drawn no clock position yet
SELECT memtx.begin() AS tx;   -- 8
SELECT memtx.stage(8, 'j', 'x', '1');
\c -
SELECT * FROM memtx.commit(8);
-- a record leaves tentative at the clock position at which it commits
SELECT count(*) AS committed, count(*) FILTER (WHERE settled_pos = committed_seq) AS settled_there
  FROM memtx.records WHERE committed_seq IS NOT NULL;
DROP EXTENSION memtx CASCADE;
