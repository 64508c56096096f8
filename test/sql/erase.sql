-- memtx.erase (SPEC §13, §17): legal erasure — revoke (reason erased, cascade as for revoke), then the
-- value becomes JSON null in the record and every copy, restored copies included; ids, lineage,
-- history and logs stay.
\i test/sql/include/prelude.psql
\i test/sql/include/show_records.psql
CREATE ROLE regress_erase_a;
SELECT memtx.register_tool('refund', true, 'refund_reversal');

-- a secret, a belief and a summary derived from it, a refund relying on it
SET memtx.logical_now = '2030-01-01 00:00+00';
SELECT memtx.begin('low', agent => 'regress_erase_a') AS tx \gset
SET ROLE regress_erase_a;
SELECT memtx.stage(:tx, 'cust:1', 'card', '"4111 swordfish"', scope => 'public') AS s \gset
SELECT memtx.stage(:tx, 'cust:1', 'card_known', '"swordfish too"', scope => 'public', derived_from => ARRAY[:s]) AS b \gset
SELECT memtx.stage(:tx, 'cust:1', 'digest', '"has a card"', kind => 'summary', scope => 'public', derived_from => ARRAY[:s]) AS d \gset
SELECT record_id, state FROM memtx.commit(:tx);
SELECT action_id AS act FROM memtx.act(:tx, 'refund', '{"card": "4111 swordfish"}', ARRAY[:s]) \gset
RESET ROLE;
SET memtx.logical_now = '2030-01-02 00:00+00';

-- only a harness may erase; a missing record is the one not-found error; bad input
SET ROLE regress_erase_a;
SELECT pg_temp.try(format('SELECT * FROM memtx.erase(%s)', :s));
RESET ROLE;
SELECT pg_temp.try('SELECT * FROM memtx.erase(999999)');
SELECT pg_temp.try('SELECT * FROM memtx.erase(NULL)');
SELECT pg_temp.try(format('SELECT * FROM memtx.erase(%s, %L)', :s, ''));
SELECT pg_temp.try(format('SELECT * FROM memtx.erase(%s, %L)', :s, repeat('x', 4097)));
SELECT value, erased_at FROM memtx.records WHERE id = :s;

-- erasing the secret: revoked with reason erased, the cascade as for revoke
SELECT root_id = :s AS root, record_id, kind, action, reason, note FROM memtx.erase(:s, 'GDPR request 17') ORDER BY id;
SELECT * FROM pg_temp.show(ARRAY[:s, :b, :d, :act]);
-- the value is gone, erased_at is set; descendants keep their own values
SELECT id, value, erased_at FROM memtx.records WHERE id IN (:s, :b, :d, :act) ORDER BY id;
-- lineage, history and the rollback log stay
SELECT child, parent FROM memtx.edges WHERE parent = :s ORDER BY child;
SELECT state, reason FROM memtx.history WHERE record_id = :s ORDER BY pos;
SELECT count(*) AS log_rows FROM memtx.rollback_log WHERE root_id = :s;
-- the recall index follows the record: the erased words are found only in the descendants
SELECT id FROM memtx.records
 WHERE memtx.recall_document(entity, attribute, value) @@ pg_catalog.to_tsquery('english', 'swordfish') ORDER BY id;
-- an as-of read of the past shows the record as it was active then, its content erased
SELECT id, value, state FROM memtx.read_as_of('2030-01-01 12:00+00', 'cust:1', 'card');

-- erasing it again writes nothing
SELECT (SELECT count(*) FROM memtx.history) AS history_rows, (SELECT count(*) FROM memtx.rollback_log) AS log_rows,
       (SELECT last_value FROM memtx.clock) AS clock \gset
