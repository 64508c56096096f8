-- Verifier metering: one call per record that reaches slot adjudication with at least one rival.
\i test/sql/include/prelude.psql
SELECT memtx.register_source('crm', 0.8);
SELECT memtx.register_source('erp', 0.8);
SELECT memtx.register_source('ledger', 1.0);
SELECT memtx.register_source('chat', 0.5);
SELECT memtx.begin() AS tx;   -- 1
SELECT memtx.stage(1, 's1', 'a', '1', source => 'crm');          -- 1
SELECT memtx.stage(1, 's2', 'a', '1', source => 'crm');          -- 2
SELECT memtx.stage(1, 's2', 'a', '1', source => 'erp');          -- 3 same value: no rival, no call
SELECT memtx.stage(1, 's3', 'a', '1', source => 'crm');          -- 4
SELECT memtx.stage(1, 's4', 'a', '1', source => 'crm');          -- 5
SELECT memtx.stage(1, 's5', 'a', '1', source => 'crm');          -- 6
SELECT * FROM memtx.commit(1);
SELECT verifier_calls FROM memtx.transactions WHERE id = 1;
SELECT count(*) FROM memtx.revoke(6);

SELECT memtx.begin() AS tx;   -- 2
SELECT memtx.stage(2, 'none', 'a', '1');                                   -- no rival: 0
SELECT memtx.stage(2, 's1', 'a', '2', source => 'ledger');                 -- supersedes: 1
SELECT memtx.stage(2, 's2', 'a', '2', source => 'ledger');                 -- two rivals, one call: 1
SELECT memtx.stage(2, 's3', 'a', '2', source => 'chat');                   -- lower_authority: 1
SELECT memtx.stage(2, 's4', 'a', '2', source => 'erp');                    -- needs_review: 1
SELECT memtx.stage(2, 's3', 'a', '3', source => 'chat', confidence => 0);  -- low_evidence before 3d: 0
SELECT memtx.stage(2, 's4', 'a', '3', source => 'erp', valid => '[2000-01-01 00:00+00, 2000-01-02 00:00+00)');  -- outside_validity: 0
SELECT memtx.stage(2, 's3', 'a', '4', source => 'ledger', derived_from => ARRAY[6]);  -- revoked_parent before 3d: 0
SELECT memtx.stage(2, 'none', 'a', '1', source => 'chat');                 -- corroborates a record of this run: 0
SELECT memtx.stage(2, 'new', 'a', '1', source => 'chat');                  -- a new slot
SELECT memtx.stage(2, 'new', 'a', '2', source => 'chat');                  -- rival committed earlier in the run: 1
SELECT * FROM memtx.commit(2);
SELECT id, verifier_calls FROM memtx.transactions ORDER BY id;
SELECT verifier_calls FROM memtx.stats;
-- a repeated commit meters nothing
SELECT count(*) FROM memtx.commit(2);
SELECT count(*) FROM memtx.commit(2);
SELECT verifier_calls FROM memtx.stats;
-- a commit rolled back with its SQL transaction meters nothing: the count is stored with the outcome
SELECT memtx.begin() AS tx;   -- 3
SELECT memtx.stage(3, 's3', 'a', '9', source => 'ledger');
BEGIN;
SELECT count(*) FROM memtx.commit(3);
SELECT verifier_calls FROM memtx.transactions WHERE id = 3;
ROLLBACK;
SELECT verifier_calls, status FROM memtx.transactions WHERE id = 3;
SELECT count(*) FROM memtx.commit(3);
SELECT id, verifier_calls FROM memtx.transactions ORDER BY id;
SELECT verifier_calls FROM memtx.stats;
DROP EXTENSION memtx CASCADE;
