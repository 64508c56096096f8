-- memtx.stats (SPEC §9) names what it counts: a quarantine at commit (a
-- commit verdict) and a quarantine by a cascade (a view set aside for
-- rebuilding) are different counters, and so are a retraction's root and
-- the descendants its cascade revokes.  Every column carries a comment that
-- says what it counts.
\i test/sql/include/prelude.psql

SELECT memtx.begin() AS t1 \gset
SELECT memtx.stage(:t1, 'order:1', 'eligible', 'true') AS belief \gset
SELECT memtx.stage(:t1, 'order:1', 'weak', 'true', confidence => 0.1) AS weak \gset
SELECT memtx.stage(:t1, 'order:1', 'reason', '"lamp"', derived_from => ARRAY[:belief]) AS child \gset
SELECT memtx.stage(:t1, 'customer:7', 'profile', '{}', kind => 'profile',
                   derived_from => ARRAY[:belief]) AS profile \gset
SELECT record_id = :weak AS weak, state, reason FROM memtx.commit(:t1) ORDER BY record_id;

-- one commit quarantine, no cascade yet
SELECT commits, quarantines, commit_quarantines, cascade_quarantines, cascade_revocations, cascades
  FROM memtx.stats;

-- the belief is retracted: its child belief is revoked, the profile quarantined
SELECT record_id = :belief AS root, kind, action, reason FROM memtx.revoke(:belief) ORDER BY id;
SELECT commits, quarantines, commit_quarantines, cascade_quarantines, cascade_revocations, cascades,
       quarantines_by_reason
  FROM memtx.stats;

-- every column says what it counts
SELECT a.attname
  FROM pg_attribute a
 WHERE a.attrelid = 'memtx.stats'::regclass AND a.attnum > 0
   AND coalesce(col_description(a.attrelid, a.attnum), '') = '';
SELECT a.attnum, a.attname FROM pg_attribute a
 WHERE a.attrelid = 'memtx.stats'::regclass AND a.attnum > 12 ORDER BY a.attnum;
SELECT col_description('memtx.stats'::regclass, 4) AS quarantines;
