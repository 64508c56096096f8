-- Commit check 1, evidence: confidence >= memtx.confidence_threshold unless authority >= memtx.authority_bypass; both inclusive.
\i test/sql/include/prelude.psql
SELECT memtx.register_source('bypass', 0.9);
SELECT memtx.register_source('almost', 0.8999);
SELECT memtx.register_source('weak', 0.1);
SHOW memtx.confidence_threshold;
SHOW memtx.authority_bypass;

SELECT memtx.begin() AS tx;   -- 1
SELECT memtx.stage(1, 'e1', 'a', '1', confidence => 0.6);                       -- 1 at the threshold: passes
SELECT memtx.stage(1, 'e2', 'a', '1', confidence => 0.5999);                    -- 2 below: low_evidence
SELECT memtx.stage(1, 'e3', 'a', '1', confidence => 1.0);                       -- 3 default source, full confidence
SELECT memtx.stage(1, 'e4', 'a', '1', confidence => 0, source => 'bypass');     -- 4 authority = bypass: passes
SELECT memtx.stage(1, 'e5', 'a', '1', confidence => 0.59, source => 'almost');  -- 5 authority just below: low_evidence
SELECT memtx.stage(1, 'e6', 'a', '1', confidence => 0.6, source => 'weak');     -- 6 weak source, enough confidence
SELECT memtx.stage(1, 'e7', 'a', '1', confidence => 0);                         -- 7 no evidence at all
SELECT * FROM memtx.commit(1);
SELECT id, state, reason, verdict, verdict_reason, confidence, authority FROM memtx.records ORDER BY id;

-- evidence is the first check: a record that would also fail validity reports low_evidence
SET memtx.logical_now = '2030-06-01 00:00:00+00';
SELECT memtx.begin() AS tx;   -- 2
SELECT memtx.stage(2, 'f1', 'a', '1', confidence => 0.1, valid => '[2000-01-01 00:00+00, 2001-01-01 00:00+00)');
SELECT * FROM memtx.commit(2);
RESET memtx.logical_now;

-- the thresholds are settings (superuser): both boundaries move with them, still inclusive
SET memtx.confidence_threshold = 0.8;
SET memtx.authority_bypass = 1.0;
SELECT memtx.register_source('perfect', 1.0);
SELECT memtx.begin() AS tx;   -- 3
SELECT memtx.stage(3, 'g1', 'a', '1', confidence => 0.8);                       -- passes
SELECT memtx.stage(3, 'g2', 'a', '1', confidence => 0.79);                      -- low_evidence
SELECT memtx.stage(3, 'g3', 'a', '1', confidence => 0.5, source => 'bypass');   -- 0.9 no longer bypasses
SELECT memtx.stage(3, 'g4', 'a', '1', confidence => 0.0, source => 'perfect');  -- 1.0 = bypass
SELECT * FROM memtx.commit(3);
RESET memtx.confidence_threshold;
RESET memtx.authority_bypass;
-- threshold 0 lets everything through; a threshold of 1 needs certainty or the bypass
SET memtx.confidence_threshold = 0;
SELECT memtx.begin() AS tx;   -- 4
SELECT memtx.stage(4, 'h1', 'a', '1', confidence => 0);
SELECT * FROM memtx.commit(4);
SET memtx.confidence_threshold = 1;
SELECT memtx.begin() AS tx;   -- 5
SELECT memtx.stage(5, 'h2', 'a', '1', confidence => 0.9999);
SELECT memtx.stage(5, 'h3', 'a', '1', confidence => 1);
SELECT * FROM memtx.commit(5);
RESET memtx.confidence_threshold;

SELECT quarantines, quarantines_by_reason, commits FROM memtx.stats;
SELECT id, status FROM memtx.transactions ORDER BY id;
DROP EXTENSION memtx CASCADE;
