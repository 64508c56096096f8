-- Receipts (SPEC §11): one per terminal disposition (commit outcome per record, act decision,
-- retraction, fence), none for a repeated commit, an effect-key repeat or the tool_action record
-- of an allowed act; no values inside (a salted digest, whose salt erase destroys); appended
-- unchained and chained in append order by chain_receipts/verify_receipts; append-only;
-- verify_receipts finds a row altered or deleted behind the API; readable by a harness only.
\i test/sql/include/prelude.psql
SET memtx.logical_now = '2026-03-01 12:00+00';
CREATE ROLE regress_memtx_rc_agent;
CREATE ROLE regress_memtx_rc_other;
SELECT memtx.register_source('crm', 0.8);
SELECT memtx.register_source('erp', 0.8);
SELECT memtx.register_tool('issue_refund', false);
SELECT memtx.grant_namespace('acme', 'regress_memtx_rc_agent');
SELECT memtx.set_role_tier('regress_memtx_rc_agent', 'medium');
-- the receipts of this file, as the harness sees them
CREATE VIEW pg_temp.rc AS
    SELECT namespace, seq, kind, subject, disposition, reason,
           body - 'value_digest' - 'at' AS body, body ? 'value_digest' AS digest
      FROM memtx.receipts ORDER BY namespace, appended;

-- commit: one receipt per record the pipeline settles, in staging order, unchained until chained
SET ROLE regress_memtx_rc_agent;
SELECT memtx.begin(namespace => 'acme') AS t1 \gset
SELECT memtx.stage(:t1, 'order:1', 'status', '"paid"', source => 'crm') AS r1 \gset
SELECT memtx.stage(:t1, 'order:2', 'status', '"paid"', confidence => 0.1) AS r2 \gset
SELECT memtx.stage(:t1, 'order:3', 'status', '{"secret": "hunter2"}') AS r3 \gset
SELECT * FROM memtx.commit(:t1);
-- a repeated commit appends nothing
SELECT * FROM memtx.commit(:t1);
RESET ROLE;
SELECT namespace, seq, kind, subject = :r1 AS r1, disposition, reason, digest,
       body->>'checks_passed' AS checks, body->'superseded' AS superseded
  FROM pg_temp.rc;
-- no value anywhere in a receipt: only the salted digest, which is not the plain SHA-256
SELECT count(*) AS receipts_holding_the_value FROM memtx.receipts WHERE body::text LIKE '%hunter2%' OR body::text LIKE '%paid%';
SELECT count(*) AS digest_is_unsalted FROM memtx.receipts r
 WHERE body->>'value_digest' = encode(sha256(convert_to((SELECT value::text FROM memtx.records WHERE id = r.subject), 'UTF8')), 'hex');

-- act: one per decision; the effect-key repeat and the tool_action record get none
SET ROLE regress_memtx_rc_agent;
SELECT memtx.begin(namespace => 'acme') AS t2 \gset
SELECT allowed, reason FROM memtx.act(:t2, 'issue_refund', '{"amount": 30}', ARRAY[:r1]::bigint[], 'refund-1');
SELECT allowed, reason FROM memtx.act(:t2, 'issue_refund', '{"amount": 30}', ARRAY[:r1]::bigint[], 'refund-1');
SELECT allowed, reason FROM memtx.act(:t2, 'issue_refund', '{"amount": 31}', ARRAY[:r2]::bigint[]);
-- retract of a transaction: abort (its staging revoked)
SELECT memtx.stage(:t2, 'order:4', 'status', '"held"') AS r4 \gset
SELECT record_id, action, reason FROM memtx.abort(:t2);
RESET ROLE;
SELECT count(*) AS tool_action_commit_receipts FROM memtx.receipts r
 WHERE r.kind = 'commit' AND r.subject IN (SELECT action_id FROM memtx.action_log WHERE action_id IS NOT NULL);
SET ROLE regress_memtx_rc_agent;
-- retract of a root: revoke (and the allowed action below it repaired)
SELECT record_id, action, reason FROM memtx.revoke(:r1);
-- revoking a revoked record revokes nothing and appends nothing
SELECT count(*) FROM memtx.revoke(:r1);
RESET ROLE;
SELECT namespace, kind, subject IN (:t2) AS is_t2, subject = :r1 AS is_r1, disposition, reason,
       body->>'subject_is' AS subject_is, body->'repaired' AS repaired, body->'effect_key' AS effect_key,
       body->'inputs' = to_jsonb(ARRAY[:r1]::bigint[]) AS inputs_r1
  FROM pg_temp.rc WHERE kind IN ('act', 'retract');

