-- Act inputs (SPEC §16, amending §5): at every tier and level, a declared
-- input with a revoked or registry-listed transitive ancestor (itself
-- included) is refused with revoked_parent; a tool action derived from a
-- record that later leaves tentative other than by committing is repaired
-- (compensated or leaked, then revoked) with that record as the root; and
-- check_invariants reports such an action when it is left unrepaired.
\i test/sql/include/prelude.psql
\i test/sql/include/show_records.psql

SELECT memtx.register_tool('issue_refund', false);
SELECT memtx.register_tool('hold_order', true, 'release_order');
SELECT memtx.register_tool('ping', true);

-- a belief b1 with a summary s1 over it; revoking b1 revokes b1 and
-- quarantines s1 into the revocation registry
SELECT memtx.begin('medium') AS t1 \gset
SELECT memtx.stage(:t1, 'order:841', 'refund_eligible', 'true') AS b1 \gset
SELECT memtx.stage(:t1, 'order:841', 'digest', '"eligible"', kind => 'summary', derived_from => ARRAY[:b1]) AS s1 \gset
SELECT record_id, state FROM memtx.commit(:t1);
-- a healthy belief, to act on
SELECT memtx.begin('medium') AS t2 \gset
SELECT memtx.stage(:t2, 'order:900', 'refund_eligible', 'true') AS g1 \gset
SELECT record_id, state FROM memtx.commit(:t2);
SELECT record_id, kind, action, reason FROM memtx.revoke(:b1, 'stale lookup') ORDER BY id;
SELECT * FROM memtx.check_invariants();

-- 1. A record staged from the revoked belief, used as the input of a
-- reversible tool while still tentative: refused at every tier.
CREATE TEMP TABLE tiers AS
SELECT tier, memtx.begin(tier) AS tx FROM unnest(enum_range(NULL::memtx.risk_tier)) tier;
CREATE TEMP TABLE staged AS
SELECT tier, tx, memtx.stage(tx, 'order:841', 'refund_due', 'true', derived_from => ARRAY[:b1]) AS y
  FROM tiers;
SELECT s.tier, a.allowed, a.reason, a.action_id, a.blockers = ARRAY[s.y] AS blockers_are_input
  FROM staged s, memtx.act(s.tx, 'hold_order', '{"order": 841}', ARRAY[s.y]) a ORDER BY s.tier;
-- the same record's parent, revoked, as the input itself: refused at every tier
SELECT s.tier, a.allowed, a.reason, a.blockers = ARRAY[:b1::bigint] AS blockers_are_input
  FROM staged s, memtx.act(s.tx, 'hold_order', '{"order": 841}', ARRAY[:b1::bigint]) a ORDER BY s.tier;
-- only the offending inputs are named (b1 and y, not the healthy g1)
SELECT s.tier, a.reason, a.blockers = ARRAY[:b1::bigint, s.y] AS blockers_are_offenders
  FROM staged s, memtx.act(s.tx, 'hold_order', '{}', ARRAY[s.y, :g1::bigint, :b1::bigint]) a
 WHERE s.tier = 'low';
-- blocked calls are logged and create no record
SELECT count(*) AS tool_actions FROM memtx.records WHERE kind = 'tool_action';
SELECT reason, count(*) FROM memtx.action_log GROUP BY reason ORDER BY reason;
-- the staged records are quarantined at commit, as before
SELECT s.tier, c.state, c.reason
  FROM staged s, memtx.commit(s.tx) c WHERE c.record_id = s.y ORDER BY s.tier;
SELECT * FROM memtx.check_invariants();

