-- Receipts anchor states and erased means erased (SPEC §17): verify_receipts recomputes each
-- record's state from the receipt chain (its commit receipt, the supersessions and repairs later
-- receipts list, its retraction or erasure) and reports a record whose stored state differs at the
-- receipt that last settled it; a record counts as erased only when erased_at is set, its value is
-- JSON null, its salt is gone, it is revoked and its erasure has its retract receipt.  Tampering
-- below is a superuser's with triggers off (session_replication_role = replica), each in a
-- transaction rolled back; check_invariants reports the same problems (invariant I7).
\i test/sql/include/prelude.psql
\i test/sql/include/show_records.psql
SET memtx.logical_now = '2026-05-01 12:00+00';
SELECT memtx.register_source('crm', 0.8), memtx.register_source('erp', 0.8), memtx.register_source('ledger', 1.0);
SELECT memtx.register_tool('hold', true, 'release');
-- what verify_receipts and check_invariants say, in one row per problem
CREATE FUNCTION pg_temp.audit(ns text DEFAULT 'default')
RETURNS TABLE (source text, seq bigint, record bigint, detail text) LANGUAGE sql AS $$
    SELECT 'verify', v.first_bad_seq, NULL::bigint, v.detail FROM memtx.verify_receipts(ns) v
    UNION ALL
    SELECT 'invariants', NULL, c.record_id, c.detail FROM memtx.check_invariants() c
     WHERE c.invariant = 'I7'
    ORDER BY 1 DESC, 2, 3, 4 $$;
-- the receipt seq that names a record in a list (or as subject) last
CREATE FUNCTION pg_temp.seq_of(record bigint) RETURNS bigint LANGUAGE sql AS $$
    SELECT max(r.seq) FROM memtx.receipts r
     WHERE (r.kind = 'commit' AND r.subject = record)
        OR (r.kind = 'act' AND r.body->'action' = to_jsonb(record))
        OR (r.kind = 'retract' AND r.body->>'subject_is' = 'record' AND r.subject = record)
        OR r.body->'superseded' @> to_jsonb(record) OR r.body->'repaired' @> to_jsonb(record) $$;

-- every path that settles a state, through the API --------------------------------------------
-- t1: facts, a summary, a quarantine; t2 supersedes tier1 and contends with a1 (review)
SELECT memtx.begin('medium') AS t1 \gset
SELECT memtx.stage(:t1, 'acct:1', 'owner', '"ann"', source => 'crm') AS a1 \gset
SELECT memtx.stage(:t1, 'acct:1', 'tier', '"gold"', source => 'crm') AS tier1 \gset
SELECT memtx.stage(:t1, 'acct:1', 'email', '"ann@example.com"', source => 'crm') AS r \gset
SELECT memtx.stage(:t1, 'acct:1', 'digest', '"ann, mail"', kind => 'summary', derived_from => ARRAY[:r]) AS s1 \gset
SELECT memtx.stage(:t1, 'acct:1', 'note', '"weak"', confidence => 0.1) AS weak \gset
SELECT record_id, state, reason FROM memtx.commit(:t1);
SELECT memtx.begin('medium') AS t2 \gset
SELECT memtx.stage(:t2, 'acct:1', 'tier', '"silver"', source => 'ledger') AS tier2 \gset
SELECT memtx.stage(:t2, 'acct:1', 'owner', '"bob"', source => 'erp') AS a2 \gset
SELECT memtx.stage(:t2, 'acct:2', 'owner', '"cy"', source => 'erp') AS c2 \gset
SELECT record_id, state, reason FROM memtx.commit(:t2);
SELECT memtx.begin('medium') AS t3 \gset
SELECT memtx.stage(:t3, 'acct:2', 'owner', '"di"', source => 'crm') AS c3 \gset
SELECT record_id, state, reason FROM memtx.commit(:t3);
-- resolve: accepting a2 supersedes a1; rejecting c3 revokes it
SELECT memtx.resolve(:a2, true) AS accepted, memtx.resolve(:c3, false) AS rejected;
-- t4: a tentative input with a reversible action on it, and a summary derived from the action
-- committed meanwhile by t5; t4's commit quarantines the input and repairs what lies below it
SELECT memtx.begin('medium') AS t4 \gset
SELECT memtx.stage(:t4, 'acct:3', 'hold', 'true', confidence => 0.2) AS q \gset
SELECT action_id AS act FROM memtx.act(:t4, 'hold', '{"acct": 3}', ARRAY[:q]) \gset
SELECT memtx.begin('medium') AS t5 \gset
SELECT memtx.stage(:t5, 'acct:3', 'digest', '"held"', kind => 'summary', derived_from => ARRAY[:act]) AS v \gset
SELECT record_id, state FROM memtx.commit(:t5);
SELECT record_id, state, reason FROM memtx.commit(:t4);
-- revokes: r (its summary quarantined) and tier2; an abort; an open transaction
SELECT count(*) FROM memtx.revoke(:r);
SELECT count(*) FROM memtx.revoke(:tier2);
SELECT memtx.begin('medium') AS t6 \gset
SELECT memtx.stage(:t6, 'acct:4', 'x', '1') AS ab \gset
SELECT count(*) FROM memtx.abort(:t6);
SELECT memtx.begin('medium') AS t7 \gset
SELECT memtx.stage(:t7, 'acct:5', 'x', '1') AS open1 \gset
-- erasure: of a live record, and of one revoked already
SELECT count(*) FROM memtx.erase(:c2);
SELECT count(*) FROM memtx.erase(:ab);
SELECT * FROM pg_temp.show(ARRAY[:a1, :tier1, :r, :s1, :weak, :tier2, :a2, :c2, :c3, :q, :act, :v, :ab, :open1]);

