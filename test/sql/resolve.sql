-- memtx.resolve: settles needs_review records only; accept commits and supersedes, reject revokes with cascade.
\i test/sql/include/prelude.psql
SELECT memtx.register_source('crm', 0.8);
SELECT memtx.register_source('erp', 0.8);
SELECT memtx.register_source('ledger', 1.0);
CREATE ROLE regress_memtx_agent;
-- rivals: r1 on s1; r2, r3 agree on s2; r4 on s3; p (parent) and r5 on s4
SELECT memtx.begin() AS tx;   -- 1
SELECT memtx.stage(1, 's1', 'a', '1', source => 'crm');                              -- 1
SELECT memtx.stage(1, 's2', 'a', '1', source => 'crm');                              -- 2
SELECT memtx.stage(1, 's2', 'a', '1', source => 'erp');                              -- 3 corroborates 2
SELECT memtx.stage(1, 's3', 'a', '1', source => 'crm');                              -- 4
SELECT memtx.stage(1, 'p', 'a', '1', source => 'crm');                               -- 5
SELECT memtx.stage(1, 's4', 'a', '1', source => 'crm');                              -- 6
SELECT memtx.stage(1, 's5', 'a', '1', source => 'crm');                              -- 7
SELECT record_id, state FROM memtx.commit(1);
-- contenders from another source of equal authority
SELECT memtx.begin() AS tx;   -- 2
SELECT memtx.stage(2, 's1', 'a', '2', source => 'erp');                              -- 8  needs_review
SELECT memtx.stage(2, 's2', 'a', '2', source => 'ledger', confidence => 0.1);        -- 9  low_evidence
SELECT memtx.stage(2, 's3', 'a', '2', source => 'erp');                              -- 10 needs_review
SELECT memtx.stage(2, 'child', 'a', '2', derived_from => ARRAY[10]);                 -- 11 inactive_parent
SELECT memtx.stage(2, 's4', 'a', '2', source => 'erp', derived_from => ARRAY[5]);    -- 12 needs_review
SELECT memtx.stage(2, 'ok', 'a', '1');                                               -- 13 committed
SELECT * FROM memtx.commit(2);
SELECT memtx.begin('external_action') AS tx;   -- 3
SELECT memtx.stage(3, 's5', 'a', '2', source => 'erp');                              -- 14 needs_review
SELECT * FROM memtx.commit(3);
SELECT memtx.begin() AS tx;   -- 4: a contender against two agreeing rivals
SELECT memtx.stage(4, 's2', 'a', '3', source => 'ledger');                           -- 15 supersedes both
SELECT memtx.stage(4, 's2', 'b', '3', source => 'erp');                              -- 16 no rival
SELECT record_id, state FROM memtx.commit(4);
SELECT record_id, entity, rival_ids FROM memtx.review_queue ORDER BY record_id;

-- accept: committed, every active rival superseded
SELECT memtx.resolve(8, true);
SELECT id, state, reason, verdict FROM memtx.records WHERE id IN (1, 8) ORDER BY id;
-- accept at the external_action tier: action_safe
SELECT memtx.resolve(record => 14, accept => true);
SELECT id, state FROM memtx.records WHERE id IN (7, 14) ORDER BY id;
-- reject: revoked, and its descendants repaired (the child quarantined at commit is revoked)
SELECT memtx.resolve(10, false);
SELECT id, state, reason FROM memtx.records WHERE id IN (4, 10, 11) ORDER BY id;
SELECT root_id, record_id, action, reason, note FROM memtx.rollback_log ORDER BY id;
-- accept when an ancestor is no longer active: an error, nothing changes; reject still works
SELECT memtx.begin() AS tx;   -- 5
SELECT memtx.stage(5, 'p', 'a', '9', source => 'ledger');                            -- 17 supersedes p (5)
SELECT record_id, state FROM memtx.commit(5);
SELECT pg_temp.try('SELECT memtx.resolve(12, true)');
SELECT id, state, reason FROM memtx.records WHERE id IN (5, 6, 12) ORDER BY id;
SELECT memtx.resolve(12, false);

-- only a needs_review record can be resolved (55000)
SELECT memtx.begin() AS tx;   -- 6
SELECT memtx.stage(6, 'tent', 'a', '1');                                             -- 18 tentative
SELECT pg_temp.try('SELECT memtx.resolve(9, true)');     -- quarantined, low_evidence
SELECT pg_temp.try('SELECT memtx.resolve(13, true)');    -- committed
SELECT pg_temp.try('SELECT memtx.resolve(8, true)');     -- already accepted
SELECT pg_temp.try('SELECT memtx.resolve(10, true)');    -- already rejected
SELECT pg_temp.try('SELECT memtx.resolve(18, false)');   -- tentative
SELECT pg_temp.try('SELECT memtx.resolve(2, false)');    -- superseded
-- bad input
SELECT pg_temp.try('SELECT memtx.resolve(NULL, true)');
SELECT pg_temp.try('SELECT memtx.resolve(8, NULL)');
SELECT pg_temp.try('SELECT memtx.resolve(999, true)');
-- a harness operation (42501)
SELECT memtx.begin() AS tx;   -- 7
SELECT memtx.stage(7, 's1', 'a', '3', source => 'crm');                              -- 19
SELECT * FROM memtx.commit(7);
SET ROLE regress_memtx_agent;
SELECT pg_temp.try('SELECT memtx.resolve(19, true)');
SELECT pg_temp.try('SELECT memtx.resolve(19, false)');
RESET ROLE;
SELECT id, state, reason FROM memtx.records WHERE id = 19;

-- the review queue is empty once every review is settled; resolving runs no verifier
SELECT memtx.resolve(19, false);
SELECT count(*) AS waiting FROM memtx.review_queue;
SELECT id, verifier_calls FROM memtx.transactions ORDER BY id;
-- commit's stored outcome is unchanged by a resolution
SELECT * FROM memtx.commit(3);
-- single truth holds: no two active records on one slot disagree
SELECT count(*) AS disagreeing_active_pairs
  FROM memtx.records a JOIN memtx.records b
    ON a.namespace = b.namespace AND a.entity = b.entity AND a.attribute = b.attribute
   AND a.id < b.id AND a.valid && b.valid AND a.value::text <> b.value::text
 WHERE a.state IN ('committed', 'action_safe') AND b.state IN ('committed', 'action_safe');
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_agent;
