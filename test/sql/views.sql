-- Observability views (SPEC §9): in_flight, review_queue, rollback_log, stats.
\i test/sql/include/prelude.psql

SELECT memtx.register_source('crm', 0.7);
SELECT memtx.register_source('erp', 0.7);
SELECT memtx.register_tool('issue_refund', false);
SELECT memtx.register_tool('hold_order', true, 'release_order');

-- an empty store: every counter is zero
\x on
SELECT * FROM memtx.stats;
\x off

-- in_flight: tentative records and their transactions, across namespaces
SELECT memtx.begin('medium') AS t1 \gset
SELECT memtx.begin('medium', namespace => 'other') AS t2 \gset
SELECT memtx.stage(:t1, 'order:841', 'refund_eligible', 'true', source => 'crm') AS r1 \gset
SELECT memtx.stage(:t1, 'order:841', 'amount', '20', source => 'crm', confidence => 0.3) AS r2 \gset
SELECT memtx.stage(:t2, 'order:1', 'x', '1') AS r3 \gset
SELECT record_id, tx_id, namespace, entity, attribute FROM memtx.in_flight ORDER BY record_id;
-- gate blocks are counted when act records them (the gate itself is a probe)
SELECT allowed, reason FROM memtx.gate(:t1, 'issue_refund');
SELECT allowed, reason FROM memtx.act(:t1, 'issue_refund', '{}');
SELECT allowed, reason FROM memtx.act(:t1, 'issue_refund', '{}');
SELECT record_id, state, reason FROM memtx.commit(:t1);
SELECT count(*) FROM memtx.abort(:t2);
SELECT count(*) AS in_flight FROM memtx.in_flight;

-- review_queue: equal authority from different sources needs review
SELECT memtx.begin('medium') AS t3 \gset
SELECT memtx.stage(:t3, 'order:841', 'refund_eligible', 'false', source => 'erp') AS r4 \gset
SELECT memtx.stage(:t3, 'order:842', 'refund_eligible', 'true', source => 'erp') AS r5 \gset
SELECT record_id, state, reason FROM memtx.commit(:t3);
SELECT record_id, tx_id, entity, attribute, value, rival_ids FROM memtx.review_queue;
-- a second contender on the same slot joins the queue with the same rival
SELECT memtx.begin('medium') AS t4 \gset
SELECT memtx.stage(:t4, 'order:841', 'refund_eligible', '"maybe"', source => 'erp') AS r6 \gset
SELECT record_id, state, reason FROM memtx.commit(:t4);
SELECT record_id, value, rival_ids FROM memtx.review_queue ORDER BY record_id;
-- both queues apply the reader's row-level security: a role that may read
-- none of these records sees none of them (the 0.1.0 -> 0.2.0 step had lost
-- review_queue's security_invoker, so it showed every role every record)
CREATE ROLE memtx_views_stranger;
SET ROLE memtx_views_stranger;
SELECT (SELECT count(*) FROM memtx.review_queue) AS review_seen, (SELECT count(*) FROM memtx.in_flight) AS in_flight_seen;
RESET ROLE;
DROP ROLE memtx_views_stranger;
-- resolving settles it: rejected contenders leave the queue, accepted ones supersede
SELECT memtx.resolve(:r6, false);
SELECT memtx.resolve(:r4, true);
SELECT record_id FROM memtx.review_queue;
SELECT id, state FROM memtx.records WHERE id IN (:r1, :r4, :r6) ORDER BY id;

-- actions and cascades
SELECT memtx.begin('medium') AS t5 \gset
SELECT memtx.stage(:t5, 'customer:7', 'profile', '"refund due"', kind => 'profile', derived_from => ARRAY[:r4]) AS r7 \gset
SELECT record_id, state FROM memtx.commit(:t5);
SELECT allowed FROM memtx.act(:t5, 'issue_refund', '{"order": 841}', ARRAY[:r4]);
SELECT allowed FROM memtx.act(:t5, 'hold_order', '{"order": 841}', ARRAY[:r7]);
SELECT allowed FROM memtx.act(:t5, 'hold_order', '{"order": 842}', ARRAY[:r5]);
SELECT root_id, record_id, kind, action, reason, note FROM memtx.revoke(:r4, 'crm was right') ORDER BY id;
SELECT root_id, record_id, kind, action, reason, note FROM memtx.revoke(:r5) ORDER BY id;
-- rollback_log is the full record of repairs
SELECT root_id, record_id, kind, action, reason, note FROM memtx.rollback_log ORDER BY id;

-- the counters, each checked against what happened above:
--   commits 3 and quarantines 3 count commit verdicts: r1, r5, r7 committed;
--   r2 low_evidence, r4 and r6 needs_review (r4's later acceptance by resolve
--   is not a second verdict; r3 was aborted before any commit);
--   verifier_calls 2 (r4 and r6 met rival r1); actions_allowed 3;
--   gate_blocks 2 (the probe through memtx.gate is not counted);
--   cascades 4: one per retraction root (abort of t2, rejection of r6, two
--   revokes); leaks 1 (the refund); compensations 2 (the two holds);
--   commit_quarantines 3 (quarantines under the name that says what it
--   counts); cascade_quarantines 1 (the profile r7, by the revoke of r4);
--   cascade_revocations 0 (the actions below r4 and r5 were leaked or
--   compensated, and no belief derived from them)
\x on
SELECT * FROM memtx.stats;
\x off
SELECT (SELECT count(*) FROM memtx.action_log WHERE NOT allowed) AS blocked_calls,
       (SELECT count(DISTINCT root_id) FROM memtx.rollback_log) AS roots;