-- what the receipts say of each record: commit receipts list the repairs of their quarantine,
-- retract receipts the views their repair quarantined
SELECT memtx.chain_receipts() > 0 AS chained;
SELECT seq, kind, subject, disposition, reason, body->'superseded' AS superseded, body->'repaired' AS repaired,
       body->'quarantined' AS quarantined, body->'action' AS action
  FROM memtx.receipts WHERE namespace = 'default' ORDER BY seq;
SELECT subject = :q AS is_q, body->'repaired' = jsonb_build_array(:act, :v) AS repaired_act_and_v,
       body->'quarantined' = jsonb_build_array(:v) AS quarantined_v
  FROM memtx.receipts WHERE kind = 'commit' AND subject = :q;
-- the chain holds and recomputes every state; both audits agree
SELECT * FROM pg_temp.audit();

-- §17 Erased means erased ------------------------------------------------------------------------
-- the forged value behind a fake erasure: value and erased_at set on a committed record, the
-- erasure's receipt appended by plain INSERT
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET value = '"mallory"', erased_at = memtx.now() WHERE id = :a2;
INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at)
VALUES ('default', 'retract', :a2, 'retracted', 'erased',
        jsonb_build_object('subject_is', 'record', 'record', :a2, 'repaired', '[]'::jsonb, 'quarantined', '[]'::jsonb),
        memtx.now());
SELECT * FROM pg_temp.audit();
SELECT max(seq) AS forged_seq FROM memtx.receipts WHERE namespace = 'default';
ROLLBACK;
-- the same carried through (value null, salt deleted, record revoked, a receipt): a retract
-- receipt that does not list its record among its repairs says it was revoked already, which
-- the chain contradicts
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET value = 'null', erased_at = memtx.now(), state = 'revoked', reason = 'erased' WHERE id = :a2;
DELETE FROM memtx.record_salts WHERE record_id = :a2;
INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at)
VALUES ('default', 'retract', :a2, 'retracted', 'erased',
        jsonb_build_object('subject_is', 'record', 'record', :a2, 'repaired', '[]'::jsonb, 'quarantined', '[]'::jsonb),
        memtx.now());
SELECT * FROM pg_temp.audit();
ROLLBACK;
-- erased_at alone set behind the API (no receipt): the record is not erased as erasure
-- requires (SPEC §17), so the value's digest check still applies and finds the changed value
-- at its commit receipt, the lowest seq
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET value = '"mallory"', erased_at = memtx.now() WHERE id = :a2;
SELECT * FROM pg_temp.audit();
ROLLBACK;
-- an erased record whose value comes back, or whose erased_at is cleared
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET value = '"cy"' WHERE id = :c2;
SELECT * FROM pg_temp.audit();
ROLLBACK;
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET erased_at = NULL WHERE id = :c2;
SELECT * FROM pg_temp.audit();
ROLLBACK;
-- an erasure's salt left behind (re-inserted)
BEGIN;
SET LOCAL session_replication_role = replica;
INSERT INTO memtx.record_salts VALUES (:c2, 'default', '\x00112233445566778899aabbccddeeff');
SELECT * FROM pg_temp.audit();
ROLLBACK;

