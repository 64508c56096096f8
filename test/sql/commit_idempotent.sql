-- Idempotent commit: a second call returns the stored outcome, runs nothing and meters nothing.
\i test/sql/include/prelude.psql
SELECT memtx.register_source('crm', 0.8);
SELECT memtx.register_source('chat', 0.5);
SET memtx.logical_now = '2030-06-01 00:00:00+00';
SELECT memtx.begin() AS tx;   -- 1
SELECT memtx.stage(1, 'r', 'a', '1', source => 'crm');
SELECT record_id, state FROM memtx.commit(1);

SELECT memtx.begin() AS tx;   -- 2
SELECT memtx.stage(2, 'x', 'a', '1', valid => '[2030-01-01 00:00+00, 2031-01-01 00:00+00)');  -- 2 committed
SELECT memtx.stage(2, 'r', 'a', '2', source => 'chat');                                      -- 3 lower_authority (one verifier call)
SELECT memtx.stage(2, 'y', 'a', '1', confidence => 0.1);                                     -- 4 low_evidence
SELECT * FROM memtx.commit(2);
CREATE TEMP TABLE before AS
    SELECT (SELECT last_value FROM memtx.clock) AS clock,
           (SELECT verifier_calls FROM memtx.transactions WHERE id = 2) AS calls,
           (SELECT verifier_calls FROM memtx.stats) AS total_calls,
           (SELECT array_agg(ROW(id, state, reason, verdict, settled_pos, committed_seq)::text ORDER BY id)
              FROM memtx.records) AS records,
           (SELECT ended_at FROM memtx.transactions WHERE id = 2) AS ended_at;

-- the world changes: the clock moves out of record 2's validity, the threshold rises
SET memtx.logical_now = '2040-01-01 00:00:00+00';
SET memtx.confidence_threshold = 1;
SELECT * FROM memtx.commit(2);
SELECT * FROM memtx.commit(2);
RESET memtx.confidence_threshold;
-- nothing ran: no clock position taken, no call metered, no record or end time touched
SELECT b.clock = (SELECT last_value FROM memtx.clock) AS clock_unchanged,
       b.calls = (SELECT verifier_calls FROM memtx.transactions WHERE id = 2) AS calls_unchanged,
       b.total_calls = (SELECT verifier_calls FROM memtx.stats) AS total_unchanged,
       b.records = (SELECT array_agg(ROW(id, state, reason, verdict, settled_pos, committed_seq)::text ORDER BY id)
                      FROM memtx.records) AS records_unchanged,
       b.ended_at = (SELECT ended_at FROM memtx.transactions WHERE id = 2) AS end_unchanged
  FROM before b;
SELECT id, status, verifier_calls FROM memtx.transactions ORDER BY id;

-- the stored outcome is the verdict at commit time, even after a record's state moves on
SELECT memtx.begin() AS tx;   -- 3
SELECT memtx.stage(3, 'x', 'a', '9');                 -- 5 same source (none), equal: supersedes 2
SELECT record_id, state FROM memtx.commit(3);
SELECT id, state FROM memtx.records WHERE id = 2;
SELECT * FROM memtx.commit(2);

-- a transaction that staged nothing: committed, empty outcome, every time
SELECT memtx.begin() AS tx;   -- 4
SELECT * FROM memtx.commit(4);
SELECT * FROM memtx.commit(4);
SELECT status FROM memtx.transactions WHERE id = 4;
-- commit of an aborted transaction reports its records' fate and does not reopen it
SELECT memtx.begin() AS tx;   -- 5
SELECT memtx.stage(5, 'z', 'a', '1');                 -- 6
SELECT count(*) FROM memtx.abort(5);
SELECT * FROM memtx.commit(5);
SELECT id, state, reason FROM memtx.records WHERE id = 6;
SELECT status, end_reason FROM memtx.transactions WHERE id = 5;

-- a repeat in the same SQL transaction returns the same rows
BEGIN;
SELECT memtx.begin() AS tx;   -- 6
SELECT memtx.stage(6, 'w', 'a', '1');                 -- 7
SELECT * FROM memtx.commit(6);
SELECT * FROM memtx.commit(6);
COMMIT;
-- a failed commit (an error) leaves the transaction open for a real run later
SELECT memtx.begin() AS tx;   -- 7
SELECT memtx.stage(7, 'v', 'a', '1');                 -- 8
BEGIN;
SELECT count(*) FROM memtx.commit(7);
ROLLBACK;
SELECT status FROM memtx.transactions WHERE id = 7;
SELECT * FROM memtx.commit(7);
SELECT * FROM memtx.commit(7);
RESET memtx.logical_now;
DROP TABLE before;
DROP EXTENSION memtx CASCADE;
