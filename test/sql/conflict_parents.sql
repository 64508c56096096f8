-- Commit check 3a/3b, parents: revoked_parent (incl. the revocation registry), uncommitted_parent, inactive_parent.
\i test/sql/include/prelude.psql
SELECT memtx.register_source('ledger', 1.0);
-- base records: p1 (to be revoked), p2 (belief with a summary view), p3 (to be superseded)
SELECT memtx.begin() AS tx;   -- 1
SELECT memtx.stage(1, 'p1', 'a', '1');                                       -- 1
SELECT memtx.stage(1, 'p2', 'a', '2');                                       -- 2
SELECT memtx.stage(1, 'view', 'a', '3', kind => 'summary', derived_from => ARRAY[2]);   -- 3
SELECT memtx.stage(1, 'p3', 'a', '4');                                       -- 4
SELECT memtx.stage(1, 'p4', 'a', '5', confidence => 0.1);                    -- 5 quarantined at commit
SELECT * FROM memtx.commit(1);

-- revoked parent
SELECT count(*) FROM memtx.revoke(1);
-- a parent in the revocation registry: revoking p2 quarantines the summary and registers it
SELECT count(*) FROM memtx.revoke(2);
SELECT id, state, reason FROM memtx.records WHERE id <= 5 ORDER BY id;
SELECT record_id, root_id FROM memtx.revocation_registry;
-- superseded parent
SELECT memtx.begin() AS tx;   -- 2
SELECT memtx.stage(2, 'p3', 'a', '40', source => 'ledger');                  -- 6
SELECT * FROM memtx.commit(2);
-- tentative parent of another, still-open transaction
SELECT memtx.begin() AS tx;   -- 3
SELECT memtx.stage(3, 'open', 'a', '1');                                     -- 7
SELECT memtx.stage(3, 'open2', 'a', '1');                                    -- 8

SELECT memtx.begin() AS tx;   -- 4
SELECT memtx.stage(4, 'c1', 'a', '1', derived_from => ARRAY[1]);             -- 9  revoked_parent
SELECT memtx.stage(4, 'c2', 'a', '1', derived_from => ARRAY[3]);             -- 10 registry: revoked_parent
SELECT memtx.stage(4, 'c3', 'a', '1', derived_from => ARRAY[7]);             -- 11 uncommitted_parent
SELECT memtx.stage(4, 'c4', 'a', '1', derived_from => ARRAY[5]);             -- 12 quarantined: inactive_parent
SELECT memtx.stage(4, 'c5', 'a', '1', derived_from => ARRAY[4]);             -- 13 superseded: inactive_parent
SELECT memtx.stage(4, 'c6', 'a', '1', derived_from => ARRAY[6]);             -- 14 active parent: committed
-- several parents: revoked before uncommitted before inactive
SELECT memtx.stage(4, 'c7', 'a', '1', derived_from => ARRAY[5, 7, 1]);       -- 15 revoked_parent
SELECT memtx.stage(4, 'c8', 'a', '1', derived_from => ARRAY[4, 8]);          -- 16 uncommitted_parent
SELECT memtx.stage(4, 'c9', 'a', '1', derived_from => ARRAY[6, 5]);          -- 17 inactive_parent
SELECT * FROM memtx.commit(4);

-- a registry-listed parent that is still active is a revoked parent too
SELECT memtx.begin() AS tx;   -- 5
SELECT memtx.stage(5, 'c10', 'a', '1', derived_from => ARRAY[14]);           -- 18
INSERT INTO memtx.revocation_registry (record_id, root_id, namespace) VALUES (14, 14, 'default');
SELECT * FROM memtx.commit(5);
DELETE FROM memtx.revocation_registry WHERE record_id = 14;

-- the parent's transaction commits: the same derivation now passes
SELECT record_id, state FROM memtx.commit(3);
SELECT memtx.begin() AS tx;   -- 6
SELECT memtx.stage(6, 'c11', 'a', '1', derived_from => ARRAY[7, 8]);         -- 19
SELECT * FROM memtx.commit(6);
-- a parent aborted by its transaction is revoked
SELECT memtx.begin() AS tx;   -- 7
SELECT memtx.stage(7, 'gone', 'a', '1');                                     -- 20
SELECT memtx.begin() AS tx;   -- 8
SELECT memtx.stage(8, 'c12', 'a', '1', derived_from => ARRAY[20]);           -- 21
SELECT count(*) FROM memtx.abort(7);
SELECT id, state, reason FROM memtx.records WHERE id IN (20, 21);
-- the parent's own transaction: a parent quarantined earlier in the run is inactive
SELECT memtx.begin() AS tx;   -- 9
SELECT memtx.stage(9, 'own', 'a', '1', confidence => 0.1);                   -- 22
SELECT memtx.stage(9, 'own2', 'a', '1', derived_from => ARRAY[22]);          -- 23
SELECT * FROM memtx.commit(9);

SELECT quarantines_by_reason FROM memtx.stats;
DROP EXTENSION memtx CASCADE;
