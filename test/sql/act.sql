-- memtx.act (SPEC §5): the gate plus declared inputs; allowed calls become
-- committed tool_action records, every call goes to the action log.
\i test/sql/include/prelude.psql

SELECT memtx.register_tool('issue_refund', false);
SELECT memtx.register_tool('hold_order', true, 'release_order');

-- medium tier: a committed belief, then an allowed irreversible call derived from it
SELECT memtx.begin('medium') AS tx1 \gset
SELECT memtx.stage(:tx1, 'order:841', 'refund_eligible', 'true') AS r1 \gset
SELECT * FROM memtx.commit(:tx1);
SELECT * FROM memtx.act(:tx1, 'issue_refund', '{"order": 841, "amount": 20}', ARRAY[:r1]) \gset a1_
SELECT allowed, reason, action_id, blockers FROM memtx.action_log WHERE action_id = :a1_action_id;
-- the call is a committed tool_action record on entity tool:<name>, attribute its id
SELECT id, tx_id, entity, attribute = id::text AS attribute_is_id, kind, state, value, scope,
       committed_seq IS NOT NULL AS has_commit_seq
  FROM memtx.records WHERE id = :a1_action_id;
-- derived from its inputs
SELECT child, parent FROM memtx.edges WHERE child = :a1_action_id;
-- and logged with what the gate saw
SELECT id, tx_id, tool, reversible, args, inputs, allowed, reason, blockers, action_id, effect_key,
       gate_snapshot IS NOT NULL AND gate_xid IS NOT NULL AND gate_pos IS NOT NULL AS gate_view_logged
  FROM memtx.action_log ORDER BY id;

-- below external_action no input is required; duplicates in derived_from are one edge
SELECT * FROM memtx.act(:tx1, 'issue_refund', '{"order": 1}');
SELECT * FROM memtx.act(:tx1, 'hold_order', '{"order": 841}', ARRAY[:r1, :r1]);
SELECT child, parent FROM memtx.edges WHERE child > :a1_action_id ORDER BY child, parent;

-- a blocked call: another agent's staging is in flight
SELECT memtx.begin('low') AS tx2 \gset
SELECT memtx.stage(:tx2, 'order:842', 'refund_eligible', 'false') AS r2 \gset
SELECT * FROM memtx.act(:tx1, 'issue_refund', '{"order": 841}', ARRAY[:r1]);
-- an unregistered tool is irreversible: blocked as well
SELECT * FROM memtx.act(:tx1, 'wire_money', '{"to": "x"}');
-- a reversible tool passes while something is in flight
SELECT * FROM memtx.act(:tx1, 'hold_order', '{"order": 842}', ARRAY[:r1]) \gset a5_
SELECT allowed, reason, action_id, blockers FROM memtx.action_log WHERE action_id = :a5_action_id;
-- blocked calls are logged with reason and blockers, and create no record
SELECT id, tool, reversible, allowed, reason, blockers, action_id
  FROM memtx.action_log ORDER BY id;
SELECT id, entity, state FROM memtx.records WHERE kind = 'tool_action' ORDER BY id;

-- unknown input ids are an error, before or after the gate; an error writes nothing
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, %L)', :tx1, 'issue_refund', '{}', '{424242}'));
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, %L)', :tx1, 'hold_order', '{}', ARRAY[:r1, 424242]));
SELECT root_id, record_id, kind, action, reason FROM memtx.abort(:tx2);
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, %L)', :tx1, 'issue_refund', '{}', '{424242}'));
SELECT count(*) AS action_log_rows FROM memtx.action_log;

