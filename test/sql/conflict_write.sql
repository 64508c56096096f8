-- Commit check 3d, write_not_permitted: superseding a rival requires being its owner or among its writers.
\i test/sql/include/prelude.psql
SELECT memtx.register_source('ledger', 1.0);
SELECT memtx.register_source('chat', 0.5);
SELECT memtx.register_source('chat2', 0.5);
SELECT memtx.register_source('weak', 0.1);
CREATE ROLE regress_memtx_a;
CREATE ROLE regress_memtx_b;
CREATE ROLE regress_memtx_editors;
CREATE ROLE regress_memtx_c;
GRANT regress_memtx_editors TO regress_memtx_c;

-- a's records: no writers; writers b; writers editors (c is a member); public, no writers
SET ROLE regress_memtx_a;
SELECT memtx.begin() AS tx;   -- 1
SELECT memtx.stage(1, 'w1', 'a', '1', source => 'chat', scope => 'public');                                      -- 1
SELECT memtx.stage(1, 'w2', 'a', '1', source => 'chat', scope => 'public', writers => ARRAY['regress_memtx_b']); -- 2
SELECT memtx.stage(1, 'w3', 'a', '1', source => 'chat', scope => 'public', writers => ARRAY['regress_memtx_editors']); -- 3
SELECT memtx.stage(1, 'w4', 'a', '1', source => 'chat', scope => 'public');                                      -- 4
SELECT memtx.stage(1, 'w5', 'a', '1', source => 'chat', scope => 'public');                                      -- 5
SELECT memtx.stage(1, 'w6', 'a', '1', source => 'chat', scope => 'public');                                      -- 6
SELECT record_id, state FROM memtx.commit(1);
RESET ROLE;

-- b outranks every rival by authority
SET ROLE regress_memtx_b;
SELECT memtx.begin() AS tx;   -- 2
SELECT memtx.stage(2, 'w1', 'a', '2', source => 'ledger');      -- 7 not a writer: write_not_permitted
SELECT memtx.stage(2, 'w2', 'a', '2', source => 'ledger');      -- 8 a writer: supersedes
SELECT memtx.stage(2, 'w3', 'a', '2', source => 'ledger');      -- 9 not in editors: write_not_permitted
-- a candidate that would not supersede anyway reports its own outcome
SELECT memtx.stage(2, 'w4', 'a', '2', source => 'chat2');       -- 10 equal, other source: needs_review
SELECT memtx.stage(2, 'w5', 'a', '2', confidence => 0.7, source => 'chat');   -- 11 equal, same source: would supersede: write_not_permitted
SELECT * FROM memtx.commit(2);
RESET ROLE;
-- membership in a writer role counts
SET ROLE regress_memtx_c;
SELECT memtx.begin() AS tx;   -- 3
SELECT memtx.stage(3, 'w3', 'a', '3', source => 'ledger');      -- 12 member of editors: supersedes
SELECT * FROM memtx.commit(3);
RESET ROLE;
-- the owner may always supersede its own record
SET ROLE regress_memtx_a;
SELECT memtx.begin() AS tx;   -- 4
SELECT memtx.stage(4, 'w1', 'a', '4', source => 'ledger');      -- 13
SELECT * FROM memtx.commit(4);
RESET ROLE;
-- a lower-authority candidate is lower_authority whether or not it may write
SET ROLE regress_memtx_b;
SELECT memtx.begin() AS tx;   -- 5
SELECT memtx.stage(5, 'w6', 'a', '2', source => 'weak');        -- 14 rival 6 (chat, no writers): lower_authority
SELECT memtx.stage(5, 'w1', 'a', '5', source => 'weak');        -- 15 rival 13 (ledger): lower_authority
SELECT memtx.stage(5, 'w6', 'b', '2', source => 'weak');        -- 16 no rival on w6.b
SELECT * FROM memtx.commit(5);
RESET ROLE;

SELECT id, entity, value, owner, writers, state, reason FROM memtx.records ORDER BY id;
-- single truth holds: no two active records on one slot disagree
SELECT count(*) AS disagreeing_active_pairs
  FROM memtx.records a JOIN memtx.records b
    ON a.namespace = b.namespace AND a.entity = b.entity AND a.attribute = b.attribute
   AND a.id < b.id AND a.valid && b.valid AND a.value::text <> b.value::text
 WHERE a.state IN ('committed', 'action_safe') AND b.state IN ('committed', 'action_safe');
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_a;
DROP ROLE regress_memtx_b;
DROP ROLE regress_memtx_c;
DROP ROLE regress_memtx_editors;