-- §17 Receipts anchor states -----------------------------------------------------------------------
-- revoked -> committed behind the API: found at the retract receipt that revoked it
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET state = 'committed', reason = NULL WHERE id = :r;
SELECT * FROM pg_temp.audit();
SELECT pg_temp.seq_of(:r) AS revoking_seq;
ROLLBACK;
-- ... and with a commit receipt appended by plain INSERT to vouch for it: a chain no call writes
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET state = 'committed', reason = NULL WHERE id = :r;
INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at)
SELECT namespace, 'commit', subject, 'committed', NULL, body - 'seq' - 'at' || '{"resolved": true}', memtx.now()
  FROM memtx.receipts WHERE kind = 'commit' AND subject = :r;
SELECT * FROM pg_temp.audit();
ROLLBACK;
-- superseded -> committed: at the receipt of the commit that superseded it
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET state = 'committed' WHERE id = :tier1;
SELECT * FROM pg_temp.audit();
SELECT pg_temp.seq_of(:tier1) AS superseding_seq;
ROLLBACK;
-- a view a cascade quarantined, made active again: at the retract receipt that quarantined it
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET state = 'committed', reason = NULL WHERE id = :s1;
SELECT * FROM pg_temp.audit();
ROLLBACK;
-- the tool action a commit's quarantine repaired, made active again: at that commit's receipt
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET state = 'committed', reason = NULL WHERE id = :act;
SELECT * FROM pg_temp.audit();
SELECT pg_temp.seq_of(:act) = (SELECT seq FROM memtx.receipts WHERE kind = 'commit' AND subject = :q) AS at_q_commit;
ROLLBACK;
-- a quarantined record committed behind the API (no resolve): at its commit receipt
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET state = 'committed', reason = NULL WHERE id = :weak;
SELECT * FROM pg_temp.audit();
ROLLBACK;
-- a tentative record of an open transaction committed behind the API: no receipt settled it,
-- so the receipt that should have is missing (the seq after the last)
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET state = 'committed' WHERE id = :open1;
SELECT * FROM pg_temp.audit();
SELECT max(seq) + 1 AS next_seq FROM memtx.receipts WHERE namespace = 'default';
ROLLBACK;
-- a record inserted behind the API
BEGIN;
SET LOCAL session_replication_role = replica;
INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, state, authority, confidence, owner, staged_xid, staged_pos)
SELECT :t1, 'default', 'acct:9', 'x', '1', 'committed', 0.5, 1, current_user, pg_current_xact_id(), nextval('memtx.clock')
RETURNING id AS planted \gset
SELECT * FROM pg_temp.audit();
ROLLBACK;
-- a supersession of a record the chain has revoked, listed by a commit receipt appended by plain
-- INSERT (a second one of a2: that too is a history no call writes): nothing leaves revoked but
-- through its erasure
BEGIN;
SET LOCAL session_replication_role = replica;
INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at)
SELECT namespace, 'commit', subject, disposition, reason,
       body - 'seq' - 'at' || jsonb_build_object('superseded', jsonb_build_array(:c3)), memtx.now()
  FROM memtx.receipts WHERE kind = 'commit' AND subject = :a2 AND seq = (SELECT max(seq) FROM memtx.receipts WHERE kind = 'commit' AND subject = :a2);
UPDATE memtx.records SET state = 'superseded' WHERE id = :c3;
SELECT * FROM pg_temp.audit();
ROLLBACK;
-- a list of ids that is not one, and a receipt in the format of 0.2.0 (no repairs listed) in a
-- namespace that began at 0.3.0
BEGIN;
SET LOCAL session_replication_role = replica;
INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at)
SELECT namespace, kind, subject, disposition, reason, body - 'seq' - 'at' - 'superseded' || '{"repaired": {"x": 1}}', memtx.now()
  FROM memtx.receipts WHERE kind = 'commit' AND subject = :a2 AND seq = (SELECT max(seq) FROM memtx.receipts WHERE kind = 'commit' AND subject = :a2);
