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
