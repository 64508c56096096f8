-- Staging order: records are admitted in staging order; each one committed earlier in the run is active for later ones.
\i test/sql/include/prelude.psql
SELECT memtx.register_source('ledger', 1.0);
SELECT memtx.register_source('chat', 0.5);
SELECT memtx.register_source('weak', 0.3);

-- a parent committed earlier in the run is an active parent for its child, down a chain
SELECT memtx.begin() AS tx;   -- 1
SELECT memtx.stage(1, 'p', 'a', '1');                                     -- 1
SELECT memtx.stage(1, 'c', 'a', '1', derived_from => ARRAY[1]);           -- 2
SELECT memtx.stage(1, 'g', 'a', '1', derived_from => ARRAY[2]);           -- 3
SELECT * FROM memtx.commit(1);
-- a parent that fails earlier in the run takes its descendants with it
SELECT memtx.begin() AS tx;   -- 2
SELECT memtx.stage(2, 'p', 'b', '1', confidence => 0.2);                  -- 4
SELECT memtx.stage(2, 'c', 'b', '1', derived_from => ARRAY[4]);           -- 5
SELECT memtx.stage(2, 'g', 'b', '1', derived_from => ARRAY[5]);           -- 6
SELECT memtx.stage(2, 'x', 'b', '1');                                     -- 7 unrelated: passes
SELECT * FROM memtx.commit(2);

-- one slot, one transaction: a record committed earlier in the run is a rival for a later one
SELECT memtx.begin() AS tx;   -- 3
SELECT memtx.stage(3, 's1', 'a', '1', source => 'chat');                  -- 8
SELECT memtx.stage(3, 's1', 'a', '2', source => 'chat');                  -- 9 same source, equal: supersedes 8
SELECT memtx.stage(3, 's2', 'a', '1', source => 'chat');                  -- 10
SELECT memtx.stage(3, 's2', 'a', '2', source => 'weak');                  -- 11 lower_authority against 10
SELECT memtx.stage(3, 's3', 'a', '1', source => 'weak');                  -- 12
SELECT memtx.stage(3, 's3', 'a', '2', source => 'ledger');                -- 13 supersedes 12
SELECT memtx.stage(3, 's3', 'a', '3', source => 'chat');                  -- 14 lower_authority against 13, not 12
SELECT * FROM memtx.commit(3);
SELECT id, entity, value, state, reason, verdict FROM memtx.records WHERE tx_id = 3 ORDER BY id;
-- the order is the staging order: reversing it reverses the outcome
SELECT memtx.begin() AS tx;   -- 4
SELECT memtx.stage(4, 's4', 'a', '2', source => 'ledger');                -- 15
SELECT memtx.stage(4, 's4', 'a', '1', source => 'weak');                  -- 16 lower_authority
SELECT memtx.begin() AS tx;   -- 5
SELECT memtx.stage(5, 's5', 'a', '1', source => 'weak');                  -- 17
SELECT memtx.stage(5, 's5', 'a', '2', source => 'ledger');                -- 18 supersedes
SELECT * FROM memtx.commit(4);
SELECT * FROM memtx.commit(5);

-- interleaved slots and a derivation across them, at the external_action tier
SELECT memtx.begin('external_action') AS tx;   -- 6
SELECT memtx.stage(6, 'e1', 'a', '1', source => 'chat');                  -- 19
SELECT memtx.stage(6, 'e2', 'a', '1', derived_from => ARRAY[19]);         -- 20
SELECT memtx.stage(6, 'e1', 'a', '2', source => 'weak');                  -- 21 lower_authority against 19
SELECT memtx.stage(6, 'e3', 'a', '1', derived_from => ARRAY[20, 21]);     -- 22 inactive_parent (21)
SELECT memtx.stage(6, 'e4', 'a', '1', derived_from => ARRAY[20]);         -- 23 action_safe parent: passes
SELECT * FROM memtx.commit(6);
SELECT memtx.begin() AS tx;   -- 7
SELECT * FROM memtx.commit(7);
SELECT id, status FROM memtx.transactions ORDER BY id;
-- single truth holds: no two active records on one slot disagree
SELECT count(*) AS disagreeing_active_pairs
  FROM memtx.records a JOIN memtx.records b
    ON a.namespace = b.namespace AND a.entity = b.entity AND a.attribute = b.attribute
   AND a.id < b.id AND a.valid && b.valid AND a.value::text <> b.value::text
 WHERE a.state IN ('committed', 'action_safe') AND b.state IN ('committed', 'action_safe');
DROP EXTENSION memtx CASCADE;
