-- Proposals (SPEC §10): expected heads, judged first in check 3d; proposal ids bound once per namespace; outcome; propose.
\i test/sql/include/prelude.psql
\i test/sql/include/show_records.psql
SELECT memtx.register_source('ledger', 1.0);
SELECT memtx.register_source('crm', 0.8);
SELECT memtx.register_source('erp', 0.8);
SELECT memtx.register_source('chat', 0.5);
CREATE ROLE regress_memtx_prop;
\i test/sql/include/fails.psql
CREATE VIEW pg_temp.counts AS
    SELECT (SELECT count(*) FROM memtx.records) AS records, (SELECT count(*) FROM memtx.edges) AS edges,
           (SELECT count(*) FROM memtx.transactions) AS transactions;

-- typed absence: 0 expects an empty head set
SELECT memtx.begin() AS tx;   -- 1
SELECT memtx.stage(1, 'h1', 'a', '1', source => 'crm', scope => 'public', expected_head => 0);   -- 1
SELECT * FROM memtx.commit(1);
-- 0 on an occupied slot is stale_head whatever the value, and before authority
SELECT memtx.begin() AS tx;   -- 2
SELECT memtx.stage(2, 'h1', 'a', '1', expected_head => 0);                      -- 2 same value
SELECT memtx.stage(2, 'h1', 'a', '2', source => 'ledger', expected_head => 0);  -- 3 would supersede
SELECT memtx.stage(2, 'h1', 'a', '2', source => 'chat', expected_head => 0);    -- 4 would be lower_authority
SELECT * FROM memtx.commit(2);
-- the exact head: the candidate supersedes as usual (same source)
SELECT memtx.begin() AS tx;   -- 3
SELECT memtx.stage(3, 'h1', 'a', '3', source => 'crm', scope => 'public', expected_head => 1);   -- 5
SELECT * FROM memtx.commit(3);
-- a head that was superseded is no longer the head
SELECT memtx.begin() AS tx;   -- 4
SELECT memtx.stage(4, 'h1', 'a', '4', source => 'ledger', expected_head => 1);  -- 6
SELECT * FROM memtx.commit(4);
-- a same value expecting the head corroborates; a record committed earlier in the run is a head
SELECT memtx.begin() AS tx;   -- 5
SELECT memtx.stage(5, 'h1', 'a', '3', source => 'erp', expected_head => 5);     -- 7 corroborates
SELECT memtx.stage(5, 'h1', 'a', '3', source => 'crm', expected_head => 5);     -- 8 two heads now (5 and 7)
SELECT memtx.stage(5, 'h9', 'a', '1', expected_head => 0);                      -- 9
SELECT memtx.stage(5, 'h9', 'a', '2', expected_head => 0);                      -- 10 9 committed first
SELECT * FROM memtx.commit(5);

-- heads are per validity window
SET memtx.logical_now = '2030-06-01 00:00+00';
SELECT memtx.begin() AS tx;   -- 6
SELECT memtx.stage(6, 'w', 'a', '"2030"', valid => '[2030-01-01+00,2031-01-01+00)', expected_head => 0);   -- 11
SELECT * FROM memtx.commit(6);
SET memtx.logical_now = '2032-06-01 00:00+00';
SELECT memtx.begin() AS tx;   -- 7: a window nobody holds expects 0
SELECT memtx.stage(7, 'w', 'a', '"2032"', valid => '[2032-01-01+00,2033-01-01+00)', expected_head => 0);   -- 12
SELECT * FROM memtx.commit(7);
SELECT memtx.begin() AS tx;   -- 8: a window over both has no single head
SELECT memtx.stage(8, 'w', 'a', '"all"', valid => '[2030-01-01+00,2033-01-01+00)', expected_head => 11);  -- 13
SELECT memtx.stage(8, 'w', 'a', '"all"', valid => '[2030-01-01+00,2033-01-01+00)', expected_head => 0);   -- 14
SELECT memtx.stage(8, 'w', 'a', '"2032b"', valid => '[2032-01-01+00,2033-01-01+00)', expected_head => 12); -- 15 matches
SELECT * FROM memtx.commit(8);
RESET memtx.logical_now;

