-- Retraction of an action (SPEC §16, amending §6): when the root of a revoke
-- is itself a tool_action, it is repaired like a descendant — compensated
-- (reversible tool) or leaked, then revoked — so an agent that revokes its
-- own action does not escape compensation.
\i test/sql/include/prelude.psql
\i test/sql/include/show_records.psql

SELECT memtx.register_tool('issue_refund', false);
SELECT memtx.register_tool('hold_order', true, 'release_order');
SELECT memtx.register_tool('ping', true);

CREATE ROLE regress_memtx_agent;
SELECT memtx.begin('medium', agent => 'regress_memtx_agent') AS t1 \gset
SET ROLE regress_memtx_agent;
SELECT memtx.stage(:t1, 'order:841', 'refund_eligible', 'true') AS b1 \gset
SELECT record_id, state FROM memtx.commit(:t1);
SELECT (memtx.act(:t1, 'hold_order', '{"order": 841}', ARRAY[:b1])).action_id AS a1 \gset
SELECT (memtx.act(:t1, 'ping', '{"order": 841}', ARRAY[:b1])).action_id AS a2 \gset
SELECT (memtx.act(:t1, 'issue_refund', '{"order": 841}', ARRAY[:b1])).action_id AS a3 \gset
SELECT (memtx.act(:t1, 'wire_money', '{"order": 841}', ARRAY[:b1])).action_id AS a4 \gset
-- an action derived from another action
SELECT (memtx.act(:t1, 'hold_order', '{"after": "ping"}', ARRAY[:a2])).action_id AS a5 \gset

-- the agent revokes its own reversible action: compensated, then revoked
SELECT root_id = :a1 AS own_root, record_id = :a1 AS is_a1, kind, action, reason, note
  FROM memtx.revoke(:a1, 'changed my mind');
RESET ROLE;
SELECT root_id = :a1 AS own_root, action_id = :a1 AS is_a1, tool, compensator, args, status
  FROM memtx.compensations ORDER BY id;
SET ROLE regress_memtx_agent;
-- a reversible tool without a compensator: compensated (the runner decides how),
-- and the action below it is repaired as a descendant
SELECT root_id = :a2 AS own_root, record_id, kind, action, reason FROM memtx.revoke(:a2) ORDER BY id;
-- irreversible and unregistered tools: leaked, then revoked
SELECT record_id = :a3 AS is_a3, kind, action, reason FROM memtx.revoke(:a3, 'refund voided');
SELECT record_id = :a4 AS is_a4, kind, action, reason FROM memtx.revoke(:a4);
-- a revoked action is not repaired twice
SELECT count(*) AS rows FROM memtx.revoke(:a3);
RESET ROLE;
SELECT * FROM pg_temp.show(ARRAY[:a1, :a2, :a3, :a4, :a5]);
SELECT root_id, action_id, tool, compensator, status FROM memtx.compensations ORDER BY id;
SELECT leaks, compensations FROM memtx.stats;
SELECT * FROM memtx.check_invariants();

-- revoking the input later skips the actions already retracted
SELECT record_id, kind, action, reason FROM memtx.revoke(:b1) ORDER BY id;
SELECT count(*) AS compensations FROM memtx.compensations;
SELECT * FROM memtx.check_invariants();

DROP ROLE regress_memtx_agent;
