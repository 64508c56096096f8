-- effect_key (SPEC §5): an effect is at most once per namespace; a blocked
-- call does not use its key up.
\i test/sql/include/prelude.psql
CREATE FUNCTION pg_temp.counts(OUT log_rows bigint, OUT tool_actions bigint) LANGUAGE sql AS $$
SELECT (SELECT count(*) FROM memtx.action_log),
       (SELECT count(*) FROM memtx.records WHERE kind = 'tool_action') $$;

SELECT memtx.register_tool('issue_refund', false);
SELECT memtx.register_tool('hold_order', true, 'release_order');

SELECT memtx.begin('medium') AS tx1 \gset
SELECT memtx.stage(:tx1, 'order:841', 'refund_eligible', 'true') AS r1 \gset
SELECT * FROM memtx.commit(:tx1);

-- the first call with a key executes
SELECT * FROM memtx.act(:tx1, 'issue_refund', '{"order": 841}', ARRAY[:r1], effect_key => 'refund-841');
SELECT * FROM pg_temp.counts();
-- a retry returns the same decision and records nothing new
SELECT * FROM memtx.act(:tx1, 'issue_refund', '{"order": 841}', ARRAY[:r1], effect_key => 'refund-841');
SELECT * FROM pg_temp.counts();
-- from another transaction of the same agent, with the same tool and arguments
-- (canonical jsonb text: spacing does not matter): still the first decision
SELECT memtx.begin('medium') AS tx2 \gset
SELECT * FROM memtx.act(:tx2, 'issue_refund', '{ "order" :841 }', effect_key => 'refund-841');
SELECT * FROM pg_temp.counts();
-- a key binds tool, agent and canonical arguments (SPEC §16): another of
-- them is an error (23505) that records nothing
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, effect_key => %L)',
                          :tx2, 'issue_refund', '{"order": 841, "retry": true}', 'refund-841'));
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, effect_key => %L)',
                          :tx2, 'issue_refund', '{"order": 841.0}', 'refund-841'));
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, effect_key => %L)',
                          :tx2, 'hold_order', '{"order": 841}', 'refund-841'));
CREATE ROLE regress_memtx_other;
SELECT memtx.begin('medium', agent => 'regress_memtx_other') AS tx_other \gset
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, effect_key => %L)',
                          :tx_other, 'issue_refund', '{"order": 841}', 'refund-841'));
SET ROLE regress_memtx_other;
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, effect_key => %L)',
                          :tx_other, 'issue_refund', '{"order": 841}', 'refund-841'));
RESET ROLE;
SELECT * FROM pg_temp.counts();
-- even while the gate would now block the call
SELECT memtx.stage(:tx2, 'order:900', 'note', '"pending"') AS r2 \gset
SELECT * FROM memtx.act(:tx1, 'issue_refund', '{"order": 841}', ARRAY[:r1], effect_key => 'refund-841');
SELECT * FROM pg_temp.counts();

-- a blocked call does not use its key up
SELECT * FROM memtx.act(:tx1, 'issue_refund', '{"order": 842}', ARRAY[:r1], effect_key => 'refund-842');
SELECT * FROM memtx.act(:tx1, 'issue_refund', '{"order": 842}', ARRAY[:r1], effect_key => 'refund-842');
SELECT * FROM pg_temp.counts();
SELECT id, allowed, reason, blockers, action_id, effect_key FROM memtx.action_log WHERE effect_key = 'refund-842' ORDER BY id;
-- once nothing is in flight the same key executes, once
SELECT * FROM memtx.commit(:tx2);
SELECT * FROM memtx.act(:tx1, 'issue_refund', '{"order": 842}', ARRAY[:r1], effect_key => 'refund-842');
SELECT * FROM memtx.act(:tx1, 'issue_refund', '{"order": 842}', ARRAY[:r1], effect_key => 'refund-842');
SELECT * FROM pg_temp.counts();
SELECT id, allowed, reason, blockers, action_id FROM memtx.action_log WHERE effect_key = 'refund-842' ORDER BY id;