SELECT count(*) AS rows FROM memtx.erase(:s);
SELECT (SELECT count(*) FROM memtx.history) = :history_rows AS same_history,
       (SELECT count(*) FROM memtx.rollback_log) = :log_rows AS same_log,
       (SELECT last_value FROM memtx.clock) = :clock AS same_clock,
       (SELECT erased_at FROM memtx.records WHERE id = :s) = '2030-01-02 00:00+00' AS same_erased_at;

-- a tool action: its args go from the record, the action log and the compensation obligation
SELECT args FROM memtx.action_log WHERE action_id = :act;
SELECT args FROM memtx.compensations WHERE action_id = :act;
SELECT count(*) AS rows FROM memtx.erase(:act);
SELECT value, erased_at IS NOT NULL AS erased FROM memtx.records WHERE id = :act;
SELECT args FROM memtx.action_log WHERE action_id = :act;
SELECT args, status FROM memtx.compensations WHERE action_id = :act;

-- an active tool action erased as root is compensated, then revoked (reason erased)
SELECT memtx.begin('low', agent => 'regress_erase_a') AS tx \gset
SET ROLE regress_erase_a;
SELECT action_id AS act2 FROM memtx.act(:tx, 'refund', '{"card": "5500 marlin"}') \gset
RESET ROLE;
SELECT record_id = :act2 AS root, kind, action, reason FROM memtx.erase(:act2);
SELECT * FROM pg_temp.show(ARRAY[:act2]);
SELECT (SELECT value FROM memtx.records WHERE id = :act2) AS value,
       (SELECT args FROM memtx.action_log WHERE action_id = :act2) AS log_args,
       (SELECT args FROM memtx.compensations WHERE action_id = :act2) AS obligation_args;

-- a tentative record is revoked by its erasure too, and settles
SELECT memtx.begin('low', agent => 'regress_erase_a') AS tx \gset
SET ROLE regress_erase_a;
SELECT memtx.stage(:tx, 'cust:2', 'card', '"tentative secret"') AS t \gset
RESET ROLE;
SELECT record_id = :t AS root, action, reason FROM memtx.erase(:t);
SELECT state, reason, verdict, value FROM memtx.records WHERE id = :t;

-- a descendant erased on its own: already revoked, so nothing is repaired, the value goes
SELECT count(*) AS rows FROM memtx.erase(:b);
SELECT state, reason, value, erased_at IS NOT NULL AS erased FROM memtx.records WHERE id = :b;

-- nothing else may set erased_at or null a value
SELECT pg_temp.try(format('UPDATE memtx.records SET value = %L WHERE id = %s', 'null', :d));
SELECT pg_temp.try(format('UPDATE memtx.records SET erased_at = now(), value = %L WHERE id = %s', '1', :d));
SELECT * FROM memtx.check_invariants();

-- SPEC §17: erasure reaches restored copies.  A card o; c1 restored from it; o revoked; c3, a
-- copy of c1 staged in a transaction left open; c2, another copy of c1 (a copy of a copy),
-- committed; n derived from c2.  Erasing o erases every record whose restored_from chain leads
-- to it: each revoked (reason erased, cascade below it as for revoke) with its own retract
-- receipt, its value JSON null, its salt gone, erased_at set.  What derives from a copy is
-- repaired and keeps its own value.
SET memtx.logical_now = '2030-02-01 00:00+00';
SET ROLE regress_erase_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'cust:3', 'card', '"5105 pike"') AS o \gset
SELECT count(*) FROM memtx.commit(:tx);
RESET ROLE; SET memtx.logical_now = '2030-02-02 00:00+00'; SET ROLE regress_erase_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.restore(:tx, 'cust:3', 'card', '2030-02-01 12:00+00') AS c1 \gset
SELECT record_id = :c1 AS c1, state FROM memtx.commit(:tx);
RESET ROLE; SET memtx.logical_now = '2030-02-02 06:00+00'; SET ROLE regress_erase_a;
SELECT count(*) FROM memtx.revoke(:o);
RESET ROLE; SET memtx.logical_now = '2030-02-03 00:00+00'; SET ROLE regress_erase_a;
SELECT memtx.begin() AS open_tx \gset
SELECT memtx.restore(:open_tx, 'cust:3', 'card', '2030-02-02 12:00+00') AS c3 \gset
SELECT memtx.begin() AS tx \gset
SELECT memtx.restore(:tx, 'cust:3', 'card', '2030-02-02 12:00+00') AS c2 \gset
SELECT memtx.stage(:tx, 'cust:3', 'card_brand', '"mastercard"', derived_from => ARRAY[:c2]) AS n \gset
SELECT record_id IN (:c2, :n) AS c2_n, state FROM memtx.commit(:tx);
RESET ROLE;
SELECT id = :o AS o, id = :c1 AS c1, id = :c2 AS c2, id = :c3 AS c3, restored_from = :o AS from_o,
       restored_from = :c1 AS from_c1, state, value
  FROM memtx.records WHERE id IN (:o, :c1, :c2, :c3) ORDER BY id;
