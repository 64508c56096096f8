-- memtx.erase (SPEC §13): legal erasure — revoke (reason erased, cascade as for revoke), then the
-- value becomes JSON null in the record and every copy; ids, lineage, history and logs stay.
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

RESET memtx.logical_now;
DROP ROLE regress_erase_a;
