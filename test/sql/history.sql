-- memtx.history (SPEC §13): every state change of a record from its staging on, with its
-- memtx.now() time and global position; no values; readable under the records' RLS.
\i test/sql/include/prelude.psql
CREATE ROLE regress_history_a;
CREATE ROLE regress_history_b;
SELECT memtx.register_source('ledger', 1.0);
CREATE FUNCTION pg_temp.hist(ids bigint[])
RETURNS TABLE (record_id bigint, state memtx.state, reason text, at timestamptz, step bigint)
LANGUAGE sql AS $$
SELECT h.record_id, h.state, h.reason, h.at, row_number() OVER (PARTITION BY h.record_id ORDER BY h.pos)
  FROM memtx.history h WHERE h.record_id = ANY (ids) ORDER BY h.record_id, h.pos $$;

-- staged, committed, superseded, revoked; quarantined at commit; aborted
SET memtx.logical_now = '2030-01-01 00:00+00';
SET ROLE regress_history_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:1', 'status', '"open"', scope => 'public') AS r1 \gset
SELECT memtx.stage(:tx, 'acct:1', 'limit', '100', scope => 'public', confidence => 0.1) AS r2 \gset
RESET ROLE; SET memtx.logical_now = '2030-01-02 00:00+00'; SET ROLE regress_history_a;
SELECT record_id, state, reason FROM memtx.commit(:tx);
RESET ROLE; SET memtx.logical_now = '2030-01-03 00:00+00'; SET ROLE regress_history_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:1', 'status', '"closed"', scope => 'public', source => 'ledger') AS r3 \gset
SELECT record_id, state FROM memtx.commit(:tx);
RESET ROLE; SET memtx.logical_now = '2030-01-04 00:00+00'; SET ROLE regress_history_a;
SELECT count(*) AS repaired FROM memtx.revoke(:r1);
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:1', 'note', '"draft"') AS r4 \gset
RESET ROLE; SET memtx.logical_now = '2030-01-05 00:00+00'; SET ROLE regress_history_a;
SELECT count(*) AS repaired FROM memtx.abort(:tx);
SELECT * FROM pg_temp.hist(ARRAY[:r1, :r2, :r3, :r4]);
-- the last history row of each record is its current state and reason
SELECT r.id, r.state = h.state AND r.reason IS NOT DISTINCT FROM h.reason AS current
  FROM memtx.records r
  CROSS JOIN LATERAL (SELECT x.state, x.reason FROM memtx.history x WHERE x.record_id = r.id
                      ORDER BY x.pos DESC LIMIT 1) h
 ORDER BY r.id;
-- positions: staging and settling reuse the record's own, and each lies in the one global order
SELECT r.id, h.pos = r.staged_pos AS at_staged_pos, h2.pos = r.settled_pos AS at_settled_pos
  FROM memtx.records r
  JOIN memtx.history h ON h.record_id = r.id AND h.state = 'tentative'
  JOIN LATERAL (SELECT x.pos FROM memtx.history x WHERE x.record_id = r.id AND x.pos > h.pos
                ORDER BY x.pos LIMIT 1) h2 ON true
 ORDER BY r.id;
RESET ROLE;
SELECT max(pos) <= (SELECT last_value FROM memtx.clock) AS within_clock FROM memtx.history;

-- no value is kept: the columns are the record, the state, the reason, the time and the position
SELECT attname FROM pg_attribute WHERE attrelid = 'memtx.history'::regclass AND attnum > 0 ORDER BY attnum;

-- a tool action enters history committed at its staging
SELECT memtx.register_tool('notify', false);
SELECT memtx.begin('low', agent => 'regress_history_a') AS tx \gset
SELECT action_id AS act FROM memtx.act(:tx, 'notify', '{"to": "ada"}') \gset
SELECT state, reason, pos = (SELECT staged_pos FROM memtx.records WHERE id = :act) AS at_staged_pos
  FROM memtx.history WHERE record_id = :act;

-- readable under the records' RLS: b sees the public records' history, not a's private ones
SET ROLE regress_history_b;
SELECT record_id, count(*) FROM memtx.history GROUP BY record_id ORDER BY record_id;
SELECT count(*) AS private_rows FROM memtx.history WHERE record_id = :r4;
RESET ROLE;

-- history is written by memtx only
SET ROLE regress_history_a;
SELECT pg_temp.try(format('INSERT INTO memtx.history VALUES (%s, %L, NULL, now(), 0)', :r1, 'committed'));
SELECT pg_temp.try(format('DELETE FROM memtx.history WHERE record_id = %s', :r1));
RESET ROLE;

-- a direct UPDATE of a record's state (a superuser's) is kept too
SELECT count(*) AS before FROM memtx.history WHERE record_id = :r3;
UPDATE memtx.records SET state = 'action_safe' WHERE id = :r3;
SELECT state, reason FROM memtx.history WHERE record_id = :r3 ORDER BY pos DESC LIMIT 1;
-- a statement that changes no state writes no history
UPDATE memtx.records SET state = state WHERE id = :r3;
SELECT count(*) AS after FROM memtx.history WHERE record_id = :r3;
SELECT * FROM memtx.check_invariants();

RESET memtx.logical_now;
DROP ROLE regress_history_a;
DROP ROLE regress_history_b;