-- 2. A registry-listed ancestor counts like a revoked one: s1 is quarantined
-- and registered, not revoked
SELECT memtx.begin('low', isolation => 'raw_read') AS t3 \gset
SELECT memtx.stage(:t3, 'order:841', 'note', '"from digest"', derived_from => ARRAY[:s1]) AS y3 \gset
SELECT * FROM memtx.act(:t3, 'hold_order', '{}', ARRAY[:y3]);
-- a raw_read pin shows s1 itself; still refused, itself included
SELECT * FROM memtx.act(:t3, 'hold_order', '{}', ARRAY[:s1]);
SELECT count(*) FROM memtx.abort(:t3);

-- 3. A raw_read pin shows the revoked belief: refused for irreversible tools
-- too (nothing is in flight, so the gate alone would allow the call)
SELECT memtx.begin('medium', isolation => 'raw_read') AS t4 \gset
SELECT * FROM memtx.gate(:t4, 'issue_refund');
SELECT * FROM memtx.act(:t4, 'issue_refund', '{"order": 841}', ARRAY[:b1]);
SELECT * FROM memtx.act(:t4, 'wire_money', '{"order": 841}', ARRAY[:b1]);
-- at the external_action tier as well
SELECT memtx.begin('external_action', isolation => 'raw_read') AS t5 \gset
SELECT memtx.stage(:t5, 'order:901', 'ok', 'true') AS y5 \gset
SELECT record_id, state FROM memtx.commit(:t5);
SELECT * FROM memtx.act(:t5, 'issue_refund', '{}', ARRAY[:b1, :y5]);
SELECT allowed, reason FROM memtx.act(:t5, 'issue_refund', '{}', ARRAY[:y5]);
SELECT count(*) AS tool_actions FROM memtx.records WHERE kind = 'tool_action';
SELECT * FROM memtx.check_invariants();

-- 4. An input the agent cannot read is not visible, whatever its ancestry:
-- revoked_parent never tells a reader about a record it may not read
CREATE ROLE regress_memtx_agent;
SELECT memtx.begin('medium', agent => 'regress_memtx_agent', isolation => 'raw_read') AS t6 \gset
SELECT * FROM memtx.act(:t6, 'hold_order', '{}', ARRAY[:b1]);
SELECT * FROM memtx.act(:t6, 'hold_order', '{}', ARRAY[:g1]);

-- 5. A tentative input quarantined at commit: the action derived from it is
-- compensated (reversible tool) and revoked, with that record as the root
-- (low tier: committed_read shows an action derived from a tentative record)
SELECT memtx.begin('low') AS t7 \gset
SELECT memtx.stage(:t7, 'order:902', 'refund_eligible', 'true', confidence => 0.1) AS w1 \gset
SELECT memtx.stage(:t7, 'order:902', 'amount', '20', derived_from => ARRAY[:w1]) AS w2 \gset
SELECT memtx.stage(:t7, 'order:903', 'refund_eligible', 'true') AS w3 \gset
SELECT (memtx.act(:t7, 'hold_order', '{"order": 902}', ARRAY[:w2])).action_id AS x1 \gset
SELECT (memtx.act(:t7, 'ping', '{"order": 902}', ARRAY[:w1, :w3])).action_id AS x2 \gset
SELECT (memtx.act(:t7, 'hold_order', '{"order": 903}', ARRAY[:w3])).action_id AS x3 \gset
-- an action derived from an action below w1
SELECT (memtx.act(:t7, 'ping', '{"after": "hold"}', ARRAY[:x1])).action_id AS x4 \gset
-- and a belief of t7's own staging derived from x1
SELECT memtx.stage(:t7, 'order:902', 'note', '"held"', derived_from => ARRAY[:x1]) AS w5 \gset
-- another transaction commits a belief derived from x1
SELECT memtx.begin('low') AS t7b \gset
SELECT memtx.stage(:t7b, 'order:902', 'held', 'true', derived_from => ARRAY[:x1]) AS w4 \gset
SELECT state, reason FROM memtx.commit(:t7b);
SELECT * FROM pg_temp.show(ARRAY[:x1, :x2, :x3, :x4]);
-- the commit quarantines w1 (and w2): the actions below it, and what derives
-- from them, are repaired as in a cascade
SELECT record_id = :w1 AS is_w1, record_id = :w2 AS is_w2, record_id = :w3 AS is_w3,
       record_id = :w5 AS is_w5, state, reason
  FROM memtx.commit(:t7);
