-- memtx.restore (SPEC §13): stage a copy of the record active on a slot at a past instant,
-- restored_from set and no edge, expecting the slot's current head; the pipeline admits it.
\i test/sql/include/prelude.psql
CREATE ROLE regress_restore_a;
CREATE ROLE regress_restore_b;
SELECT memtx.register_source('crm', 0.7);
CREATE FUNCTION pg_temp.rec(id bigint)
RETURNS TABLE (value jsonb, state memtx.state, reason text, source text, authority float8, confidence float8,
               scope memtx.scope, valid tstzrange, observed_at timestamptz, expected_head bigint, restored_from bigint)
LANGUAGE sql AS $$
SELECT value, state, reason, source, authority, confidence, scope, valid, observed_at, expected_head, restored_from
  FROM memtx.records WHERE records.id = rec.id $$;

-- day 1: status open (crm); day 2: status closed (crm), which supersedes it
SET memtx.logical_now = '2030-01-01 00:00+00';
SET ROLE regress_restore_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:1', 'status', '"open"', source => 'crm', confidence => 0.9, scope => 'public',
                   observed_at => '2029-12-31 00:00+00') AS r1 \gset
SELECT record_id, state FROM memtx.commit(:tx);
RESET ROLE; SET memtx.logical_now = '2030-01-02 00:00+00'; SET ROLE regress_restore_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:1', 'status', '"closed"', source => 'crm', scope => 'public', expected_head => :r1) AS r2 \gset
SELECT record_id, state, reason FROM memtx.commit(:tx);
RESET ROLE;
-- the registry lowers crm meanwhile: a restore does not revive the old authority
SELECT memtx.register_source('crm', 0.8);

-- day 3: restore the status as it stood on day 1
SET memtx.logical_now = '2030-01-03 00:00+00';
SET ROLE regress_restore_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.restore(:tx, 'acct:1', 'status', '2030-01-01 12:00+00') AS r3 \gset
-- the content is r1's, authority is the registry's now, observed_at is not copied; it expects r2
SELECT * FROM pg_temp.rec(:r1);
SELECT * FROM pg_temp.rec(:r3);
SELECT expected_head = :r2 AS expects_current_head, restored_from = :r1 AS from_r1 FROM memtx.records WHERE id = :r3;
-- no derivation edge
SELECT count(*) AS edges FROM memtx.edges WHERE child = :r3;
SELECT record_id, state, reason FROM memtx.commit(:tx);
SELECT id, value, state FROM memtx.lookup('acct:1', 'status');
SELECT state, reason FROM memtx.history WHERE record_id = :r3 ORDER BY pos;

-- a restore that a newer write overtakes is quarantined stale_head at commit, not applied over it
SELECT memtx.begin() AS tx_restore \gset
SELECT memtx.restore(:tx_restore, 'acct:1', 'status', '2030-01-02 12:00+00') AS r4 \gset
SELECT value, expected_head = :r3 AS expects_r3 FROM memtx.records WHERE id = :r4;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:1', 'status', '"frozen"', source => 'crm', scope => 'public', expected_head => :r3) AS r5 \gset
SELECT record_id, state FROM memtx.commit(:tx);
SELECT record_id, state, reason FROM memtx.commit(:tx_restore);

-- an empty slot expects absence (0)
RESET ROLE; SET memtx.logical_now = '2030-01-04 00:00+00'; SET ROLE regress_restore_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:2', 'note', '"vip"') AS n1 \gset
SELECT record_id, state FROM memtx.commit(:tx);
RESET ROLE; SET memtx.logical_now = '2030-01-04 06:00+00'; SET ROLE regress_restore_a;
SELECT count(*) FROM memtx.revoke(:n1);
SELECT memtx.begin() AS tx \gset
SELECT memtx.restore(:tx, 'acct:2', 'note', '2030-01-04 03:00+00') AS n2 \gset
SELECT value, expected_head, restored_from = :n1 AS from_n1 FROM memtx.records WHERE id = :n2;
SELECT record_id, state FROM memtx.commit(:tx);

