-- memtx.check_invariants (SPEC §8): empty on a healthy store, and it finds
-- corruption of each invariant planted behind the API.  Each plant happens in
-- its own SQL transaction and is rolled back.
\i test/sql/include/prelude.psql

-- the invariants, as memtx.invariants lists them: SPEC §8's I1, I2 and G3,
-- and the later checks numbered on from them
SELECT code, name, spec_section FROM memtx.invariants ORDER BY substr(code, 2)::int;
SELECT count(*) = count(DISTINCT code) AS codes_unique, bool_and(code ~ '^[IG][0-9]+$') AS one_scheme,
       bool_and(description <> '') AS described FROM memtx.invariants;
SELECT has_table_privilege('public', 'memtx.invariants', 'SELECT') AS public_reads;
-- check_invariants' rows, each invariant a code of memtx.invariants (one it
-- does not list would show as "unlisted: ..."), in the checker's order
CREATE FUNCTION pg_temp.violations() RETURNS TABLE (invariant text, record_id bigint, detail text)
LANGUAGE sql AS $$
    SELECT coalesce((SELECT i.code FROM memtx.invariants i WHERE i.code = c.invariant),
                    'unlisted: ' || c.invariant), c.record_id, c.detail
      FROM memtx.check_invariants() c $$;

SELECT memtx.register_tool('issue_refund', false);
SELECT memtx.register_tool('hold_order', true, 'release_order');

-- an empty store is healthy
SELECT * FROM memtx.check_invariants();

-- a store with history: commits, actions, an abort, a cascade
SELECT memtx.begin('medium') AS t1 \gset
SELECT memtx.stage(:t1, 'order:841', 'refund_eligible', 'true') AS b1 \gset
SELECT memtx.stage(:t1, 'customer:7', 'profile', '"refunds"', kind => 'profile', derived_from => ARRAY[:b1]) AS p1 \gset
SELECT memtx.stage(:t1, 'order:841', 'child', '1', derived_from => ARRAY[:b1]) AS c1 \gset
SELECT memtx.stage(:t1, 'order:900', 'refund_eligible', 'false') AS b2 \gset
SELECT memtx.stage(:t1, 'order:900', 'child', '1', derived_from => ARRAY[:b2]) AS c2 \gset
SELECT record_id, state FROM memtx.commit(:t1);
SELECT (memtx.act(:t1, 'issue_refund', '{"order": 841}', ARRAY[:b1])).action_id AS a1 \gset
SELECT (memtx.act(:t1, 'hold_order', '{"order": 841}', ARRAY[:b1])).action_id AS a2 \gset
SELECT memtx.begin('low') AS t2 \gset
SELECT memtx.stage(:t2, 'scratch', 'x', '1') AS s1 \gset
SELECT count(*) FROM memtx.abort(:t2);
SELECT record_id, kind, action, reason FROM memtx.revoke(:b1, 'wrong order') ORDER BY id;
-- a tool action retracted by itself before its input: the later cascade
-- skips it, and it needs no compensated or leaked entry of its own
SELECT memtx.begin('medium') AS t6 \gset
SELECT memtx.stage(:t6, 'order:950', 'refund_eligible', 'true') AS b3 \gset
SELECT record_id, state FROM memtx.commit(:t6);
SELECT (memtx.act(:t6, 'issue_refund', '{"order": 950}', ARRAY[:b3])).action_id AS a3 \gset
SELECT record_id, kind, action, reason FROM memtx.revoke(:a3, 'refund voided');
SELECT record_id, kind, action, reason FROM memtx.revoke(:b3);
SELECT * FROM memtx.check_invariants();
-- a tentative record of an open transaction is not a violation by itself
SELECT memtx.begin('low') AS t3 \gset
SELECT memtx.stage(:t3, 'pending', 'x', '1') AS s2 \gset
SELECT * FROM memtx.check_invariants();
SELECT count(*) FROM memtx.abort(:t3);