-- resolve: accepting appends a commit receipt (resolved), rejecting a retract receipt
SELECT memtx.begin('medium') AS t3 \gset
SELECT memtx.stage(:t3, 'acct:1', 'owner', '"ann"', source => 'crm') AS a1 \gset
SELECT memtx.stage(:t3, 'acct:2', 'owner', '"bob"', source => 'crm') AS a2 \gset
SELECT count(*) FROM memtx.commit(:t3);
SELECT memtx.begin('medium') AS t4 \gset
SELECT memtx.stage(:t4, 'acct:1', 'owner', '"cy"', source => 'erp') AS a3 \gset
SELECT memtx.stage(:t4, 'acct:2', 'owner', '"di"', source => 'erp') AS a4 \gset
SELECT state, reason FROM memtx.commit(:t4);
SELECT memtx.resolve(:a3, true);
SELECT memtx.resolve(:a4, false);
SELECT kind, subject = :a3 AS is_a3, subject = :a4 AS is_a4, disposition, reason,
       body->>'resolved' AS resolved, body->'superseded' = to_jsonb(ARRAY[:a1]::bigint[]) AS superseded_a1
  FROM pg_temp.rc WHERE subject IN (:a3, :a4) ORDER BY seq NULLS LAST;

-- fence: the role's open transactions retracted (fenced), then one fence receipt per
-- namespace where it has a transaction, after them
SET ROLE regress_memtx_rc_agent;
SELECT memtx.begin(namespace => 'acme') AS t5 \gset
SELECT memtx.stage(:t5, 'order:5', 'status', '"new"') AS r5 \gset
RESET ROLE;
SELECT memtx.fence('regress_memtx_rc_agent') AS epoch \gset
SELECT namespace, kind, subject = :t5 AS is_t5, subject = :epoch AS is_epoch, disposition, reason,
       body->>'role' AS role
  FROM pg_temp.rc WHERE kind = 'fence' OR (kind = 'retract' AND subject = :t5);
SELECT memtx.unfence('regress_memtx_rc_agent');

-- chaining: seq gapless per namespace from 1 in append order; hashes link
SELECT memtx.chain_receipts('acme') AS chained_acme;
SELECT namespace, count(*) FILTER (WHERE seq IS NULL) AS pending, count(*) AS receipts FROM memtx.receipts GROUP BY 1 ORDER BY 1;
SELECT * FROM memtx.verify_receipts();
SELECT namespace, count(*) AS receipts, min(seq), max(seq),
       bool_and(seq = n) AS gapless_in_append_order,
       bool_and(hash = sha256(prev_hash || convert_to(body::text, 'UTF8'))) AS hashes,
       bool_and(prev_hash = coalesce(before, decode(repeat('00', 32), 'hex'))) AS links
  FROM (SELECT r.*, row_number() OVER w AS n, lag(hash) OVER w AS before
          FROM memtx.receipts r WINDOW w AS (PARTITION BY namespace ORDER BY appended)) x
 GROUP BY 1 ORDER BY 1;
-- the body repeats every column but the hashes
SELECT body->>'kind' = kind AND (body->>'seq')::bigint = seq AND (body->>'subject')::bigint = subject
       AND body->>'namespace' = namespace AND body->>'disposition' = disposition
       AND (body->>'reason') IS NOT DISTINCT FROM reason AND (body->>'at')::timestamptz = at AS body_repeats_columns,
       at = '2026-03-01 12:00+00' AS at_is_memtx_now
  FROM memtx.receipts GROUP BY 1, 2;
SELECT * FROM memtx.check_invariants();
-- chaining again chains nothing
SELECT memtx.chain_receipts();

-- append-only, for everyone, the owner included; a rolled-back call leaves no receipt and no gap
SELECT pg_temp.try('UPDATE memtx.receipts SET reason = ''x'' WHERE seq = 1');
SELECT pg_temp.try('DELETE FROM memtx.receipts WHERE seq = 1');
SELECT pg_temp.try('TRUNCATE memtx.receipts');
SELECT pg_temp.try('UPDATE memtx.receipts SET seq = seq WHERE seq = 1');
BEGIN;
SELECT memtx.begin() AS t6 \gset
SELECT memtx.stage(:t6, 'gone', 'a', '1') \gset
SELECT count(*) FROM memtx.commit(:t6);
ROLLBACK;
SELECT * FROM memtx.verify_receipts('default');

