-- The two entry points of repair (SPEC §6): memtx.abort and memtx.revoke —
-- aborts reaching into other open transactions, repeats, permissions, input.
\i test/sql/include/prelude.psql
CREATE FUNCTION pg_temp.show(ids bigint[])
RETURNS TABLE (id bigint, tx_id bigint, kind memtx.kind, state memtx.state, reason text)
LANGUAGE sql AS $$
SELECT r.id, r.tx_id, r.kind, r.state, r.reason FROM memtx.records r WHERE r.id = ANY (ids) ORDER BY r.id $$;

-- 1. An abort whose staging another open transaction derived from
SELECT memtx.begin('medium') AS ta \gset
SELECT memtx.begin('medium') AS tb \gset
SELECT memtx.stage(:ta, 'order:841', 'refund_eligible', 'true') AS a1 \gset
SELECT memtx.stage(:ta, 'order:841', 'amount', '20') AS a2 \gset
-- tb derives a belief and a summary from ta's tentative record, and stages one of its own
SELECT memtx.stage(:tb, 'order:841', 'refund_due', 'true', derived_from => ARRAY[:a1]) AS b1 \gset
SELECT memtx.stage(:tb, 'order:841', 'digest', '"refund due"', kind => 'summary', derived_from => ARRAY[:b1]) AS b2 \gset
SELECT memtx.stage(:tb, 'order:900', 'status', '"open"') AS b3 \gset
SELECT root_id, record_id, kind, action, reason, note FROM memtx.abort(:ta) ORDER BY id;
-- tentative descendants in another open transaction are revoked whatever their kind
SELECT * FROM pg_temp.show(ARRAY[:a1, :a2, :b1, :b2, :b3]);
SELECT id, status, end_reason FROM memtx.transactions WHERE id IN (:ta, :tb) ORDER BY id;
SELECT count(*) AS registry_rows FROM memtx.revocation_registry;
-- tb goes on; its revoked staging is not committed
SELECT * FROM memtx.commit(:tb);
SELECT * FROM pg_temp.show(ARRAY[:b1, :b2, :b3]);
SELECT * FROM memtx.check_invariants();

-- an abort whose staging derives from its own staging: every staged record
-- is a root with reason aborted, none is logged twice
SELECT memtx.begin('medium') AS th \gset
SELECT memtx.stage(:th, 'own', 'a', '1') AS h1 \gset
SELECT memtx.stage(:th, 'own', 'b', '1', kind => 'summary', derived_from => ARRAY[:h1]) AS h2 \gset
SELECT memtx.stage(:th, 'own', 'c', '1', derived_from => ARRAY[:h2]) AS h3 \gset
SELECT root_id, record_id, kind, action, reason FROM memtx.abort(:th) ORDER BY id;
SELECT * FROM pg_temp.show(ARRAY[:h1, :h2, :h3]);

-- aborting again returns no rows; a committed transaction cannot be aborted
SELECT count(*) AS rows FROM memtx.abort(:ta);
SELECT pg_temp.try(format('SELECT memtx.abort(%s)', :tb));
-- an abort with nothing staged writes nothing
SELECT memtx.begin('medium') AS tc \gset
SELECT count(*) AS rows FROM memtx.abort(:tc);
SELECT status FROM memtx.transactions WHERE id = :tc;
-- an aborted transaction takes no more staging
SELECT pg_temp.try(format('SELECT memtx.stage(%s, %L, %L, %L)', :tc, 'e', 'a', '1'));

-- expiry takes the abort path with reason expired (time is moved by hand:
-- the lease of tf is set into the past)
SELECT memtx.begin('medium') AS tf \gset
SELECT memtx.begin('medium') AS tg \gset
SELECT memtx.stage(:tf, 'lease', 'a', '1') AS f1 \gset
SELECT memtx.stage(:tg, 'lease', 'b', '1', derived_from => ARRAY[:f1]) AS g1 \gset
UPDATE memtx.transactions SET lease_expires_at = now() - interval '1 minute' WHERE id = :tf;
SELECT pg_temp.try(format('SELECT memtx.stage(%s, %L, %L, %L)', :tf, 'lease', 'c', '1'));
SELECT memtx.expire_transactions() = :tf AS expired_tf;
SELECT * FROM pg_temp.show(ARRAY[:f1, :g1]);
SELECT id, status, end_reason FROM memtx.transactions WHERE id IN (:tf, :tg) ORDER BY id;
SELECT root_id, record_id, action, reason FROM memtx.rollback_log WHERE root_id = :f1 ORDER BY id;
SELECT count(*) AS expired_again FROM memtx.expire_transactions();
SELECT count(*) FROM memtx.abort(:tg);

