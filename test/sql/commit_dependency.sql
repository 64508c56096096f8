-- Commit check 4, dependency stability: a transitive ancestor revoked or in the revocation registry.
\i test/sql/include/prelude.psql
SELECT memtx.register_source('crm', 0.8);
SELECT memtx.register_source('chat', 0.5);
-- chains g <- p (<- q): every record active
SELECT memtx.begin() AS tx;   -- 1
SELECT memtx.stage(1, 'g1', 'a', '1');                                    -- 1
SELECT memtx.stage(1, 'p1', 'a', '1', derived_from => ARRAY[1]);          -- 2
SELECT memtx.stage(1, 'g2', 'a', '1');                                    -- 3
SELECT memtx.stage(1, 'p2', 'a', '1', derived_from => ARRAY[3]);          -- 4
SELECT memtx.stage(1, 'q2', 'a', '1', derived_from => ARRAY[4]);          -- 5
SELECT memtx.stage(1, 'g3', 'a', '1');                                    -- 6
SELECT memtx.stage(1, 'p3', 'a', '1', derived_from => ARRAY[6]);          -- 7
SELECT memtx.stage(1, 'g4', 'a', '1');                                    -- 8
SELECT memtx.stage(1, 'p4', 'a', '1', derived_from => ARRAY[8]);          -- 9
SELECT memtx.stage(1, 'g5', 'a', '1', source => 'chat');                  -- 10
SELECT memtx.stage(1, 'p5', 'a', '1', derived_from => ARRAY[10]);         -- 11
SELECT memtx.stage(1, 'rival', 'a', '1', source => 'crm');                -- 12
SELECT memtx.stage(1, 'g6', 'a', '1');                                    -- 13
SELECT memtx.stage(1, 'p6', 'a', '1', derived_from => ARRAY[13]);         -- 14
SELECT record_id, state FROM memtx.commit(1);

-- A retraction whose repair has not reached the descendants yet (a cascade repairs them in
-- the same SQL transaction, so the state is made here with direct writes, as superuser):
-- g1 and g2 revoked, g3 listed in the revocation registry while still active.
UPDATE memtx.records SET state = 'revoked', reason = 'revoked' WHERE id IN (1, 3);
INSERT INTO memtx.revocation_registry (record_id, root_id, namespace) VALUES (6, 6, 'default');
-- g4 merely superseded: not a dependency failure (verified_read hides its descendants)
SELECT memtx.begin() AS tx;   -- 2
SELECT memtx.stage(2, 'g4', 'a', '2', source => 'crm');                   -- 15
SELECT record_id, state FROM memtx.commit(2);
-- g6 quarantined in place: not a dependency failure either
UPDATE memtx.records SET state = 'quarantined', reason = 'invalidated' WHERE id = 13;

SELECT memtx.begin() AS tx;   -- 3
SELECT memtx.stage(3, 'c1', 'a', '1', derived_from => ARRAY[2]);          -- 16 grandparent revoked
SELECT memtx.stage(3, 'c2', 'a', '1', derived_from => ARRAY[5]);          -- 17 great-grandparent revoked
SELECT memtx.stage(3, 'c3', 'a', '1', derived_from => ARRAY[7]);          -- 18 grandparent in the registry
SELECT memtx.stage(3, 'c4', 'a', '1', derived_from => ARRAY[9]);          -- 19 grandparent superseded: committed
SELECT memtx.stage(3, 'c6', 'a', '1', derived_from => ARRAY[14]);         -- 20 grandparent quarantined: committed
SELECT memtx.stage(3, 'c0', 'a', '1', derived_from => ARRAY[1]);          -- 21 parent revoked: check 3a first
SELECT memtx.stage(3, 'c5', 'a', '1', derived_from => ARRAY[16]);         -- 22 parent quarantined earlier in the run
SELECT * FROM memtx.commit(3);

-- dependency stability is the last check: a conflict on the slot is reported instead
SELECT memtx.begin() AS tx;   -- 4
SELECT memtx.stage(4, 'rival', 'a', '2', source => 'chat', derived_from => ARRAY[2]);   -- 23 lower_authority
SELECT memtx.stage(4, 'c7', 'a', '2', confidence => 0.1, derived_from => ARRAY[2]);     -- 24 low_evidence
SELECT * FROM memtx.commit(4);
-- once the registry entry is cleared (view rebuilt), the same derivation commits
DELETE FROM memtx.revocation_registry WHERE record_id = 6;
SELECT memtx.begin() AS tx;   -- 5
SELECT memtx.stage(5, 'c3', 'a', '1', derived_from => ARRAY[7]);          -- 25
SELECT * FROM memtx.commit(5);
SELECT quarantines_by_reason FROM memtx.stats;
DROP EXTENSION memtx CASCADE;
