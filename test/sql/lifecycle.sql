-- The lifecycle transition relation, enforced by a trigger on every UPDATE.
\i test/sql/include/prelude.psql

-- a transaction row and one record per (from, to) pair, written directly
INSERT INTO memtx.transactions (id, agent, tier, isolation, namespace, snapshot, snapshot_xid, snapshot_seq, lease_expires_at)
VALUES (1, current_user, 'medium', 'verified_read', 'default', pg_current_snapshot(), pg_current_xact_id(), 0, now() + interval '1 hour');

CREATE TEMP TABLE pairs AS
SELECT f.s AS from_state, t.s AS to_state, row_number() OVER (ORDER BY f.s, t.s) AS n
  FROM unnest(enum_range(NULL::memtx.state)) f(s), unnest(enum_range(NULL::memtx.state)) t(s)
 WHERE f.s <> t.s;

INSERT INTO memtx.records (id, tx_id, namespace, entity, attribute, value, state, authority, confidence, owner, staged_xid, staged_pos)
SELECT n, 1, 'default', 'e' || n, 'a', '1', from_state, 0.5, 1, current_user, pg_current_xact_id(), n FROM pairs;

-- every ordered pair of distinct states: what the trigger says
SELECT from_state, to_state,
       pg_temp.try(format('UPDATE memtx.records SET state = %L WHERE id = %s', to_state, n)) AS outcome,
       memtx.legal_transition(from_state, to_state) AS legal
  FROM pairs ORDER BY from_state, to_state;

-- the trigger and memtx.legal_transition agree on every pair
SELECT count(*) AS disagreements FROM pairs p
 WHERE (SELECT r.state FROM memtx.records r WHERE r.id = p.n) = p.to_state
       IS DISTINCT FROM memtx.legal_transition(p.from_state, p.to_state);

-- illegal moves, as a client sees them
\set VERBOSITY default
UPDATE memtx.records SET state = 'tentative' WHERE id = (SELECT n FROM pairs WHERE from_state = 'committed' AND to_state = 'raw');
UPDATE memtx.records SET state = 'tentative' WHERE id = (SELECT n FROM pairs WHERE from_state = 'revoked' AND to_state = 'raw');
UPDATE memtx.records SET state = 'committed' WHERE id = (SELECT n FROM pairs WHERE from_state = 'superseded' AND to_state = 'raw');
UPDATE memtx.records SET state = 'action_safe' WHERE id = (SELECT n FROM pairs WHERE from_state = 'raw' AND to_state = 'tentative');

-- identity and content are immutable
SELECT pg_temp.try('UPDATE memtx.records SET value = ''2'' WHERE id = 1');
SELECT pg_temp.try('UPDATE memtx.records SET entity = ''other'' WHERE id = 1');
SELECT pg_temp.try('UPDATE memtx.records SET kind = ''summary'' WHERE id = 1');
-- a same-state update of other columns is fine
SELECT pg_temp.try('UPDATE memtx.records SET reason = ''note'' WHERE id = 1');

-- superusers are held too; only disabling the trigger gets past it
SELECT rolsuper FROM pg_roles WHERE rolname = current_user;
SELECT pg_temp.try(format('UPDATE memtx.records SET state = ''raw'' WHERE id = %s',
       (SELECT n FROM pairs WHERE from_state = 'revoked' AND to_state = 'raw')));

-- after staging only the state and its reason, the settlement positions and
-- the stored outcome (once) may change; the permission block, validity,
-- confidence and the rest are fixed for every role, superusers included
INSERT INTO memtx.records (id, tx_id, namespace, entity, attribute, value, state, source, authority, confidence,
                           owner, readers, writers, scope, valid, observed_at, staged_xid, staged_pos)
VALUES (1000, 1, 'default', 'acct:1', 'limit', '100', 'tentative', 'ledger', 0.5, 0.9, current_user,
        '{}', '{}', 'private', '[2030-01-01,2031-01-01)', '2029-12-01', pg_current_xact_id(), 1000);
SELECT c AS column_name, pg_temp.try(format('UPDATE memtx.records SET %s WHERE id = 1000', c)) AS outcome
  FROM unnest(ARRAY[
         'id = 1001', 'tx_id = tx_id', 'namespace = ''other''', 'attribute = ''other''', 'value = ''null''',
         'source = ''oracle''', 'authority = 1', 'confidence = 1', 'owner = ''someone_else''',
         'readers = ''{public}''', 'writers = ''{public}''', 'scope = ''public''',
         'valid = ''(,)''', 'observed_at = NULL', 'staged_xid = pg_current_xact_id()',
         'staged_pos = 1', 'created_at = now() - interval ''1 day''',
         'reason = ''note''', 'settled_xid = pg_current_xact_id()', 'settled_pos = 1001',
         'committed_xid = pg_current_xact_id()', 'committed_seq = 1001',
         'verdict = ''quarantined'', verdict_reason = ''low_evidence''',
         'verdict = ''committed''', 'verdict_reason = NULL']) c;
SELECT scope, readers, confidence, valid, verdict, verdict_reason FROM memtx.records WHERE id = 1000;

-- erasure: erased_at from unset to set, and in the same UPDATE the value to
-- JSON null (the column comes with memtx.erase; added here if it is missing)
SET client_min_messages = warning;
ALTER TABLE memtx.records ADD COLUMN IF NOT EXISTS erased_at timestamptz;
RESET client_min_messages;
SELECT c AS column_name, pg_temp.try(format('UPDATE memtx.records SET %s WHERE id = 1000', c)) AS outcome
  FROM unnest(ARRAY[
         'value = ''null''',
         'value = ''0'', erased_at = now()',
         'value = ''{}'', erased_at = now()',
         'value = ''null'', erased_at = now()',
         'erased_at = NULL',
         'erased_at = now() + interval ''1 day''',
         'value = ''100''']) c;
SELECT value, erased_at IS NOT NULL AS erased FROM memtx.records WHERE id = 1000;

-- the guard runs on memtx.records only: nobody but the owner may attach it,
-- and attached elsewhere (here by a superuser) it refuses with 39P01
SELECT has_function_privilege('public', 'memtx.lifecycle_guard()', 'EXECUTE') AS public_may_execute;
CREATE ROLE regress_memtx_lifecycle_agent;
SET ROLE regress_memtx_lifecycle_agent;
CREATE TEMP TABLE records (id int, state memtx.state);
CREATE TRIGGER guard BEFORE UPDATE ON pg_temp.records FOR EACH ROW EXECUTE FUNCTION memtx.lifecycle_guard();
RESET ROLE;
CREATE TRIGGER guard BEFORE UPDATE ON pg_temp.records FOR EACH ROW EXECUTE FUNCTION memtx.lifecycle_guard();
INSERT INTO pg_temp.records VALUES (1, 'tentative');
UPDATE pg_temp.records SET state = 'committed';
CREATE TABLE public.lifecycle_other (state memtx.state);
CREATE TRIGGER guard BEFORE UPDATE ON public.lifecycle_other FOR EACH ROW EXECUTE FUNCTION memtx.lifecycle_guard();
INSERT INTO public.lifecycle_other VALUES ('tentative');
UPDATE public.lifecycle_other SET state = 'committed';
DROP TABLE public.lifecycle_other;
DROP TABLE pg_temp.records;
DROP ROLE regress_memtx_lifecycle_agent;
