-- Typed cascade repair (SPEC §6): every transitive descendant once, repaired by kind.
\i test/sql/include/prelude.psql
-- records with their state, reason and registry entry
CREATE FUNCTION pg_temp.show(ids bigint[])
RETURNS TABLE (id bigint, kind memtx.kind, entity text, state memtx.state, reason text, registered_by bigint)
LANGUAGE sql AS $$
SELECT r.id, r.kind, r.entity, r.state, r.reason, rr.root_id
  FROM memtx.records r LEFT JOIN memtx.revocation_registry rr ON rr.record_id = r.id
 WHERE r.id = ANY (ids) ORDER BY r.id $$;

SELECT memtx.register_tool('hold_order', true, 'release_order');
SELECT memtx.register_tool('issue_refund', false);
SELECT memtx.register_tool('ping', true);            -- reversible, no compensator
SELECT memtx.register_source('ledger', 0.95);

-- 1. A chain of six mixed kinds:
--    belief -> summary -> profile -> tool_action (reversible) -> belief -> shared_copy
SELECT memtx.begin('medium') AS t1 \gset
SELECT memtx.stage(:t1, 'order:841', 'refund_eligible', 'true') AS c1 \gset
SELECT memtx.stage(:t1, 'order:841', 'summary', '"eligible"', kind => 'summary', derived_from => ARRAY[:c1]) AS c2 \gset
SELECT memtx.stage(:t1, 'customer:7', 'profile', '{"refunds": 1}', kind => 'profile', derived_from => ARRAY[:c2]) AS c3 \gset
SELECT state, count(*) FROM memtx.commit(:t1) GROUP BY state;
SELECT (memtx.act(:t1, 'hold_order', '{"order": 841}', ARRAY[:c3])).action_id AS c4 \gset
SELECT memtx.begin('medium') AS t2 \gset
SELECT memtx.stage(:t2, 'order:841', 'on_hold', 'true', derived_from => ARRAY[:c4]) AS c5 \gset
SELECT memtx.stage(:t2, 'team', 'order:841', '"on hold"', kind => 'shared_copy', derived_from => ARRAY[:c5]) AS c6 \gset
SELECT state, count(*) FROM memtx.commit(:t2) GROUP BY state;
SELECT * FROM memtx.lineage(:c1);

-- revoke the root: the returned rows are the log rows, one per record, note on each
CREATE TEMP TABLE returned AS SELECT * FROM memtx.revoke(:c1, 'order lookup was stale');
SELECT root_id, record_id, kind, action, reason, note FROM returned ORDER BY id;
SELECT (SELECT array_agg(id ORDER BY id) FROM returned) = (SELECT array_agg(id ORDER BY id) FROM memtx.rollback_log)
       AS returned_every_log_row;
-- belief revoked, views quarantined and registered, the action compensated then revoked
SELECT * FROM pg_temp.show(ARRAY[:c1, :c2, :c3, :c4, :c5, :c6]);
-- the obligation names the compensator and carries the call's arguments
SELECT root_id, action_id, tool, compensator, args, status FROM memtx.compensations ORDER BY id;
SELECT * FROM memtx.check_invariants();

-- 2. A diamond: each descendant is repaired and logged once
--    d1 -> d2, d1 -> d3, (d2, d3) -> d4 summary -> d5 belief; and d1 -> d5 directly
SELECT memtx.begin('medium') AS t3 \gset
SELECT memtx.stage(:t3, 'd', 'root', '1') AS d1 \gset
SELECT memtx.stage(:t3, 'd', 'left', '1', derived_from => ARRAY[:d1]) AS d2 \gset
SELECT memtx.stage(:t3, 'd', 'right', '1', derived_from => ARRAY[:d1]) AS d3 \gset
SELECT memtx.stage(:t3, 'd', 'merge', '1', kind => 'summary', derived_from => ARRAY[:d2, :d3]) AS d4 \gset
SELECT memtx.stage(:t3, 'd', 'leaf', '1', derived_from => ARRAY[:d4, :d1]) AS d5 \gset
SELECT state, count(*) FROM memtx.commit(:t3) GROUP BY state;
SELECT (memtx.act(:t3, 'issue_refund', '{"diamond": true}', ARRAY[:d2, :d3, :d5])).action_id AS d6 \gset
SELECT record_id, kind, action, reason, note FROM memtx.revoke(:d1) ORDER BY id;
SELECT record_id, count(*) AS log_rows FROM memtx.rollback_log WHERE root_id = :d1
 GROUP BY record_id HAVING count(*) <> 1;
SELECT * FROM pg_temp.show(ARRAY[:d1, :d2, :d3, :d4, :d5, :d6]);
-- an irreversible action leaks: no obligation
SELECT count(*) AS obligations FROM memtx.compensations WHERE root_id = :d1;
SELECT * FROM memtx.check_invariants();

