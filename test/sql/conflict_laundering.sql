-- Commit check 3c, permission_laundering: a child may not widen its parents' audience; the read set counts as parents.
\i test/sql/include/prelude.psql
CREATE ROLE regress_memtx_a;
CREATE ROLE regress_memtx_b;
CREATE ROLE regress_memtx_c;
CREATE ROLE regress_memtx_team;
GRANT regress_memtx_team TO regress_memtx_b;
SET ROLE regress_memtx_a;
SELECT memtx.begin() AS tx;   -- 1
SELECT memtx.stage(1, 'priv', 'a', '1');                                                   -- 1 private, no readers
SELECT memtx.stage(1, 'shr', 'a', '1', scope => 'shared', readers => ARRAY['regress_memtx_b']);   -- 2 shared to b
SELECT memtx.stage(1, 'pub', 'a', '1', scope => 'public');                                 -- 3 public
SELECT memtx.stage(1, 'privb', 'a', '1', readers => ARRAY['regress_memtx_b', 'regress_memtx_c']); -- 4 private, readers b, c
SELECT memtx.stage(1, 'team', 'a', '1', scope => 'shared', readers => ARRAY['regress_memtx_team']); -- 5 shared to a group
SELECT record_id, state FROM memtx.commit(1);

SELECT memtx.begin() AS tx;   -- 2
-- scope: private parent -> shared or public child; shared parent -> public child
SELECT memtx.stage(2, 'k1', 'a', '1', derived_from => ARRAY[1], scope => 'shared');        -- 6  laundering
SELECT memtx.stage(2, 'k2', 'a', '1', derived_from => ARRAY[1], scope => 'public');        -- 7  laundering
SELECT memtx.stage(2, 'k3', 'a', '1', derived_from => ARRAY[2], scope => 'public');        -- 8  laundering
SELECT memtx.stage(2, 'k4', 'a', '1', derived_from => ARRAY[1]);                           -- 9  private, no readers: ok
SELECT memtx.stage(2, 'k5', 'a', '1', derived_from => ARRAY[2], scope => 'shared',
                   readers => ARRAY['regress_memtx_b']);                                   -- 10 same audience: ok
SELECT memtx.stage(2, 'k6', 'a', '1', derived_from => ARRAY[3], scope => 'public');        -- 11 public parent: ok
-- readers: a non-public parent's readers must include every reader of the child
SELECT memtx.stage(2, 'k7', 'a', '1', derived_from => ARRAY[1], readers => ARRAY['regress_memtx_b']);  -- 12 laundering
SELECT memtx.stage(2, 'k8', 'a', '1', derived_from => ARRAY[2], scope => 'shared',
                   readers => ARRAY['regress_memtx_b', 'regress_memtx_c']);                -- 13 laundering
SELECT memtx.stage(2, 'k9', 'a', '1', derived_from => ARRAY[4], readers => ARRAY['regress_memtx_c']);  -- 14 narrower: ok
SELECT memtx.stage(2, 'k10', 'a', '1', derived_from => ARRAY[2, 4],
                   readers => ARRAY['regress_memtx_b']);                                   -- 15 b reads both: ok
SELECT memtx.stage(2, 'k11', 'a', '1', derived_from => ARRAY[2, 4],
                   readers => ARRAY['regress_memtx_c']);                                   -- 16 c cannot read 2: laundering
SELECT memtx.stage(2, 'k11b', 'a', '1', derived_from => ARRAY[2, 4], scope => 'shared',
                   readers => ARRAY['regress_memtx_b']);                                   -- 18 private parent 4, shared child: laundering
-- readers are compared as role names: b is a member of team, yet naming b widens team's record
SELECT memtx.stage(2, 'k12', 'a', '1', derived_from => ARRAY[5], scope => 'shared',
                   readers => ARRAY['regress_memtx_b']);                                   -- 18 laundering
SELECT memtx.stage(2, 'k13', 'a', '1', derived_from => ARRAY[3], scope => 'public',
                   readers => ARRAY['regress_memtx_c']);                                   -- 19 public parent: ok
SELECT * FROM memtx.commit(2);
RESET ROLE;

-- the read set: what the transaction read is an implicit parent (memtx.flow_control = read_set)
SHOW memtx.flow_control;
SET ROLE regress_memtx_a;
SELECT memtx.begin() AS tx;   -- 3
SELECT id FROM memtx.read(3, 'priv', 'a');
SELECT memtx.stage(3, 'copy', 'a', '1', scope => 'public');                               -- 20 transcription: laundering
SELECT memtx.stage(3, 'copy2', 'a', '1', readers => ARRAY['regress_memtx_c']);            -- 21 wider readers: laundering
SELECT memtx.stage(3, 'copy3', 'a', '1');                                                  -- 22 private, no readers: ok
SELECT * FROM memtx.commit(3);
-- reading public records only leaves the audience open
SELECT memtx.begin() AS tx;   -- 4
SELECT id FROM memtx.read(4, 'pub', 'a');
SELECT memtx.stage(4, 'copy4', 'a', '1', scope => 'public');                              -- 23 ok
SELECT * FROM memtx.commit(4);
-- a record staged by the same transaction is not laundering through itself
SELECT memtx.begin() AS tx;   -- 5
SELECT memtx.stage(5, 'own', 'a', '1', scope => 'public');                                -- 24
SELECT id FROM memtx.read(5, 'own', 'a');
SELECT * FROM memtx.commit(5);
RESET ROLE;

-- memtx.flow_control = declared: only declared parents count
SET memtx.flow_control = 'declared';
SET ROLE regress_memtx_a;
SELECT memtx.begin() AS tx;   -- 6
SELECT id FROM memtx.read(6, 'priv', 'a');
SELECT memtx.stage(6, 'copy5', 'a', '1', scope => 'public');                              -- 25 ok under declared
SELECT memtx.stage(6, 'copy6', 'a', '1', derived_from => ARRAY[1], scope => 'public');    -- 26 declared: laundering
SELECT * FROM memtx.commit(6);
RESET ROLE;
RESET memtx.flow_control;
-- the setting is trusted configuration
SET ROLE regress_memtx_a;
SELECT pg_temp.try('SET memtx.flow_control = ''declared''');
RESET ROLE;

-- permission_laundering comes after the parent-state rules: an inactive private parent
SELECT memtx.begin() AS tx;   -- 7
SELECT memtx.stage(7, 'weak', 'a', '1', confidence => 0.1);                               -- 27
SELECT * FROM memtx.commit(7);
SELECT memtx.begin() AS tx;   -- 8
SELECT memtx.stage(8, 'w2', 'a', '1', derived_from => ARRAY[27], scope => 'public');      -- 28
SELECT * FROM memtx.commit(8);

SELECT quarantines_by_reason FROM memtx.stats;
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_a;
DROP ROLE regress_memtx_b;
DROP ROLE regress_memtx_c;
DROP ROLE regress_memtx_team;
