-- Commit check 3d, slot adjudication: stale_late_write, authority, same-source supersession, needs_review, corroboration.
\i test/sql/include/prelude.psql
SELECT memtx.register_source('ledger', 1.0);
SELECT memtx.register_source('crm', 0.8);
SELECT memtx.register_source('crm2', 0.8);
SELECT memtx.register_source('chat', 0.5);
CREATE VIEW pg_temp.slot AS
    SELECT id, entity, value, source, authority, state, reason FROM memtx.records ORDER BY id;

-- stale_late_write (1): a rival committed by another transaction after the snapshot,
-- even against a candidate of higher authority
SELECT memtx.begin() AS tx;   -- 1: began first
SELECT memtx.begin() AS tx;   -- 2
SELECT memtx.stage(2, 's1', 'a', '"rival"', source => 'chat');            -- 1
SELECT record_id, state FROM memtx.commit(2);
SELECT memtx.stage(1, 's1', 'a', '"late"', source => 'ledger');           -- 2
SELECT * FROM memtx.commit(1);
-- a transaction begun after that commit supersedes by authority
SELECT memtx.begin() AS tx;   -- 3
SELECT memtx.stage(3, 's1', 'a', '"fresh"', source => 'ledger');          -- 3
SELECT * FROM memtx.commit(3);
SELECT * FROM pg_temp.slot WHERE entity = 's1';

-- stale_late_write (2): a rival observed later than the candidate (both observed_at set);
-- observation times are not later than memtx.now()
SET memtx.logical_now = '2030-12-31 00:00:00+00';
SELECT memtx.begin() AS tx;   -- 4
SELECT memtx.stage(4, 's2', 'a', '1', source => 'chat', observed_at => '2030-02-01 00:00+00');   -- 4
SELECT memtx.stage(4, 's3', 'a', '1', source => 'chat', observed_at => '2030-02-01 00:00+00');   -- 5
SELECT memtx.stage(4, 's4', 'a', '1', source => 'chat');                                         -- 6 no observed_at
SELECT record_id, state FROM memtx.commit(4);
SELECT memtx.begin() AS tx;   -- 5
SELECT memtx.stage(5, 's2', 'a', '2', source => 'ledger', observed_at => '2030-01-01 00:00+00'); -- 7 older: stale
SELECT memtx.stage(5, 's3', 'a', '2', source => 'ledger', observed_at => '2030-02-01 00:00+00'); -- 8 same time: supersedes
SELECT memtx.stage(5, 's4', 'a', '2', source => 'ledger', observed_at => '2000-01-01 00:00+00'); -- 9 rival has none: supersedes
SELECT * FROM memtx.commit(5);
-- a candidate without observed_at is never stale by observation
SELECT memtx.begin() AS tx;   -- 6
SELECT memtx.stage(6, 's5', 'a', '1', source => 'chat', observed_at => '2030-02-01 00:00+00');   -- 10
SELECT record_id, state FROM memtx.commit(6);
SELECT memtx.begin() AS tx;   -- 7
SELECT memtx.stage(7, 's5', 'a', '2', source => 'ledger');                                       -- 11
SELECT * FROM memtx.commit(7);
-- observed_at inherited from a parent makes a re-derivation as old as its input
SELECT memtx.begin() AS tx;   -- 8
SELECT memtx.stage(8, 'toolresult', 'a', '1', observed_at => '2029-01-01 00:00+00');             -- 12
SELECT record_id, state FROM memtx.commit(8);
SELECT memtx.begin() AS tx;   -- 9
SELECT memtx.stage(9, 's6', 'a', '"new"', source => 'chat', observed_at => '2030-01-01 00:00+00'); -- 13
SELECT record_id, state FROM memtx.commit(9);
SELECT memtx.begin() AS tx;   -- 10
SELECT memtx.stage(10, 's6', 'a', '"retry"', source => 'ledger', derived_from => ARRAY[12]);   -- 14
SELECT observed_at AT TIME ZONE 'UTC' AS inherited FROM memtx.records WHERE id = 14;
SELECT * FROM memtx.commit(10);
RESET memtx.logical_now;

-- authority: lower loses, higher supersedes
SELECT memtx.begin() AS tx;   -- 11
SELECT memtx.stage(11, 'a1', 'a', '1', source => 'crm');        -- 15
SELECT memtx.stage(11, 'a2', 'a', '1', source => 'crm');        -- 16
SELECT record_id, state FROM memtx.commit(11);
SELECT memtx.begin() AS tx;   -- 12
SELECT memtx.stage(12, 'a1', 'a', '2', source => 'chat');       -- 17 0.5 < 0.8: lower_authority
SELECT memtx.stage(12, 'a2', 'a', '2', source => 'ledger');     -- 18 1.0 > 0.8: supersedes
SELECT * FROM memtx.commit(12);
SELECT * FROM pg_temp.slot WHERE entity IN ('a1', 'a2');
-- equal authority: the same source supersedes, different sources need review
SELECT memtx.begin() AS tx;   -- 13
SELECT memtx.stage(13, 'a3', 'a', '1', source => 'crm');        -- 19
SELECT memtx.stage(13, 'a4', 'a', '1', source => 'crm');        -- 20
SELECT memtx.stage(13, 'a5', 'a', '1');                         -- 21 no source (default authority 0.5)
SELECT memtx.stage(13, 'a6', 'a', '1');                         -- 22 no source
SELECT record_id, state FROM memtx.commit(13);
SELECT memtx.begin() AS tx;   -- 14
SELECT memtx.stage(14, 'a3', 'a', '2', source => 'crm');        -- 23 same source: supersedes
SELECT memtx.stage(14, 'a4', 'a', '2', source => 'crm2');       -- 24 other source, same 0.8: needs_review
SELECT memtx.stage(14, 'a5', 'a', '2');                         -- 25 neither has a source: same (none), supersedes
SELECT memtx.stage(14, 'a6', 'a', '2', source => 'chat');       -- 26 0.5 from chat vs 0.5 from none: needs_review
SELECT * FROM memtx.commit(14);
SELECT * FROM pg_temp.slot WHERE entity IN ('a3', 'a4', 'a5', 'a6');
SELECT record_id, entity, value, rival_ids FROM memtx.review_queue ORDER BY record_id;