-- input_not_visible: a quarantined record, one committed after the snapshot;
-- offenders are returned as blockers.  An input of another namespace is
-- refused like an unknown id (42704: no operation spans two namespaces, SPEC
-- §3, and a router finds no such record on the namespace's node, §20).  A
-- revoked input is refused with revoked_parent before visibility (SPEC §16)
SELECT memtx.begin('medium') AS tx3 \gset
SELECT memtx.stage(:tx3, 'order:843', 'refund_eligible', 'true', confidence => 0.1) AS r3 \gset
SELECT * FROM memtx.commit(:tx3);
SELECT memtx.begin('medium', namespace => 'other') AS tx4 \gset
SELECT memtx.stage(:tx4, 'order:844', 'refund_eligible', 'true') AS r4 \gset
SELECT * FROM memtx.commit(:tx4);
SELECT memtx.begin('medium') AS tx5 \gset
SELECT memtx.begin('medium') AS tx6 \gset
SELECT memtx.stage(:tx6, 'order:845', 'refund_eligible', 'true') AS r6 \gset
SELECT * FROM memtx.commit(:tx6);
SELECT * FROM memtx.act(:tx5, 'issue_refund', '{}', ARRAY[:r1, :r3]);
SELECT * FROM memtx.act(:tx5, 'issue_refund', '{}', ARRAY[:r4]);
SELECT * FROM memtx.act(:tx5, 'issue_refund', '{}', ARRAY[:r6, :r2, :r1]);
SELECT * FROM memtx.act(:tx5, 'issue_refund', '{}', ARRAY[:r6, :r1]);
-- input rules hold for reversible tools too
SELECT * FROM memtx.act(:tx5, 'hold_order', '{}', ARRAY[:r3]);
-- the same inputs are fine for a transaction that can see them
SELECT * FROM memtx.act(:tx5, 'issue_refund', '{}', ARRAY[:r1]) \gset a6_
SELECT allowed, reason, action_id, blockers FROM memtx.action_log WHERE action_id = :a6_action_id;
SELECT * FROM memtx.act(:tx6, 'issue_refund', '{}', ARRAY[:r6]) \gset a7_
SELECT allowed, reason, action_id, blockers FROM memtx.action_log WHERE action_id = :a7_action_id;

-- external_action tier -------------------------------------------------------
-- no action_safe record visible yet: the gate's reason comes before the input rules
SELECT memtx.begin('external_action') AS tx7 \gset
SELECT * FROM memtx.act(:tx7, 'issue_refund', '{}', ARRAY[:r1]);
SELECT memtx.stage(:tx7, 'order:846', 'refund_eligible', 'true') AS r7 \gset
SELECT * FROM memtx.act(:tx7, 'issue_refund', '{}', ARRAY[:r7]);
SELECT * FROM memtx.commit(:tx7);
-- inputs_required: an irreversible call must name its support
SELECT * FROM memtx.act(:tx7, 'issue_refund', '{"order": 846}');
-- a reversible one need not
SELECT (memtx.act(:tx7, 'hold_order', '{"order": 846}')).allowed;
-- committed (not action_safe) inputs are not visible at action_safe_read
SELECT * FROM memtx.act(:tx7, 'issue_refund', '{}', ARRAY[:r7, :r1]);
-- allowed: every input is action_safe
SELECT * FROM memtx.act(:tx7, 'issue_refund', '{"order": 846}', ARRAY[:r7]) \gset a8_
SELECT allowed, reason, action_id, blockers FROM memtx.action_log WHERE action_id = :a8_action_id;
SELECT child, parent FROM memtx.edges WHERE child = :a8_action_id;
-- input_not_action_safe: a harness pinned the level to committed_read, so
-- committed inputs are visible, but the tier still wants action_safe ones
SELECT memtx.begin('external_action', isolation => 'committed_read') AS tx8 \gset
SELECT * FROM memtx.act(:tx8, 'issue_refund', '{}', ARRAY[:r7, :r1]);
-- a tool action is committed, never action_safe: it cannot vouch for another one
SELECT * FROM memtx.act(:tx8, 'issue_refund', '{}', ARRAY[:a8_action_id]);
SELECT * FROM memtx.act(:tx8, 'issue_refund', '{}', ARRAY[:r7]) \gset a9_
SELECT allowed, reason, action_id, blockers FROM memtx.action_log WHERE action_id = :a9_action_id;

-- act in a committed transaction works (above), in an aborted one it errors
SELECT memtx.begin('medium') AS tx9 \gset
SELECT count(*) FROM memtx.abort(:tx9);
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L)', :tx9, 'issue_refund', '{}'));
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L)', :tx9, 'hold_order', '{}'));

-- only the transaction's agent (or a harness) may act in it
CREATE ROLE regress_memtx_agent;
CREATE ROLE regress_memtx_other;
SELECT memtx.begin('medium', agent => 'regress_memtx_agent') AS tx10 \gset
SET ROLE regress_memtx_other;
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L)', :tx10, 'issue_refund', '{}'));
SET ROLE regress_memtx_agent;
SELECT allowed, reason FROM memtx.act(:tx10, 'issue_refund', '{"by": "agent"}');
RESET ROLE;
SELECT owner FROM memtx.records WHERE kind = 'tool_action' AND value = '{"by": "agent"}';

-- tool_action records are events: nobody stages on a tool: entity
SELECT memtx.begin('medium') AS tx11 \gset
SELECT pg_temp.try(format('SELECT memtx.stage(%s, %L, %L, %L)', :tx11, 'tool:issue_refund', '1', '{}'));
SELECT count(*) FROM memtx.abort(:tx11);

-- bad input; none of it writes anything
SELECT count(*) AS log_before FROM memtx.action_log \gset
SELECT pg_temp.try('SELECT memtx.act(NULL, ''issue_refund'', ''{}'')');
SELECT pg_temp.try('SELECT memtx.act(999999, ''issue_refund'', ''{}'')');
SELECT pg_temp.try(format('SELECT memtx.act(%s, NULL, %L)', :tx1, '{}'));
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L)', :tx1, '', '{}'));
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, NULL)', :tx1, 'issue_refund'));
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, NULL)', :tx1, 'issue_refund', '{}'));
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, %L)', :tx1, 'issue_refund', '{}', '{1,NULL}'));
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, %L)', :tx1, 'issue_refund', '{}', '{{1},{1}}'));
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, effect_key => %L)', :tx1, 'issue_refund', '{}', ''));
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, effect_key => %L)', :tx1, 'issue_refund', '{}', repeat('k', 300)));
SELECT count(*) - :log_before AS new_log_rows FROM memtx.action_log;

DROP ROLE regress_memtx_agent;
DROP ROLE regress_memtx_other;