-- I1: an allowed irreversible action logged while a record was in flight
BEGIN;
SELECT memtx.begin('low') AS t4 \gset
SELECT memtx.stage(:t4, 'late', 'x', '1') AS s3 \gset
INSERT INTO memtx.action_log (tx_id, namespace, tool, reversible, args, allowed, gate_snapshot, gate_xid, gate_pos)
VALUES (:t1, 'default', 'issue_refund', false, '{}', true, pg_current_snapshot(), pg_current_xact_id(), nextval('memtx.clock'));
SELECT invariant, record_id, detail FROM pg_temp.violations();
ROLLBACK;
-- the same row for a reversible tool is fine
BEGIN;
SELECT memtx.begin('low') AS t4 \gset
SELECT memtx.stage(:t4, 'late', 'x', '1') AS s3 \gset
INSERT INTO memtx.action_log (tx_id, namespace, tool, reversible, args, allowed, gate_snapshot, gate_xid, gate_pos)
VALUES (:t1, 'default', 'hold_order', true, '{}', true, pg_current_snapshot(), pg_current_xact_id(), nextval('memtx.clock'));
SELECT invariant, record_id, detail FROM pg_temp.violations();
ROLLBACK;
-- I1: a record's settling moved after the gate that allowed a1 (as if it was still tentative)
BEGIN;
UPDATE memtx.records r SET settled_xid = a.gate_xid, settled_pos = a.gate_pos + 1
  FROM memtx.action_log a WHERE a.action_id = :a1 AND r.id = :b2;
SELECT invariant, record_id, detail FROM pg_temp.violations();
ROLLBACK;
-- I1: the log says the gate saw blockers, yet it allowed the call
BEGIN;
UPDATE memtx.action_log SET blockers = ARRAY[:b2::bigint] WHERE action_id = :a1;
SELECT invariant, record_id, detail FROM pg_temp.violations();
ROLLBACK;

-- I2: a revoked descendant set back to committed behind the trigger's back
-- (G3 sees the same record: it is active under a revoked ancestor)
BEGIN;
ALTER TABLE memtx.records DISABLE TRIGGER records_lifecycle;
UPDATE memtx.records SET state = 'committed' WHERE id = :c1;
ALTER TABLE memtx.records ENABLE TRIGGER records_lifecycle;
SELECT invariant, record_id, detail FROM pg_temp.violations();
ROLLBACK;
-- I2: a descendant left tentative since before the retraction
BEGIN;
ALTER TABLE memtx.records DISABLE TRIGGER records_lifecycle;
UPDATE memtx.records SET state = 'tentative' WHERE id = :c1;
ALTER TABLE memtx.records ENABLE TRIGGER records_lifecycle;
SELECT invariant, record_id, detail FROM pg_temp.violations();
ROLLBACK;
-- I2: a view quarantined by the cascade removed from the revocation registry
BEGIN;
DELETE FROM memtx.revocation_registry WHERE record_id = :p1;
SELECT invariant, record_id, detail FROM pg_temp.violations();
ROLLBACK;
-- I2: the leaked entry of an irreversible action deleted
BEGIN;
DELETE FROM memtx.rollback_log WHERE record_id = :a1 AND action = 'leaked';
SELECT invariant, record_id, detail FROM pg_temp.violations();
ROLLBACK;
-- I2: the compensated entry of a reversible action deleted
BEGIN;
DELETE FROM memtx.rollback_log WHERE record_id = :a2 AND action = 'compensated';
SELECT invariant, record_id, detail FROM pg_temp.violations();
ROLLBACK;

-- G3: a record revoked directly (committed -> revoked is a legal move) without
-- the cascade leaves its active child under a revoked ancestor
BEGIN;
UPDATE memtx.records SET state = 'revoked' WHERE id = :b2;
SELECT invariant, record_id, detail FROM pg_temp.violations();
ROLLBACK;
-- G3: a registry-listed ancestor, transitively
BEGIN;
SELECT memtx.begin('medium') AS t5 \gset
SELECT memtx.stage(:t5, 'order:900', 'grandchild', '1', derived_from => ARRAY[:c2]) AS g1 \gset
SELECT record_id, state FROM memtx.commit(:t5);
INSERT INTO memtx.revocation_registry (record_id, root_id, namespace) VALUES (:b2, :b2, 'default');
SELECT invariant, record_id, detail FROM pg_temp.violations();
ROLLBACK;

-- I4, single truth: without the exclusion constraint two active rivals can be planted (records
-- planted behind the API have no receipt that settled them: I7 names them too, §17)
BEGIN;
ALTER TABLE memtx.records DROP CONSTRAINT records_single_truth;
INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, state, authority, confidence, owner, staged_xid, staged_pos)
SELECT :t1, 'default', 'order:900', 'refund_eligible', v::jsonb, 'committed', 0.5, 1, current_user, pg_current_xact_id(), nextval('memtx.clock')
  FROM (VALUES ('true'), ('1.0')) AS x(v);