-- a matching head lifts the snapshot rule of stale_late_write, nothing else
SET memtx.logical_now = '2030-06-01 00:00+00';
SELECT memtx.begin() AS tx;   -- 9
SELECT memtx.stage(9, 's', 'a', '1', source => 'crm', scope => 'public', observed_at => '2030-05-01+00');   -- 16
SELECT record_id, state FROM memtx.commit(9);
SELECT memtx.begin() AS tx;   -- 10: began before 17 commits
SELECT memtx.begin() AS tx;   -- 11: likewise
SELECT memtx.begin() AS tx;   -- 12
SELECT memtx.stage(12, 's', 'a', '2', source => 'crm', scope => 'public', observed_at => '2030-05-02+00', expected_head => 16);  -- 17
SELECT * FROM memtx.commit(12);
SELECT memtx.stage(10, 's', 'a', '3', source => 'crm', scope => 'public', observed_at => '2030-05-03+00', expected_head => 17);  -- 18 saw 17
SELECT memtx.stage(11, 's', 'a', '3', source => 'crm', scope => 'public', observed_at => '2030-05-03+00');                       -- 19 did not say so
SELECT * FROM memtx.commit(11);
SELECT * FROM memtx.commit(10);
-- observed_at, authority and review still apply to a matching head
SELECT memtx.begin() AS tx;   -- 13
SELECT memtx.stage(13, 's', 'a', '4', source => 'ledger', observed_at => '2030-05-02+00', expected_head => 18);  -- 20 observed earlier
SELECT * FROM memtx.commit(13);
SELECT memtx.begin() AS tx;   -- 14
SELECT memtx.stage(14, 's', 'a', '4', source => 'chat', expected_head => 18);   -- 21 lower authority
SELECT * FROM memtx.commit(14);
SELECT memtx.begin() AS tx;   -- 15
SELECT memtx.stage(15, 's', 'a', '4', source => 'erp', expected_head => 18);    -- 22 needs_review
SELECT memtx.stage(15, 's2', 'a', '1', source => 'crm', scope => 'public');   -- 23
SELECT * FROM memtx.commit(15);
SELECT memtx.begin() AS tx;   -- 16
SELECT memtx.stage(16, 's2', 'a', '2', source => 'erp', expected_head => 23);   -- 24 needs_review
SELECT * FROM memtx.commit(16);
-- writers: another agent with a matching head may not supersede what it may not write
SET ROLE regress_memtx_prop;
SELECT memtx.begin() AS tx;   -- 17
SELECT memtx.stage(17, 's', 'a', '5', source => 'ledger', expected_head => 18); -- 25
SELECT * FROM memtx.commit(17);
RESET ROLE;
-- resolve re-checks the head: 22 still expects 18, which 26 replaces; 24 still matches
SELECT memtx.begin() AS tx;   -- 18
SELECT memtx.stage(18, 's', 'a', '6', source => 'ledger');   -- 26
SELECT * FROM memtx.commit(18);
SELECT pg_temp.try('SELECT memtx.resolve(22, true)');
SELECT memtx.resolve(24, true);
SELECT * FROM pg_temp.show(ARRAY[22, 23, 24]);
RESET memtx.logical_now;

-- a bad expected head is one error (22023) whatever is wrong with it
SELECT memtx.begin() AS tx;   -- 19: a private record of the superuser
SELECT memtx.stage(19, 'priv', 'a', '1');   -- 27
SELECT record_id, state FROM memtx.commit(19);
SET ROLE regress_memtx_prop;
SELECT memtx.begin() AS tx;   -- 20
SELECT pg_temp.try('SELECT memtx.stage(20, ''priv'', ''a'', ''2'', expected_head => 27)');      -- not readable
SELECT pg_temp.try('SELECT memtx.stage(20, ''priv'', ''a'', ''2'', expected_head => 999999)');  -- no such record
SELECT pg_temp.try('SELECT memtx.stage(20, ''priv'', ''a'', ''2'', expected_head => 18)');      -- another slot
SELECT pg_temp.try('SELECT memtx.stage(20, ''priv'', ''a'', ''2'', expected_head => -1)');      -- out of range
SELECT pg_temp.try('SELECT memtx.stage(20, ''s'', ''b'', ''2'', expected_head => 18)');         -- another attribute
SELECT count(*) AS staged FROM memtx.records WHERE tx_id = 20;
SELECT * FROM memtx.commit(20);
RESET ROLE;
-- a record in any state names a head: 6 is quarantined
SELECT memtx.begin() AS tx;   -- 21
SELECT memtx.stage(21, 'h1', 'a', '9', expected_head => 6);   -- 28 stale_head (5 is the head)
SELECT * FROM memtx.commit(21);