SELECT * FROM pg_temp.show(ARRAY[:w1, :w2, :w3, :x1, :x2, :x3, :x4, :w4, :w5]);
SELECT root_id = :w1 AS root_is_w1, record_id, kind, action, reason, note
  FROM memtx.rollback_log WHERE record_id IN (:x1, :x2, :x3, :x4, :w4, :w5) ORDER BY id;
SELECT root_id = :w1 AS root_is_w1, action_id, tool, compensator, args, status
  FROM memtx.compensations WHERE action_id IN (:x1, :x2, :x4) ORDER BY action_id;
SELECT * FROM memtx.check_invariants();
-- x3's input committed: revoking it later repairs x3 as usual
SELECT record_id, kind, action, reason FROM memtx.revoke(:w3) ORDER BY id;
SELECT * FROM memtx.check_invariants();

-- 6. needs_review is a quarantine at commit: the action is repaired then, and
-- stays revoked when a harness later accepts the record
SELECT memtx.register_source('crm', 0.7);
SELECT memtx.register_source('erp', 0.7);
SELECT memtx.begin('medium') AS t8 \gset
SELECT memtx.stage(:t8, 'order:904', 'status', '"paid"', source => 'crm') AS v1 \gset
SELECT record_id, state FROM memtx.commit(:t8);
SELECT memtx.begin('medium') AS t9 \gset
SELECT memtx.stage(:t9, 'order:904', 'status', '"unpaid"', source => 'erp') AS v2 \gset
SELECT (memtx.act(:t9, 'hold_order', '{"order": 904}', ARRAY[:v2])).action_id AS x5 \gset
SELECT state, reason FROM memtx.commit(:t9);
SELECT * FROM pg_temp.show(ARRAY[:v2, :x5]);
SELECT action, reason FROM memtx.rollback_log WHERE record_id = :x5;
SELECT memtx.resolve(:v2, true);
SELECT * FROM pg_temp.show(ARRAY[:v1, :v2, :x5]);
SELECT * FROM memtx.check_invariants();

-- 7. Abort (and so expiry) of the input's transaction repairs the action
SELECT memtx.begin('medium') AS t10 \gset
SELECT memtx.stage(:t10, 'order:905', 'refund_eligible', 'true') AS u1 \gset
SELECT (memtx.act(:t10, 'hold_order', '{"order": 905}', ARRAY[:u1])).action_id AS x6 \gset
SELECT root_id = :u1 AS root_is_u1, record_id = :x6 AS is_x6, kind, action, reason
  FROM memtx.abort(:t10) ORDER BY id;
SELECT * FROM memtx.check_invariants();

-- 8. The checker finds an unrepaired action from the edges alone: quarantine
-- a tentative input behind the API, so no repair runs (and no receipt settles
-- it: I7 says so too, SPEC §17)
BEGIN;
SELECT memtx.begin('medium') AS t11 \gset
SELECT memtx.stage(:t11, 'order:906', 'refund_eligible', 'true') AS z1 \gset
SELECT (memtx.act(:t11, 'hold_order', '{"order": 906}', ARRAY[:z1])).action_id AS x7 \gset
UPDATE memtx.records SET state = 'quarantined', reason = 'low_evidence', verdict = 'quarantined',
       verdict_reason = 'low_evidence', settled_xid = pg_current_xact_id(), settled_pos = nextval('memtx.clock')
 WHERE id = :z1;
SELECT invariant, record_id = :x7 AS is_x7, detail ~ 'quarantined at commit' AS names_the_case
  FROM memtx.check_invariants();
ROLLBACK;

DROP ROLE regress_memtx_agent;