SELECT invariant, record_id, detail FROM pg_temp.violations() ORDER BY record_id;
ROLLBACK;
-- the same value, or disjoint validity, is no single-truth conflict (the planted records still
-- have no receipt)
BEGIN;
ALTER TABLE memtx.records DROP CONSTRAINT records_single_truth;
INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, state, authority, confidence, owner, staged_xid, staged_pos, valid)
VALUES (:t1, 'default', 'order:900', 'refund_eligible', 'false', 'committed', 0.5, 1, current_user, pg_current_xact_id(), nextval('memtx.clock'), '(,)'),
       (:t1, 'default', 'order:777', 'v', '1', 'committed', 0.5, 1, current_user, pg_current_xact_id(), nextval('memtx.clock'), '[2020-01-01,2021-01-01)'),
       (:t1, 'default', 'order:777', 'v', '2', 'action_safe', 0.5, 1, current_user, pg_current_xact_id(), nextval('memtx.clock'), '[2021-01-01,2022-01-01)');
SELECT invariant, record_id, detail FROM pg_temp.violations();
ROLLBACK;

-- I8: without its unique index, one agent's proposal id can be bound to two
-- records (planted behind the API: I7 names them too)
BEGIN;
DROP INDEX memtx.records_proposal_idx;
INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, state, authority, confidence, owner, staged_xid, staged_pos, proposal, proposer)
SELECT :t1, 'default', 'order:' || x, 'note', '1', 'committed', 0.5, 1, current_user, pg_current_xact_id(), nextval('memtx.clock'), 'p-1', current_user
  FROM generate_series(980, 981) AS x;
SELECT invariant, record_id IS NOT NULL AS has_record, detail ~ '^proposal p-1 of agent \S+ is bound to 2 records in namespace default$' AS names_it
  FROM pg_temp.violations() WHERE invariant <> 'I7';
ROLLBACK;

-- one namespace (SPEC §17): its records, actions, retractions and receipts only.  A violation
-- planted in one namespace is reported for it and for the whole store, never for another
-- namespace; a namespace without records has none.
SELECT memtx.begin('medium', namespace => 'inv_other') AS t7 \gset
SELECT memtx.stage(:t7, 'other', 'x', '1') AS o1 \gset
SELECT memtx.stage(:t7, 'other', 'child', '1', derived_from => ARRAY[:o1]) AS o2 \gset
SELECT record_id, state FROM memtx.commit(:t7);
SELECT * FROM memtx.check_invariants('inv_other');
CREATE FUNCTION pg_temp.by_namespace() RETURNS TABLE (checked text, invariant text, record_id bigint)
LANGUAGE sql AS $$
    SELECT 'default', invariant, record_id FROM memtx.check_invariants('default')
    UNION ALL SELECT 'inv_other', invariant, record_id FROM memtx.check_invariants('inv_other')
    UNION ALL SELECT 'every', invariant, record_id FROM memtx.check_invariants()
    UNION ALL SELECT 'every (NULL)', invariant, record_id FROM memtx.check_invariants(NULL)
    UNION ALL SELECT 'nowhere', invariant, record_id FROM memtx.check_invariants('nowhere') $$;
BEGIN;
UPDATE memtx.records SET state = 'revoked' WHERE id = :b2;
SELECT * FROM pg_temp.by_namespace();
ROLLBACK;
BEGIN;
UPDATE memtx.records SET state = 'revoked' WHERE id = :o1;
SELECT * FROM pg_temp.by_namespace();
ROLLBACK;
-- a receipt deleted in the other namespace: its own checks only (the missing
-- receipt and the chain it broke)
BEGIN;
ALTER TABLE memtx.receipts DISABLE TRIGGER USER;
DELETE FROM memtx.receipts WHERE namespace = 'inv_other' AND subject = :o2;
ALTER TABLE memtx.receipts ENABLE TRIGGER USER;
SELECT * FROM pg_temp.by_namespace();
ROLLBACK;

-- every plant was rolled back: healthy again
SELECT * FROM memtx.check_invariants();

-- the checker is a harness operation
CREATE ROLE regress_memtx_agent;
SET ROLE regress_memtx_agent;
SELECT pg_temp.try('SELECT * FROM memtx.check_invariants()');
RESET ROLE;
DROP ROLE regress_memtx_agent;