-- same value corroborates and commits (canonical text: key order does not matter, 1 and 1.0 differ)
SELECT memtx.begin() AS tx;   -- 15
SELECT memtx.stage(15, 'v', 'a', '{"a": 1, "b": 2}', source => 'ledger');   -- 27
SELECT memtx.stage(15, 'n', 'a', '1', source => 'ledger');                  -- 28
SELECT record_id, state FROM memtx.commit(15);
SELECT memtx.begin() AS tx;   -- 16
SELECT memtx.stage(16, 'v', 'a', '{"b": 2, "a": 1}', source => 'chat');     -- 29 corroborates
SELECT memtx.stage(16, 'n', 'a', '1.0', source => 'chat');                  -- 30 a different value: lower_authority
SELECT * FROM memtx.commit(16);
SELECT * FROM pg_temp.slot WHERE entity IN ('v', 'n');

-- rivals are on the same namespace, entity and attribute, with overlapping validity
SET memtx.logical_now = '2030-06-01 00:00:00+00';
SELECT memtx.begin() AS tx;   -- 17
SELECT memtx.stage(17, 'r', 'a', '1', source => 'ledger', valid => '[2030-01-01 00:00+00, 2031-01-01 00:00+00)');  -- 31
SELECT record_id, state FROM memtx.commit(17);
SELECT memtx.begin() AS tx;   -- 18
SELECT memtx.stage(18, 'r', 'b', '2', source => 'chat');                                                 -- 32 other attribute
SELECT memtx.stage(18, 'r', 'a', '2', source => 'chat', valid => '[2030-06-01 00:00+00, 2030-07-01 00:00+00)');   -- 33 overlaps: lower
SELECT * FROM memtx.commit(18);
SET memtx.logical_now = '2031-06-01 00:00:00+00';
SELECT memtx.begin() AS tx;   -- 19
SELECT memtx.stage(19, 'r', 'a', '3', source => 'chat', valid => '[2031-01-01 00:00+00, 2032-01-01 00:00+00)');   -- 34 adjacent: no rival
SELECT * FROM memtx.commit(19);
SELECT memtx.begin('medium', namespace => 'elsewhere') AS tx;   -- 20
SELECT memtx.stage(20, 'r', 'a', '4', source => 'chat');                                                 -- 35 other namespace
SELECT * FROM memtx.commit(20);
RESET memtx.logical_now;

-- records committed by the same transaction are never stale to it; a same-value record from
-- the same transaction corroborates
SELECT memtx.begin() AS tx;   -- 21
SELECT memtx.stage(21, 't', 'a', '1', source => 'chat');        -- 36
SELECT memtx.stage(21, 't', 'a', '1', source => 'crm');         -- 37 same value
SELECT memtx.stage(21, 't', 'a', '2', source => 'ledger');      -- 38 supersedes both
SELECT * FROM memtx.commit(21);
SELECT * FROM pg_temp.slot WHERE entity = 't';

-- adjudication is check 3d: earlier rules win (a revoked parent and a rival)
SELECT memtx.begin() AS tx;   -- 22
SELECT memtx.stage(22, 'u', 'a', '1', source => 'ledger');      -- 39
SELECT record_id, state FROM memtx.commit(22);
SELECT count(*) FROM memtx.revoke(36);
SELECT memtx.begin() AS tx;   -- 23
SELECT memtx.stage(23, 'u', 'a', '2', source => 'chat', derived_from => ARRAY[36]);   -- 40
SELECT * FROM memtx.commit(23);

-- the observation rule applies within one transaction too: older information staged later is stale
SET memtx.logical_now = '2030-12-31 00:00:00+00';
SELECT memtx.begin() AS tx;   -- 24
SELECT memtx.stage(24, 'o', 'a', '1', source => 'chat', observed_at => '2030-02-01 00:00+00');     -- 41
SELECT memtx.stage(24, 'o', 'a', '2', source => 'ledger', observed_at => '2030-01-01 00:00+00');   -- 42
SELECT * FROM memtx.commit(24);
RESET memtx.logical_now;

-- single truth holds: no two active records on one slot disagree
SELECT count(*) AS disagreeing_active_pairs
  FROM memtx.records a JOIN memtx.records b
    ON a.namespace = b.namespace AND a.entity = b.entity AND a.attribute = b.attribute
   AND a.id < b.id AND a.valid && b.valid AND a.value::text <> b.value::text
 WHERE a.state IN ('committed', 'action_safe') AND b.state IN ('committed', 'action_safe');
SELECT quarantines_by_reason FROM memtx.stats;
DROP VIEW pg_temp.slot;
DROP EXTENSION memtx CASCADE;