-- validity windows: a limit for all time (day 4, revoked the same day), then two limits for
-- consecutive windows (day 5); several records active at an instant need valid_at to choose
RESET ROLE; SET memtx.logical_now = '2030-01-04 12:00+00'; SET ROLE regress_restore_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:3', 'limit', '50') AS l0 \gset
SELECT record_id, state FROM memtx.commit(:tx);
RESET ROLE; SET memtx.logical_now = '2030-01-04 13:00+00'; SET ROLE regress_restore_a;
SELECT count(*) FROM memtx.revoke(:l0);
RESET ROLE; SET memtx.logical_now = '2030-01-05 00:00+00'; SET ROLE regress_restore_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:3', 'limit', '100', valid => '[2029-01-01 00:00+00,2030-01-05 12:00+00)') AS l1 \gset
SELECT record_id, state FROM memtx.commit(:tx);
RESET ROLE; SET memtx.logical_now = '2030-01-05 18:00+00'; SET ROLE regress_restore_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:3', 'limit', '200', valid => '[2030-01-05 12:00+00,2031-01-01 00:00+00)') AS l2 \gset
SELECT record_id, state FROM memtx.commit(:tx);
SELECT memtx.begin() AS tx \gset
SELECT pg_temp.try(format('SELECT memtx.restore(%s, %L, %L, %L)', :tx, 'acct:3', 'limit', '2030-01-05 18:00+00'));
SELECT memtx.restore(:tx, 'acct:3', 'limit', '2030-01-05 18:00+00', valid_at => '2030-07-01 00:00+00') AS l3 \gset
SELECT value, valid, expected_head = :l2 AS expects_l2, restored_from = :l2 AS from_l2 FROM memtx.records WHERE id = :l3;
SELECT pg_temp.try(format('SELECT memtx.restore(%s, %L, %L, %L, %L)', :tx, 'acct:3', 'limit', '2030-01-05 18:00+00', '2032-01-01 00:00+00'));
-- the limit for all time overlaps both current ones: no single head to expect
SELECT pg_temp.try(format('SELECT memtx.restore(%s, %L, %L, %L)', :tx, 'acct:3', 'limit', '2030-01-04 12:30+00'));
SELECT count(*) AS staged FROM memtx.records WHERE tx_id = :tx;
SELECT count(*) FROM memtx.abort(:tx);

-- errors: nothing active then, another's private record, an erased record, bad input; nothing staged
SELECT memtx.begin() AS tx \gset
SELECT pg_temp.try(format('SELECT memtx.restore(%s, %L, %L, %L)', :tx, 'acct:1', 'status', '2029-01-01 00:00+00'));
RESET ROLE;
SELECT memtx.begin(agent => 'regress_restore_b') AS txb \gset
SET ROLE regress_restore_b;
SELECT pg_temp.try(format('SELECT memtx.restore(%s, %L, %L, %L)', :txb, 'acct:3', 'limit', '2030-01-03 12:00+00'));
SELECT pg_temp.try(format('SELECT memtx.restore(%s, %L, %L, %L)', :tx, 'acct:1', 'status', '2030-01-01 12:00+00'));
RESET ROLE;
-- erasing r1 erases r3, the copy restored from it, too (SPEC §17)
SELECT record_id, action, reason FROM memtx.erase(:r1) ORDER BY id;
SELECT id, state, value, erased_at IS NOT NULL AS erased FROM memtx.records WHERE id IN (:r1, :r3) ORDER BY id;
SET ROLE regress_restore_a;
SELECT pg_temp.try(format('SELECT memtx.restore(%s, %L, %L, %L)', :tx, 'acct:1', 'status', '2030-01-01 12:00+00'));
SELECT pg_temp.try(format('SELECT memtx.restore(NULL, %L, %L, %L)', 'acct:1', 'status', '2030-01-01 12:00+00'));
SELECT pg_temp.try(format('SELECT memtx.restore(%s, %L, %L, NULL)', :tx, 'acct:1', 'status'));
SELECT pg_temp.try(format('SELECT memtx.restore(%s, %L, %L, %L)', :tx, '', 'status', '2030-01-01 12:00+00'));
SELECT count(*) AS staged FROM memtx.records WHERE tx_id = :tx;
-- a plain stage after a failed restore records no restored_from
SELECT memtx.stage(:tx, 'acct:9', 'x', '1') AS plain \gset
SELECT restored_from FROM memtx.records WHERE id = :plain;
RESET ROLE;
SELECT * FROM memtx.check_invariants();

RESET memtx.logical_now;
DROP ROLE regress_restore_a;
DROP ROLE regress_restore_b;