SELECT memtx.chain_receipts() > 0 AS chained;
SELECT root_id = :o AS root_o, root_id = :c1 AS root_c1, root_id = :c2 AS root_c2, root_id = :c3 AS root_c3,
       record_id = root_id AS is_root, record_id = :n AS is_n, action, reason, note
  FROM memtx.erase(:o, 'GDPR request 18') ORDER BY id;
SELECT id = :o AS o, id = :c1 AS c1, id = :c2 AS c2, id = :c3 AS c3, id = :n AS n, state, reason, value,
       erased_at IS NOT NULL AS erased,
       EXISTS (SELECT FROM memtx.record_salts s WHERE s.record_id = r.id) AS salt_kept
  FROM memtx.records r WHERE id IN (:o, :c1, :c2, :c3, :n) ORDER BY id;
-- each its own retract receipt (reason erased); o was revoked already, so its lists no repair
SELECT subject = :o AS o, subject = :c1 AS c1, subject = :c2 AS c2, subject = :c3 AS c3, reason,
       body->'repaired' = jsonb_build_array(subject) AS repaired_itself,
       body->'repaired' = jsonb_build_array(subject, :n) AS repaired_itself_and_n, body->'repaired' = '[]' AS repaired_none
  FROM memtx.receipts WHERE kind = 'retract' AND reason = 'erased' AND subject IN (:o, :c1, :c2, :c3) ORDER BY appended;
-- the transaction that staged c3 commits nothing of it; erasing o again writes nothing
SELECT record_id = :c3 AS c3, state, reason FROM memtx.commit(:open_tx);
SELECT count(*) AS rows FROM memtx.erase(:o);
SELECT count(*) AS rows FROM memtx.erase(:c2);
SELECT * FROM memtx.verify_receipts();
SELECT * FROM memtx.check_invariants();

-- erasing a copy reaches its own copies, never the record it was copied from
SET memtx.logical_now = '2030-03-01 00:00+00';
SELECT memtx.begin('low', agent => 'regress_erase_a') AS tx \gset
SET ROLE regress_erase_a;
SELECT memtx.stage(:tx, 'cust:4', 'card', '"4000 carp"') AS p \gset
SELECT count(*) FROM memtx.commit(:tx);
RESET ROLE; SET memtx.logical_now = '2030-03-02 00:00+00'; SET ROLE regress_erase_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.restore(:tx, 'cust:4', 'card', '2030-03-01 12:00+00') AS q1 \gset
SELECT count(*) FROM memtx.commit(:tx);
RESET ROLE;
SELECT record_id = :q1 AS q1, action, reason FROM memtx.erase(:q1);
SELECT id = :p AS p, state, value, erased_at IS NOT NULL AS erased FROM memtx.records WHERE id IN (:p, :q1) ORDER BY id;
SELECT * FROM memtx.check_invariants();

RESET memtx.logical_now;
DROP ROLE regress_erase_a;