-- readable by a harness only; chain and verify are a harness's
SET ROLE regress_memtx_rc_agent;
SELECT count(*) AS receipts_seen FROM memtx.receipts;
SELECT count(*) AS heads_seen FROM memtx.receipt_heads;
SELECT pg_temp.try('SELECT count(*) FROM memtx.record_salts');
SELECT pg_temp.try('SELECT memtx.verify_receipts()');
SELECT pg_temp.try('SELECT memtx.chain_receipts()');
SELECT pg_temp.try('SELECT * FROM memtx.dispositions()');
RESET ROLE;

-- erase: a retract receipt (erased), the salt gone, the chain still verifies and the
-- receipts of the record stay
SELECT count(*) FROM memtx.erase(:r3);
SELECT count(*) AS salt_left FROM memtx.record_salts WHERE record_id = :r3;
SELECT kind, disposition, reason, body->'repaired' AS repaired FROM memtx.receipts WHERE subject = :r3 AND namespace = 'acme' ORDER BY appended;
-- erasing again appends nothing
SELECT count(*) FROM memtx.erase(:r3);
SELECT count(*) AS erase_receipts FROM memtx.receipts WHERE subject = :r3 AND reason = 'erased';
-- erasing a record revoked already (by its transaction's abort) revokes nothing, and still
-- appends the erasure's receipt
SELECT count(*) FROM memtx.erase(:r4);
SELECT kind, disposition, reason, body->'repaired' AS repaired FROM memtx.receipts
 WHERE subject = :r4 AND kind = 'retract' ORDER BY appended;
SELECT * FROM memtx.verify_receipts('acme');

-- tampering behind the API (a superuser with triggers off) is found, at the lowest bad seq
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.receipts SET reason = 'needs_review' WHERE namespace = 'acme' AND seq = 2;
SELECT * FROM memtx.verify_receipts('acme');
SELECT invariant, detail FROM memtx.check_invariants() WHERE invariant = 'I7';
ROLLBACK;
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.receipts SET body = jsonb_set(body, '{reason}', '"needs_review"'), reason = 'needs_review',
       hash = sha256(prev_hash || convert_to(jsonb_set(body, '{reason}', '"needs_review"')::text, 'UTF8'))
 WHERE namespace = 'acme' AND seq = 2;
SELECT * FROM memtx.verify_receipts('acme');   -- the next receipt's link breaks
ROLLBACK;
-- a body edited with its hash kept: the link and the columns still agree, only the hash
-- recomputed from the body finds it
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.receipts SET body = jsonb_set(body, '{checks_passed}', '3')
 WHERE namespace = 'acme' AND seq = 1;
SELECT * FROM memtx.verify_receipts('acme');
SELECT invariant, detail FROM memtx.check_invariants() WHERE invariant = 'I7';
ROLLBACK;
BEGIN;
SET LOCAL session_replication_role = replica;
DELETE FROM memtx.receipts WHERE namespace = 'acme' AND seq = 3;
SELECT * FROM memtx.verify_receipts('acme');
ROLLBACK;
BEGIN;
SET LOCAL session_replication_role = replica;
DELETE FROM memtx.receipts WHERE namespace = 'acme' AND seq = (SELECT max(seq) FROM memtx.receipts WHERE namespace = 'acme');
SELECT * FROM memtx.verify_receipts('acme');   -- a deleted last receipt: the head remembers it
ROLLBACK;
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.records SET value = '"refunded"' WHERE id = :r1;   -- a value changed behind the API
SELECT * FROM memtx.verify_receipts('acme');
ROLLBACK;
BEGIN;
SET LOCAL session_replication_role = replica;
UPDATE memtx.receipts SET subject = 999999, body = body || '{"subject": 999999}' WHERE namespace = 'acme' AND seq = 1;
SELECT namespace, first_bad_seq FROM memtx.verify_receipts('acme');
ROLLBACK;
SELECT * FROM memtx.verify_receipts();
SELECT * FROM memtx.check_invariants();

-- a verify of a namespace without receipts checks nothing and writes nothing
SELECT * FROM memtx.verify_receipts('nowhere');
SELECT count(*) FROM memtx.receipt_heads WHERE namespace = 'nowhere';
SELECT pg_temp.try('SELECT memtx.verify_receipts(NULL)');

DROP ROLE regress_memtx_rc_agent;
DROP ROLE regress_memtx_rc_other;
