-- Commit check 2, validity: valid @> memtx.now(), judged by the logical clock.
\i test/sql/include/prelude.psql
SET memtx.logical_now = '2030-06-01 00:00:00+00';
SELECT memtx.begin() AS tx;   -- 1
SELECT memtx.stage(1, 'v1', 'a', '1', valid => '[2030-01-01 00:00+00, 2031-01-01 00:00+00)');   -- 1 inside
SELECT memtx.stage(1, 'v2', 'a', '1', valid => '[2031-01-01 00:00+00, 2032-01-01 00:00+00)');   -- 2 future
SELECT memtx.stage(1, 'v3', 'a', '1', valid => '[2029-01-01 00:00+00, 2030-01-01 00:00+00)');   -- 3 past
SELECT memtx.stage(1, 'v4', 'a', '1', valid => '[2030-06-01 00:00+00, 2030-07-01 00:00+00)');   -- 4 lower bound = now: inclusive
SELECT memtx.stage(1, 'v5', 'a', '1', valid => '[2030-05-01 00:00+00, 2030-06-01 00:00+00)');   -- 5 upper bound = now: exclusive
SELECT memtx.stage(1, 'v6', 'a', '1', valid => '(2030-06-01 00:00+00, 2030-07-01 00:00+00]');   -- 6 exclusive lower = now
SELECT memtx.stage(1, 'v7', 'a', '1', valid => '[2030-05-01 00:00+00, 2030-06-01 00:00+00]');   -- 7 inclusive upper = now
SELECT memtx.stage(1, 'v8', 'a', '1');                                                        -- 8 unbounded (default)
SELECT memtx.stage(1, 'v9', 'a', '1', valid => '[2030-06-01 00:00+00,)');                      -- 9 open-ended
SELECT memtx.stage(1, 'v10', 'a', '1', valid => '(,2030-06-01 00:00+00)');                     -- 10 until now
SELECT * FROM memtx.commit(1);
-- the range is judged in absolute time, whatever the session time zone
SET TimeZone = 'Asia/Tokyo';
SELECT memtx.begin() AS tx;   -- 2
SELECT memtx.stage(2, 'v11', 'a', '1', valid => '[2030-06-01 09:00+09, 2030-06-01 10:00+09)');  -- starts at now
SELECT * FROM memtx.commit(2);
RESET TimeZone;

-- moving the clock changes the verdict of the same range
SET memtx.logical_now = '2031-06-01 00:00:00+00';
SELECT memtx.begin() AS tx;   -- 3
SELECT memtx.stage(3, 'w1', 'a', '1', valid => '[2031-01-01 00:00+00, 2032-01-01 00:00+00)');   -- 12 was the future
SELECT memtx.stage(3, 'w2', 'a', '1', valid => '[2030-01-01 00:00+00, 2031-01-01 00:00+00)');   -- 13 is now the past
SELECT * FROM memtx.commit(3);
-- without the logical clock, the transaction timestamp decides
RESET memtx.logical_now;
SELECT memtx.begin() AS tx;   -- 4
SELECT memtx.stage(4, 'x1', 'a', '1', valid => '[2000-01-01 00:00+00, 2001-01-01 00:00+00)');
SELECT memtx.stage(4, 'x2', 'a', '1', valid => tstzrange(now() - interval '1 day', now() + interval '1 day'));
SELECT record_id, state, reason FROM memtx.commit(4);

-- the clock is read at commit, not at staging
SET memtx.logical_now = '2000-06-01 00:00:00+00';
SELECT memtx.begin() AS tx;   -- 5
SELECT memtx.stage(5, 'y1', 'a', '1', valid => '[2030-01-01 00:00+00, 2031-01-01 00:00+00)');
SET memtx.logical_now = '2030-03-01 00:00:00+00';
SELECT * FROM memtx.commit(5);

-- validity comes after evidence and before conflict: a low-evidence record reports low_evidence,
-- a record with a revoked parent that is outside its validity reports outside_validity
SELECT memtx.begin() AS tx;   -- 6
SELECT memtx.stage(6, 'z0', 'a', '1');
SELECT * FROM memtx.commit(6);
SELECT count(*) FROM memtx.revoke(17);
SELECT memtx.begin() AS tx;   -- 7
SELECT memtx.stage(7, 'z1', 'a', '1', derived_from => ARRAY[17], valid => '[2000-01-01 00:00+00, 2001-01-01 00:00+00)');
SELECT memtx.stage(7, 'z2', 'a', '1', confidence => 0.1, valid => '[2000-01-01 00:00+00, 2001-01-01 00:00+00)');
SELECT memtx.stage(7, 'z3', 'a', '1', derived_from => ARRAY[17]);
SELECT * FROM memtx.commit(7);
RESET memtx.logical_now;
SELECT quarantines_by_reason FROM memtx.stats;
DROP EXTENSION memtx CASCADE;