-- keys are per namespace: the same key elsewhere is a different effect
SELECT memtx.begin('medium', namespace => 'shop-b') AS tx3 \gset
SELECT * FROM memtx.act(:tx3, 'issue_refund', '{"order": 841}', effect_key => 'refund-841');
SELECT * FROM memtx.act(:tx3, 'issue_refund', '{"order": 841}', effect_key => 'refund-841');
SELECT namespace, effect_key, count(*) AS allowed_calls
  FROM memtx.action_log WHERE allowed AND effect_key IS NOT NULL
 GROUP BY namespace, effect_key ORDER BY namespace, effect_key;

-- calls without a key are not deduplicated; reversible tools use keys the same way
SELECT action_id FROM memtx.act(:tx1, 'hold_order', '{"order": 841}');
SELECT action_id FROM memtx.act(:tx1, 'hold_order', '{"order": 841}');
SELECT action_id FROM memtx.act(:tx1, 'hold_order', '{"order": 841}', effect_key => 'hold-841');
SELECT action_id FROM memtx.act(:tx1, 'hold_order', '{"order": 841}', effect_key => 'hold-841');

-- a key stays used after its action is repaired by a cascade
SELECT record_id, kind, action, reason FROM memtx.revoke(:r1, 'lookup was wrong');
SELECT * FROM memtx.act(:tx2, 'issue_refund', '{"order": 841}', effect_key => 'refund-841');
SELECT * FROM pg_temp.counts();

-- a key first used by a reversible tool, while state is in flight: an
-- irreversible call with the same key is refused, not answered "allowed"
SELECT memtx.begin('medium') AS tx5 \gset
SELECT memtx.stage(:tx5, 'order:950', 'note', '"pending"') AS r5 \gset
SELECT allowed, reason FROM memtx.act(:tx5, 'hold_order', '{"order": 950}', effect_key => 'order-950');
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, effect_key => %L)',
                          :tx5, 'issue_refund', '{"order": 950}', 'order-950'));
SELECT allowed, reason, blockers = ARRAY[:r5::bigint] AS blocked_by_r5
  FROM memtx.act(:tx5, 'issue_refund', '{"order": 950}', effect_key => 'order-951');
SELECT * FROM pg_temp.counts();
SELECT count(*) FROM memtx.abort(:tx5);

-- an aborted transaction cannot replay a key
SELECT memtx.begin('medium') AS tx4 \gset
SELECT count(*) FROM memtx.abort(:tx4);
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, effect_key => %L)', :tx4, 'issue_refund', '{}', 'refund-841'));

-- the database holds the rule too: one allowed row per (namespace, key)
SELECT pg_temp.try($$INSERT INTO memtx.action_log (tx_id, namespace, tool, reversible, allowed, effect_key,
                       gate_snapshot, gate_xid, gate_pos)
                     VALUES (1, 'default', 'issue_refund', false, true, 'refund-841',
                             pg_current_snapshot(), pg_current_xact_id(), 0)$$);

-- a key whose action is erased (SPEC §13) stays used, and no call is its
-- repeat: erasure nulled the args it bound, so neither the same args nor
-- JSON null (what the log now holds) match it; 23505, nothing recorded
SELECT memtx.begin('medium') AS tx6 \gset
SELECT action_id AS act6 FROM memtx.act(:tx6, 'issue_refund', '{"order": 960}', effect_key => 'refund-960') \gset
SELECT count(*) FROM memtx.erase(:act6, 'erasure request');
SELECT args, allowed FROM memtx.action_log WHERE effect_key = 'refund-960';
SELECT * FROM pg_temp.counts();
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, effect_key => %L)',
                          :tx6, 'issue_refund', '{"order": 960}', 'refund-960'));
SELECT pg_temp.try(format('SELECT memtx.act(%s, %L, %L, effect_key => %L)',
                          :tx6, 'issue_refund', 'null', 'refund-960'));
SELECT * FROM pg_temp.counts();

DROP ROLE regress_memtx_other;