-- proposal ids: a retry from any transaction returns the original and writes nothing
SELECT memtx.begin() AS tx;   -- 22
SELECT memtx.stage(22, 'p', 'a', '1', source => 'crm', scope => 'public', proposal => 'p-1');   -- 29
SELECT memtx.stage(22, 'p', 'a', '1', derived_from => ARRAY[29], readers => ARRAY['regress_memtx_prop', 'postgres', 'postgres'],
                   proposal => 'p-2');   -- 30: inherits no observed_at; readers a set
SELECT * FROM pg_temp.counts;
SELECT memtx.stage(22, 'p', 'a', '1', source => 'crm', scope => 'public', proposal => 'p-1') AS same_tx_retry;
SELECT memtx.begin() AS tx;   -- 23
SELECT memtx.stage(23, 'p', 'a', '1', 'belief', 'crm', 1.0, '{}', 'public', NULL, '{}', '(,)', NULL, NULL, 'p-1') AS other_tx_retry;
SELECT memtx.stage(23, 'p', 'a', '1', derived_from => ARRAY[29, 29], readers => ARRAY['postgres', 'regress_memtx_prop'],
                   proposal => 'p-2') AS sets_retry;
SELECT * FROM pg_temp.counts;
SELECT * FROM memtx.commit(22);
SELECT memtx.stage(23, 'p', 'a', '1', source => 'crm', scope => 'public', proposal => 'p-1') AS after_commit_retry;
SELECT * FROM pg_temp.counts;
-- a retry into an ended transaction is still an error (the checks of §4 come first)
SELECT pg_temp.try('SELECT memtx.stage(22, ''p'', ''a'', ''1'', source => ''crm'', scope => ''public'', proposal => ''p-1'')');
-- other content under a used id: 23505 naming the original
SELECT pg_temp.fails('SELECT memtx.stage(23, ''p'', ''a'', ''1.0'', source => ''crm'', scope => ''public'', proposal => ''p-1'')');
SELECT pg_temp.fails('SELECT memtx.stage(23, ''p'', ''a'', ''1'', source => ''crm'', scope => ''public'', proposal => ''p-1'', expected_head => 0)');
SELECT pg_temp.fails('SELECT memtx.stage(23, ''p'', ''a'', ''1'', source => ''crm'', scope => ''shared'', proposal => ''p-1'')');
SELECT pg_temp.fails('SELECT memtx.stage(23, ''p'', ''a'', ''1'', source => ''crm'', scope => ''public'', confidence => 0.9, proposal => ''p-1'')');
SELECT pg_temp.fails('SELECT memtx.stage(23, ''p'', ''a'', ''1'', source => ''crm'', scope => ''public'', observed_at => now(), proposal => ''p-1'')');
SELECT pg_temp.fails('SELECT memtx.stage(23, ''p'', ''a'', ''1'', derived_from => ARRAY[29], readers => ARRAY[''postgres''], proposal => ''p-2'')');
SELECT pg_temp.fails('SELECT memtx.stage(23, ''p'', ''a'', ''1'', proposal => ''p-2'')');
-- another agent's use of an id is another proposal (SPEC §17: ids are per namespace and
-- agent, so no role can squat another's): it binds the id for that agent
SET ROLE regress_memtx_prop;
SELECT memtx.begin() AS tx;   -- 24
SELECT memtx.stage(24, 'p', 'a', '1', source => 'crm', scope => 'public', proposal => 'p-1');   -- 31
SELECT memtx.begin() AS tx;   -- 25
SELECT memtx.stage(25, 'p', 'a', '1', derived_from => ARRAY[29], readers => ARRAY['regress_memtx_prop', 'postgres'], proposal => 'p-2');   -- 32
SELECT memtx.stage(25, 'p', 'a', '1', proposal => 'p-3');   -- 33
SELECT * FROM memtx.commit(25);
-- and a retry of that agent's proposal returns that agent's record
SELECT memtx.stage(24, 'p', 'a', '1', source => 'crm', scope => 'public', proposal => 'p-1') AS own_retry;
SELECT count(*) FROM memtx.abort(24);
RESET ROLE;
SELECT memtx.stage(23, 'p', 'a', '1', proposal => 'p-3');   -- 34: p-3 is the superuser's own now
SELECT * FROM pg_temp.counts;
-- an error does not consume the id; an empty id is refused
SELECT pg_temp.try('SELECT memtx.stage(23, ''p'', ''a'', ''1'', derived_from => ARRAY[999999], proposal => ''p-4'')');
SELECT pg_temp.try('SELECT memtx.stage(23, ''p'', ''a'', ''1'', expected_head => 999999, proposal => ''p-4'')');
SELECT pg_temp.try('SELECT memtx.stage(23, ''p'', ''a'', ''1'', proposal => '''')');
SELECT memtx.stage(23, 'p', 'a', '2', proposal => 'p-4');   -- 35 (stale_late_write: 23 began before 29 and 33 committed)
-- ids are per namespace
SELECT memtx.begin(namespace => 'other') AS tx;   -- 26
SELECT memtx.stage(26, 'p', 'a', '1', proposal => 'p-1');   -- 36
SELECT * FROM memtx.commit(23);
SELECT * FROM memtx.commit(26);

-- outcome: the current disposition; nothing for an unknown id or an unreadable record
SELECT * FROM memtx.outcome('p-1');
SELECT * FROM memtx.outcome('p-4');
SELECT * FROM memtx.outcome('p-1', 'other');
SELECT * FROM memtx.outcome('nope');
SELECT memtx.begin() AS tx;   -- 27: tentative while its transaction is open
SELECT memtx.stage(27, 'p', 'b', '1', proposal => 'p-5');   -- 37
SELECT * FROM memtx.outcome('p-5');
SELECT record_id, action, reason FROM memtx.abort(27);
SELECT * FROM memtx.outcome('p-5');
SELECT memtx.begin() AS tx;   -- 28: a quarantined proposal stays quarantined; resubmitting takes a new id
SELECT memtx.stage(28, 'p', 'a', '3', source => 'crm', expected_head => 0, proposal => 'p-6');   -- 38
SELECT * FROM memtx.commit(28);
SELECT * FROM memtx.outcome('p-6');
-- outcome answers the calling role's own proposals: another agent's are not its own
SET ROLE regress_memtx_prop;
SELECT * FROM memtx.outcome('p-6');   -- the superuser's
SELECT * FROM memtx.outcome('p-1');   -- its own (aborted with transaction 24)
SELECT * FROM memtx.outcome('p-3');
-- only a harness asks about another agent (42501 otherwise)
SELECT pg_temp.try('SELECT * FROM memtx.outcome(''p-6'', agent => ''postgres'')');
SELECT * FROM memtx.outcome('p-3', agent => 'regress_memtx_prop');
-- a namespace other than default answers its members only (SPEC §17), with the same error
-- whether it exists or not
SELECT pg_temp.try('SELECT * FROM memtx.outcome(''p-1'', ''other'')');
SELECT pg_temp.try('SELECT * FROM memtx.outcome(''p-1'', ''nowhere'')');
RESET ROLE;
SELECT * FROM memtx.outcome('p-3', agent => 'regress_memtx_prop');
SELECT * FROM memtx.outcome('p-3', agent => 'nobody');
-- a harness that staged for an agent: the agent's id is bound, and a retry with other
-- content by the agent does not name a record the agent may not read
SELECT memtx.begin(agent => 'regress_memtx_prop') AS tx;   -- 29
SELECT memtx.stage(29, 'p', 'c', '1', proposal => 'p-7');   -- 39: the harness owns it, private
SELECT * FROM memtx.commit(29);
SET ROLE regress_memtx_prop;
SELECT memtx.begin() AS tx;   -- 30
SELECT pg_temp.fails('SELECT memtx.stage(30, ''p'', ''c'', ''2'', proposal => ''p-7'')');
RESET ROLE;
SELECT pg_temp.try('SELECT * FROM memtx.outcome(NULL)');

-- propose: begin + stage + commit; a retry returns the outcome and writes nothing
SELECT * FROM memtx.propose('q', 'a', '1', source => 'crm', expected_head => 0, proposal => 'q-1');
SELECT * FROM pg_temp.counts;
SELECT * FROM memtx.propose('q', 'a', '1', source => 'crm', expected_head => 0, proposal => 'q-1');
SELECT * FROM pg_temp.counts;
SELECT * FROM memtx.propose('q', 'a', '2', source => 'crm', expected_head => 0, proposal => 'q-2');   -- stale head
SELECT * FROM memtx.propose('q', 'a', '2', source => 'crm', expected_head => 0, proposal => 'q-2');   -- its outcome again
SELECT pg_temp.fails('SELECT * FROM memtx.propose(''q'', ''a'', ''3'', proposal => ''q-1'')');
SELECT * FROM pg_temp.counts;
SELECT * FROM memtx.propose('q', 'b', '1');
SELECT t.status, t.agent = current_user AS own FROM memtx.transactions t ORDER BY t.id DESC LIMIT 3;
SET ROLE regress_memtx_prop;
SELECT pg_temp.try('SELECT * FROM memtx.propose(''q'', ''c'', ''1'', proposal => ''q-3'', namespace => ''nope'')');
RESET ROLE;
-- both are content: fixed once staged, for every role
SELECT pg_temp.try('UPDATE memtx.records SET proposal = ''p-9'' WHERE id = 29');
SELECT pg_temp.try('UPDATE memtx.records SET proposal = NULL WHERE id = 29');
SELECT pg_temp.try('UPDATE memtx.records SET expected_head = NULL WHERE id = 1');
SELECT pg_temp.try('UPDATE memtx.records SET expected_head = 0 WHERE id = 16');
-- SPEC §21: propose writes its record once, already settled, and its
-- transaction once, already closed (no UPDATE of either table); the record's
-- only history row is its settled state at its staging position, and its
-- positions, verdict and receipt are the commit's
-- (this backend's table counters, read before and after the call in one
-- SQL transaction: they only grow while it runs)
BEGIN;
CREATE TEMP TABLE writes_before AS SELECT relname, n_tup_ins, n_tup_upd FROM pg_stat_xact_user_tables
 WHERE schemaname = 'memtx' AND relname IN ('records', 'transactions');
SELECT record_id AS settled_id, state FROM memtx.propose('q', 'd', '1') \gset
SELECT :'state' AS state;
SELECT s.relname, s.n_tup_ins - b.n_tup_ins AS inserted, s.n_tup_upd - b.n_tup_upd AS updated
  FROM pg_stat_xact_user_tables s JOIN writes_before b USING (relname)
 WHERE s.schemaname = 'memtx' ORDER BY s.relname;
COMMIT;
SELECT h.state, h.reason, h.pos = r.staged_pos AS at_staging, r.staged_pos < r.settled_pos AS staged_first,
       r.committed_seq = r.settled_pos AS committed_at_settling, r.verdict, r.committed_xid IS NOT NULL AS committed,
       t.status, t.ended_at IS NOT NULL AS ended
  FROM memtx.history h JOIN memtx.records r ON r.id = h.record_id JOIN memtx.transactions t ON t.id = r.tx_id
 WHERE h.record_id = :settled_id;
-- quarantined: inserted quarantined, with its reason, and its transaction aborted
SELECT record_id AS q_id, state, reason FROM memtx.propose('q', 'd', '2', confidence => 0.1) \gset
SELECT h.state, h.reason, h.pos = r.staged_pos AS at_staging, r.verdict, r.verdict_reason,
       r.settled_pos IS NOT NULL AS settled, r.committed_xid IS NULL AS never_committed, t.status
  FROM memtx.history h JOIN memtx.records r ON r.id = h.record_id JOIN memtx.transactions t ON t.id = r.tx_id
 WHERE h.record_id = :q_id;
SELECT kind, disposition, reason, body->'checks_passed' AS checks FROM memtx.receipts
 WHERE kind = 'commit' AND subject IN (:settled_id, :q_id) ORDER BY subject;
SELECT * FROM memtx.check_invariants();
-- the session's own objects first: a cascade would name their pg_temp_N schema,
-- which depends on the backend
DROP VIEW pg_temp.counts;
DROP FUNCTION pg_temp.show(bigint[]);
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_prop;
