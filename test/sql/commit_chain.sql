-- Deep derivation chains: a chain staged in one transaction commits (check 4 walks each
-- parent's ancestry only outside the run), and a revoked root at depth is still found.
\i test/sql/include/prelude.psql
-- stage a chain of depth d in transaction tx below parent (NULL: a root); returns its ids
CREATE FUNCTION pg_temp.chain(tx bigint, name text, d integer, parent bigint)
RETURNS SETOF bigint LANGUAGE plpgsql AS $$
DECLARE p bigint := parent;
BEGIN
    FOR i IN 1..d LOOP
        p := memtx.stage(tx, name || i, 'a', '1',
                         derived_from => CASE WHEN p IS NULL THEN '{}' ELSE ARRAY[p] END);
        RETURN NEXT p;
    END LOOP;
END $$;

-- 2,000 deep in one transaction: every record commits
SELECT memtx.begin() AS tx \gset
SELECT count(*) FROM pg_temp.chain(:tx, 'deep', 2000, NULL);
SELECT state, reason, count(*) FROM memtx.commit(:tx) GROUP BY state, reason;
SELECT id AS root FROM memtx.records WHERE entity = 'deep1' \gset
SELECT id AS tail FROM memtx.records WHERE entity = 'deep2000' \gset

-- The committed chain's root is retracted, its repair not yet run (a cascade repairs the
-- descendants in the same SQL transaction, so the state is made with a direct write, as
-- superuser, as in commit_dependency).
UPDATE memtx.records SET state = 'revoked', reason = 'revoked' WHERE id = :root;

-- a second chain of 2,000 staged below the tail: the first record finds the revoked root
-- 2,000 ancestors up; every later one has a quarantined parent
SELECT memtx.begin() AS tx \gset
SELECT count(*) FROM pg_temp.chain(:tx, 'below', 2000, :tail);
SELECT c.state, c.reason, count(*), (array_agg(r.entity ORDER BY r.staged_pos))[1] AS first
  FROM memtx.commit(:tx) c JOIN memtx.records r ON r.id = c.record_id
 GROUP BY c.state, c.reason ORDER BY min(r.staged_pos);

-- a record with two parents, one admitted earlier in the same run and one whose ancestry
-- outside the run is unstable: the walk skips the first and still finds the second's; a
-- second record below the same parent gets the same answer (walked once per commit)
SELECT id AS mid FROM memtx.records WHERE entity = 'deep1000' \gset
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'fresh', 'a', '1') AS fresh \gset
SELECT memtx.stage(:tx, 'both', 'a', '1', derived_from => ARRAY[:fresh, :mid]) AS both \gset
SELECT memtx.stage(:tx, 'only_fresh', 'a', '1', derived_from => ARRAY[:fresh]) AS only_fresh \gset
SELECT memtx.stage(:tx, 'also_mid', 'a', '1', derived_from => ARRAY[:mid]) AS also_mid \gset
SELECT r.entity, c.state, c.reason
  FROM memtx.commit(:tx) c JOIN memtx.records r ON r.id = c.record_id ORDER BY c.record_id;

-- an ancestor in the revocation registry at depth (a view being rebuilt, still active): likewise
SELECT memtx.begin() AS tx \gset
SELECT count(*) FROM pg_temp.chain(:tx, 'reg', 500, NULL);
SELECT state, count(*) FROM memtx.commit(:tx) GROUP BY state;
SELECT id AS reg_root FROM memtx.records WHERE entity = 'reg1' \gset
SELECT id AS reg_tail FROM memtx.records WHERE entity = 'reg500' \gset
INSERT INTO memtx.revocation_registry (record_id, root_id, namespace) VALUES (:reg_root, :reg_root, 'default');
SELECT memtx.begin() AS tx \gset
SELECT count(*) FROM pg_temp.chain(:tx, 'under', 3, :reg_tail);
SELECT r.entity, c.state, c.reason
  FROM memtx.commit(:tx) c JOIN memtx.records r ON r.id = c.record_id ORDER BY c.record_id;
-- cleared from the registry, the same derivation commits
DELETE FROM memtx.revocation_registry WHERE record_id = :reg_root;
SELECT memtx.begin() AS tx \gset
SELECT count(*) FROM pg_temp.chain(:tx, 'again', 3, :reg_tail);
SELECT r.entity, c.state, c.reason
  FROM memtx.commit(:tx) c JOIN memtx.records r ON r.id = c.record_id ORDER BY c.record_id;
DROP EXTENSION memtx CASCADE;