SELECT * FROM pg_temp.audit();
ROLLBACK;
BEGIN;
SET LOCAL session_replication_role = replica;
INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at)
SELECT namespace, kind, subject, disposition, reason, body - 'seq' - 'at' - 'superseded' - 'repaired' - 'quarantined', memtx.now()
  FROM memtx.receipts WHERE kind = 'commit' AND subject = :a2 AND seq = (SELECT max(seq) FROM memtx.receipts WHERE kind = 'commit' AND subject = :a2);
SELECT * FROM pg_temp.audit();
ROLLBACK;
-- receipts not yet chained: check_invariants (which does not chain) judges a record by them
-- only once they are; a record with a receipt pending is not reported
SELECT count(*) FROM memtx.revoke(:a2);
SELECT count(*) AS pending FROM memtx.receipts WHERE seq IS NULL;
SELECT * FROM memtx.check_invariants();
SELECT * FROM pg_temp.audit();

-- a store upgraded from 0.2.0 ----------------------------------------------------------------------
-- Its receipts did not list a commit's repairs nor tell quarantined views from revoked records.
-- Simulated in namespace old: the repairs of a quarantine at commit and of a revoke, with the
-- fields of 0.3.0 removed from their receipts before they are chained, and the upgrade's row.
SELECT memtx.grant_namespace('old', current_user);
SELECT memtx.begin('medium', namespace => 'old') AS o1 \gset
SELECT memtx.stage(:o1, 'k', 'a', '1', confidence => 0.2) AS oq \gset
SELECT action_id AS oact FROM memtx.act(:o1, 'hold', '{"k": 1}', ARRAY[:oq]) \gset
SELECT memtx.stage(:o1, 'k', 'b', '2') AS ob \gset
SELECT memtx.stage(:o1, 'k', 'c', '"b"', kind => 'summary', derived_from => ARRAY[:ob]) AS ov \gset
SELECT record_id, state, reason FROM memtx.commit(:o1);
SELECT count(*) FROM memtx.revoke(:ob);
SELECT * FROM pg_temp.show(ARRAY[:oq, :oact, :ob, :ov]);
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.receipts SET body = body - 'repaired' - 'quarantined'
 WHERE namespace = 'old' AND seq IS NULL AND kind IN ('commit', 'retract');
COMMIT;
-- without the upgrade's row, receipts of 0.2.0 are out of place
SELECT * FROM pg_temp.audit('old');
INSERT INTO memtx.receipt_anchoring SELECT 'old', last_value FROM memtx.clock;
-- with it, what those receipts cannot tell is not held against the store: the action the
-- quarantine repaired (its act receipt is the last to name it) and the quarantined view
SELECT * FROM pg_temp.audit('old');
-- what they can tell still holds: a record they revoked stays revoked
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET state = 'committed', reason = NULL WHERE id = :ob;
SELECT * FROM pg_temp.audit('old');
ROLLBACK;
-- new receipts are held to the full rule: a new revoke's repairs, then a 0.2.0 receipt after it
SELECT memtx.begin('medium', namespace => 'old') AS o2 \gset
SELECT memtx.stage(:o2, 'k', 'd', '3') AS od \gset
SELECT record_id, state FROM memtx.commit(:o2);
SELECT count(*) FROM memtx.revoke(:od);
SELECT * FROM pg_temp.audit('old');
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET state = 'committed', reason = NULL WHERE id = :od;
SELECT * FROM pg_temp.audit('old');
ROLLBACK;
BEGIN;
SET LOCAL session_replication_role = replica;
INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at)
SELECT namespace, kind, subject, disposition, reason, body - 'seq' - 'at' - 'quarantined', memtx.now()
  FROM memtx.receipts WHERE namespace = 'old' AND kind = 'retract' AND subject = :od;
SELECT * FROM pg_temp.audit('old');
ROLLBACK;
-- a record staged after the upgrade that no receipt settled is found there too
BEGIN;
SET LOCAL session_replication_role = replica;
SELECT memtx.begin('medium', namespace => 'old') AS o3 \gset
SELECT memtx.stage(:o3, 'k', 'e', '4') AS oe \gset
UPDATE memtx.records SET state = 'committed' WHERE id = :oe;
SELECT * FROM pg_temp.audit('old');
ROLLBACK;

RESET memtx.logical_now;