-- 3. Revoking an unrelated leaf leaves everything else alone
SELECT memtx.begin('medium') AS t4 \gset
SELECT memtx.stage(:t4, 'u', 'base', '1') AS u1 \gset
SELECT memtx.stage(:t4, 'u', 'mid', '1', kind => 'summary', derived_from => ARRAY[:u1]) AS u2 \gset
SELECT memtx.stage(:t4, 'u', 'leaf', '1', derived_from => ARRAY[:u2]) AS u3 \gset
SELECT memtx.stage(:t4, 'u', 'sibling', '1', derived_from => ARRAY[:u1]) AS u4 \gset
SELECT state, count(*) FROM memtx.commit(:t4) GROUP BY state;
CREATE TEMP TABLE before AS SELECT r.id, r.state, r.reason FROM memtx.records r;
SELECT (SELECT count(*) FROM memtx.revocation_registry) AS registry_before,
       (SELECT count(*) FROM memtx.compensations) AS compensations_before \gset
SELECT record_id, kind, action, reason FROM memtx.revoke(:u3);
SELECT r.id, b.state AS was, r.state AS now
  FROM memtx.records r JOIN before b USING (id)
 WHERE (r.state, r.reason) IS DISTINCT FROM (b.state, b.reason) ORDER BY r.id;
SELECT (SELECT count(*) FROM memtx.revocation_registry) - :registry_before AS new_registry_rows,
       (SELECT count(*) FROM memtx.compensations) - :compensations_before AS new_obligations;

-- 4. Views already quarantined by an earlier cascade stay quarantined, with no new log row
SELECT memtx.begin('medium') AS t5 \gset
SELECT memtx.stage(:t5, 'v', 'a', '1') AS v1 \gset
SELECT memtx.stage(:t5, 'v', 'b', '1') AS v2 \gset
SELECT memtx.stage(:t5, 'v', 'digest', '"a and b"', kind => 'summary', derived_from => ARRAY[:v1, :v2]) AS v3 \gset
SELECT memtx.stage(:t5, 'v', 'index', '"a and b"', kind => 'index_entry', derived_from => ARRAY[:v3]) AS v4 \gset
SELECT state, count(*) FROM memtx.commit(:t5) GROUP BY state;
SELECT record_id, kind, action, reason FROM memtx.revoke(:v1) ORDER BY id;
SELECT record_id, kind, action, reason FROM memtx.revoke(:v2) ORDER BY id;
SELECT * FROM pg_temp.show(ARRAY[:v1, :v2, :v3, :v4]);
SELECT record_id, count(*) AS log_rows FROM memtx.rollback_log WHERE record_id IN (:v3, :v4) GROUP BY record_id ORDER BY 1;

-- 5. Inactive descendants: superseded ones and ones quarantined at commit are
--    revoked, revoked ones are skipped
SELECT memtx.begin('medium') AS t6 \gset
SELECT memtx.stage(:t6, 'i', 'base', '1') AS i1 \gset
SELECT memtx.stage(:t6, 'i', 'balance', '10', derived_from => ARRAY[:i1]) AS i2 \gset
SELECT memtx.stage(:t6, 'i', 'digest', '"weak"', kind => 'summary', confidence => 0.2, derived_from => ARRAY[:i1]) AS i3 \gset
SELECT memtx.stage(:t6, 'i', 'profile', '"old"', kind => 'profile', derived_from => ARRAY[:i1]) AS i4 \gset
SELECT memtx.stage(:t6, 'i', 'gone', '1', derived_from => ARRAY[:i1]) AS i5 \gset
SELECT * FROM memtx.commit(:t6);
-- a stronger source supersedes i2 and i4
SELECT memtx.begin('medium') AS t7 \gset
SELECT memtx.stage(:t7, 'i', 'balance', '12', source => 'ledger') AS i6 \gset
SELECT memtx.stage(:t7, 'i', 'profile', '"new"', kind => 'profile', source => 'ledger') AS i7 \gset
SELECT * FROM memtx.commit(:t7);
SELECT record_id, action, reason FROM memtx.revoke(:i5);
SELECT * FROM pg_temp.show(ARRAY[:i1, :i2, :i3, :i4, :i5]);
SELECT record_id, kind, action, reason FROM memtx.revoke(:i1) ORDER BY id;
SELECT * FROM pg_temp.show(ARRAY[:i1, :i2, :i3, :i4, :i5, :i6, :i7]);

-- 6. Tool actions: reversible with and without compensator, irreversible, unregistered
SELECT memtx.begin('medium') AS t8 \gset
SELECT memtx.stage(:t8, 'k', 'base', '1') AS k1 \gset
SELECT * FROM memtx.commit(:t8);
SELECT (memtx.act(:t8, 'hold_order', '{"n": 1}', ARRAY[:k1])).action_id AS k2 \gset
SELECT (memtx.act(:t8, 'ping', '{"n": 2}', ARRAY[:k1])).action_id AS k3 \gset
SELECT (memtx.act(:t8, 'issue_refund', '{"n": 3}', ARRAY[:k1])).action_id AS k4 \gset
SELECT (memtx.act(:t8, 'mail_customer', '{"n": 4}', ARRAY[:k1])).action_id AS k5 \gset
SELECT record_id, kind, action, reason, note FROM memtx.revoke(:k1, 'bad base') ORDER BY id;
SELECT action_id, tool, compensator, args, status FROM memtx.compensations WHERE root_id = :k1 ORDER BY action_id;
SELECT * FROM pg_temp.show(ARRAY[:k2, :k3, :k4, :k5]);

-- after all of it the store is consistent
SELECT * FROM memtx.check_invariants();