-- 2. revoke: a record already revoked returns no rows and writes nothing
SELECT count(*) AS log_before FROM memtx.rollback_log \gset
SELECT count(*) AS rows FROM memtx.revoke(:a1);
SELECT count(*) AS rows FROM memtx.revoke(:b1, 'again');
SELECT count(*) - :log_before AS new_log_rows FROM memtx.rollback_log;
-- a tentative record can be revoked by its owner before commit; its
-- transaction then has nothing left to commit for it
SELECT memtx.begin('medium') AS td \gset
SELECT memtx.stage(:td, 'x', 'y', '1') AS d1 \gset
SELECT memtx.stage(:td, 'x', 'z', '1', derived_from => ARRAY[:d1]) AS d2 \gset
SELECT record_id, action, reason, note FROM memtx.revoke(:d1, 'withdrawn') ORDER BY id;
SELECT * FROM memtx.commit(:td);
SELECT status FROM memtx.transactions WHERE id = :td;
SELECT * FROM memtx.check_invariants();

-- 3. Who may revoke: the record's owner or a harness; anyone else gets 42501
CREATE ROLE regress_memtx_alice;
CREATE ROLE regress_memtx_bob;
CREATE ROLE regress_memtx_runner;
CREATE ROLE regress_memtx_harness;
GRANT regress_memtx_harness TO regress_memtx_runner;
SELECT memtx.begin('medium', agent => 'regress_memtx_alice') AS te \gset
SET ROLE regress_memtx_alice;
SELECT memtx.stage(:te, 'doc', 'p1', '1', scope => 'public') AS e1 \gset
SELECT memtx.stage(:te, 'doc', 'p2', '1', scope => 'public') AS e2 \gset
SELECT memtx.stage(:te, 'doc', 'p3', '1', scope => 'public') AS e3 \gset
SELECT record_id, state FROM memtx.commit(:te);
SET ROLE regress_memtx_bob;
SELECT pg_temp.try(format('SELECT memtx.revoke(%s)', :e1));
SELECT pg_temp.try(format('SELECT memtx.revoke(%s, %L)', :e1, 'not mine'));
-- nor abort alice's transaction, nor run the expiry
RESET ROLE;
SELECT memtx.begin('medium', agent => 'regress_memtx_alice') AS tk \gset
SET ROLE regress_memtx_bob;
SELECT pg_temp.try(format('SELECT memtx.abort(%s)', :tk));
SELECT pg_temp.try('SELECT memtx.expire_transactions()');
SET ROLE regress_memtx_alice;
SELECT record_id, action, reason FROM memtx.revoke(:e1, 'my mistake');
-- a harness (member of memtx.harness_role) may revoke anyone's record
SET ROLE regress_memtx_runner;
SELECT pg_temp.try(format('SELECT memtx.revoke(%s)', :e2));
RESET ROLE;
SET memtx.harness_role = 'regress_memtx_harness';
SET ROLE regress_memtx_runner;
SELECT record_id, action, reason, note FROM memtx.revoke(:e2, 'by the harness');
RESET ROLE;
RESET memtx.harness_role;
-- the superuser is a harness
SELECT record_id, action, reason FROM memtx.revoke(:e3);
SET ROLE regress_memtx_alice;
SELECT count(*) AS rows FROM memtx.abort(:tk);
RESET ROLE;
SELECT * FROM pg_temp.show(ARRAY[:e1, :e2, :e3]);

-- 4. bad input writes nothing
SELECT count(*) AS log_before FROM memtx.rollback_log \gset
SELECT pg_temp.try('SELECT memtx.revoke(NULL)');
SELECT pg_temp.try('SELECT memtx.revoke(424242)');
SELECT pg_temp.try(format('SELECT memtx.revoke(%s, %L)', :e1, repeat('n', 5000)));
SELECT pg_temp.try('SELECT memtx.abort(NULL)');
SELECT pg_temp.try('SELECT memtx.abort(424242)');
SELECT count(*) - :log_before AS new_log_rows FROM memtx.rollback_log;

-- every log row of this file, in order
SELECT root_id, record_id, kind, action, reason, note FROM memtx.rollback_log ORDER BY id;

DROP ROLE regress_memtx_alice;
DROP ROLE regress_memtx_bob;
DROP ROLE regress_memtx_runner;
DROP ROLE regress_memtx_harness;
