-- Commit check 3d against several rivals: the strictest outcome applies; the candidate supersedes all or none.
\i test/sql/include/prelude.psql
SELECT memtx.register_source('crm', 0.8);
SELECT memtx.register_source('chat', 0.5);
SELECT memtx.register_source('chat2', 0.5);
SELECT memtx.register_source('weak', 0.3);
CREATE ROLE regress_memtx_a;
CREATE ROLE regress_memtx_b;
-- Active rivals on one slot must agree with each other (single truth), so each slot gets
-- corroborating records of value 1 from different sources; the candidates say 2.
SET ROLE regress_memtx_b;
SELECT memtx.begin() AS tx;   -- 1
SELECT memtx.stage(1, 's1', 'a', '1', source => 'crm', writers => ARRAY['regress_memtx_b']);     -- 1
SELECT memtx.stage(1, 's2', 'a', '1', source => 'crm', writers => ARRAY['regress_memtx_b']);     -- 2
SELECT memtx.stage(1, 's2', 'a', '1', source => 'weak', writers => ARRAY['regress_memtx_b']);    -- 3
SELECT memtx.stage(1, 's3', 'a', '1', source => 'weak', writers => ARRAY['regress_memtx_b']);    -- 4
SELECT memtx.stage(1, 's3', 'a', '1', source => 'chat2', writers => ARRAY['regress_memtx_b']);   -- 5
SELECT memtx.stage(1, 's4', 'a', '1', source => 'weak', writers => ARRAY['regress_memtx_b']);    -- 6
SELECT memtx.stage(1, 's4', 'a', '1', source => 'chat', writers => ARRAY['regress_memtx_b']);    -- 7
SELECT record_id, state FROM memtx.commit(1);
RESET ROLE;
SET ROLE regress_memtx_a;
SELECT memtx.begin() AS tx;   -- 2: a's records, b not among their writers
SELECT memtx.stage(2, 's5', 'a', '1', source => 'weak', scope => 'public');    -- 8
SELECT memtx.stage(2, 's5', 'a', '1', source => 'chat2', scope => 'public');   -- 9
SELECT memtx.stage(2, 's6', 'a', '1', source => 'weak', scope => 'public');    -- 10
SELECT memtx.stage(2, 's6', 'a', '1', source => 'crm', scope => 'public');     -- 11
SELECT memtx.stage(2, 's7', 'a', '1', source => 'weak', scope => 'public');    -- 12
SELECT record_id, state FROM memtx.commit(2);
RESET ROLE;
SET ROLE regress_memtx_b;
SELECT memtx.begin() AS tx;   -- 3: the candidates' transaction
SELECT memtx.begin() AS tx;   -- 4: commits one more rival on s1 after 3's snapshot
SELECT memtx.stage(4, 's1', 'a', '1', source => 'weak', writers => ARRAY['regress_memtx_b']);    -- 13
SELECT memtx.stage(4, 's7', 'a', '1', source => 'chat2', writers => ARRAY['regress_memtx_b']);   -- 14
SELECT record_id, state FROM memtx.commit(4);

SELECT memtx.stage(3, 's1', 'a', '2', source => 'chat');   -- 15 lower (1) + stale (13): stale_late_write
SELECT memtx.stage(3, 's2', 'a', '2', source => 'chat');   -- 16 lower (2) + beats (3): lower_authority
SELECT memtx.stage(3, 's3', 'a', '2', source => 'chat');   -- 17 beats (4) + review (5): needs_review
SELECT memtx.stage(3, 's4', 'a', '2', source => 'chat');   -- 18 beats (6) + same source (7): supersedes both
SELECT memtx.stage(3, 's5', 'a', '2', source => 'chat');   -- 19 write (8) + review (9): write_not_permitted
SELECT memtx.stage(3, 's6', 'a', '2', source => 'chat');   -- 20 write (10) + lower (11): lower_authority
SELECT memtx.stage(3, 's7', 'a', '2', source => 'chat');   -- 21 write (12) + stale (14): stale_late_write
SELECT * FROM memtx.commit(3);
RESET ROLE;
-- only s4's rivals were superseded; every other rival stays committed
SELECT id, entity, value, source, state, reason FROM memtx.records ORDER BY entity, id;
-- one verifier call per candidate that reached adjudication with rivals
SELECT id, verifier_calls FROM memtx.transactions ORDER BY id;
SELECT record_id, rival_ids FROM memtx.review_queue;
-- single truth holds: no two active records on one slot disagree
SELECT count(*) AS disagreeing_active_pairs
  FROM memtx.records a JOIN memtx.records b
    ON a.namespace = b.namespace AND a.entity = b.entity AND a.attribute = b.attribute
   AND a.id < b.id AND a.valid && b.valid AND a.value::text <> b.value::text
 WHERE a.state IN ('committed', 'action_safe') AND b.state IN ('committed', 'action_safe');
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_a;
DROP ROLE regress_memtx_b;
