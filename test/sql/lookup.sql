-- memtx.lookup (SPEC §14): the active records on a slot or entity that the caller may read, in
-- id order, with no memtx transaction and no write of any kind (so it runs on a hot standby).
\i test/sql/include/prelude.psql
CREATE ROLE regress_lookup_a;
CREATE ROLE regress_lookup_b;
CREATE ROLE regress_lookup_team;
GRANT regress_lookup_team TO regress_lookup_b;
SELECT memtx.register_source('ledger', 1.0);
SET memtx.logical_now = '2030-06-01 00:00:00+00';

-- states: committed, superseded, quarantined, revoked, action_safe, tentative; a committed
-- record whose parent was superseded is still active (lookup ignores ancestors)
SET ROLE regress_lookup_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:1', 'status', '"open"', scope => 'public');                      -- 1 superseded below
SELECT memtx.stage(:tx, 'acct:1', 'owner', '"ada"', scope => 'public', derived_from => ARRAY[1]);  -- 2 committed
SELECT memtx.stage(:tx, 'acct:1', 'limit', '100', scope => 'public', confidence => 0.1);       -- 3 quarantined
SELECT memtx.stage(:tx, 'acct:1', 'note', '"temp"', scope => 'public');                        -- 4 revoked below
SELECT record_id, state, reason FROM memtx.commit(:tx);
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:1', 'status', '"closed"', scope => 'public', source => 'ledger'); -- 5 supersedes 1
SELECT record_id, state FROM memtx.commit(:tx);
SELECT count(*) AS revoked FROM memtx.revoke(4);
RESET ROLE;
SELECT memtx.begin(agent => 'regress_lookup_a', tier => 'external_action') AS tx \gset
SET ROLE regress_lookup_a;
SELECT memtx.stage(:tx, 'acct:1', 'tier', '"gold"', scope => 'public');                        -- 6 action_safe
SELECT record_id, state FROM memtx.commit(:tx);
SELECT memtx.begin() AS open_tx \gset
SELECT memtx.stage(:open_tx, 'acct:1', 'balance', '5', scope => 'public');                      -- 7 tentative
-- permissions: private (a only), readers b, shared with a group b belongs to
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:1', 'pin', '"1234"');                                             -- 8 private to a
SELECT memtx.stage(:tx, 'acct:1', 'email', '"ada@example.org"', readers => ARRAY['regress_lookup_b']);  -- 9
SELECT memtx.stage(:tx, 'acct:1', 'phone', '"555"', scope => 'shared', readers => ARRAY['regress_lookup_team']);  -- 10
SELECT record_id, state FROM memtx.commit(:tx);
RESET ROLE;
-- another namespace
SELECT memtx.begin(agent => 'regress_lookup_a', namespace => 'bank') AS tx \gset
SET ROLE regress_lookup_a;
SELECT memtx.stage(:tx, 'acct:1', 'status', '"frozen"', scope => 'public');                    -- 11
SELECT record_id, state FROM memtx.commit(:tx);
RESET ROLE;
SELECT id, attribute, state, owner, scope, readers, namespace FROM memtx.records ORDER BY id;

-- the entity, as each role: active records it may read, in id order
SET ROLE regress_lookup_a;
SELECT id, attribute, value, state FROM memtx.lookup('acct:1');
SET ROLE regress_lookup_b;
SELECT id, attribute, value, state FROM memtx.lookup('acct:1');
RESET ROLE;
CREATE ROLE regress_lookup_c;
SET ROLE regress_lookup_c;
SELECT id, attribute, value, state FROM memtx.lookup('acct:1');
RESET ROLE;
-- a slot; the namespace is named, not implied; an unknown entity or slot returns nothing
SET ROLE regress_lookup_b;
SELECT id, value FROM memtx.lookup('acct:1', 'status');
-- another namespace answers its members only (SPEC §17), with one error
-- whether it exists or not
SELECT pg_temp.try($$SELECT memtx.lookup('acct:1', 'status', 'bank')$$);
SELECT pg_temp.try($$SELECT memtx.lookup('acct:1', 'status', 'nowhere')$$);
RESET ROLE;
SELECT memtx.grant_namespace('bank', 'regress_lookup_team');
SET ROLE regress_lookup_b;
SELECT id, value FROM memtx.lookup('acct:1', 'status', 'bank');
SELECT id, value FROM memtx.lookup(entity => 'acct:1', namespace => 'bank');
SELECT count(*) FROM memtx.lookup('acct:1', 'balance');
SELECT count(*) FROM memtx.lookup('acct:2');
-- full rows of memtx.records
SELECT (r).id, (r).kind, (r).authority, (r).source FROM (SELECT r FROM memtx.lookup('acct:1', 'status') r) s;
RESET ROLE;
-- the open transaction's record appears once it commits
SELECT record_id, state FROM memtx.commit(:open_tx);
SELECT id FROM memtx.lookup('acct:1', 'balance');

-- errors: entity and namespace must not be null
SELECT pg_temp.try('SELECT * FROM memtx.lookup(NULL)');
SELECT pg_temp.try('SELECT * FROM memtx.lookup(''acct:1'', NULL, NULL)');

-- no write of any kind: no xid, no sequence value, no read set, no memtx transaction, no
-- lease, and no lock but AccessShareLock on the tables it reads
SELECT (SELECT last_value FROM memtx.clock) AS clock_before,
       (SELECT last_value FROM memtx.transaction_id_seq) AS tx_seq_before,
       (SELECT count(*) FROM memtx.read_set) AS read_set_before,
       (SELECT max(lease_expires_at) FROM memtx.transactions) AS lease_before \gset
SET ROLE regress_lookup_a;
BEGIN;
SELECT count(*) FROM memtx.lookup('acct:1');
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
SELECT DISTINCT locktype, mode FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype NOT IN ('virtualxid') AND NOT (locktype = 'relation' AND relation::regclass::text LIKE 'pg_%')
 ORDER BY 1, 2;
COMMIT;
RESET ROLE;
SELECT (SELECT last_value FROM memtx.clock) = :clock_before AS clock_unchanged,
       (SELECT last_value FROM memtx.transaction_id_seq) = :tx_seq_before AS no_transaction,
       (SELECT count(*) FROM memtx.read_set) = :read_set_before AS no_read_set,
       (SELECT max(lease_expires_at) FROM memtx.transactions) = :'lease_before' AS no_lease;

-- it runs in a READ ONLY transaction and under REPEATABLE READ (the transaction's snapshot)
SET ROLE regress_lookup_a;
BEGIN READ ONLY;
SELECT array_agg(id) AS read_only FROM memtx.lookup('acct:1');
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT array_agg(id) AS repeatable_read FROM memtx.lookup('acct:1');
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY;
SELECT array_agg(id) AS serializable FROM memtx.lookup('acct:1');
COMMIT;
RESET ROLE;

-- valid_at (SPEC §18): only the records whose validity contains the instant,
-- bounds as the range says ([ inclusive, ) exclusive); without it, all
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'cache:1', 'quote', '"a"', scope => 'public', valid => '[2030-05-31 00:00+00,2030-06-01 01:00+00)');
SELECT memtx.stage(:tx, 'cache:1', 'rate', '"b"', scope => 'public', valid => '[2030-06-01 00:00+00,)');
SELECT record_id, state FROM memtx.commit(:tx);
SELECT attribute FROM memtx.lookup('cache:1', valid_at => '2030-05-31 23:00+00');
SELECT attribute FROM memtx.lookup('cache:1', valid_at => '2030-06-01 00:00+00');
SELECT attribute FROM memtx.lookup('cache:1', valid_at => '2030-06-01 01:00+00');
SELECT attribute FROM memtx.lookup('cache:1', 'quote', valid_at => '2030-06-01 00:59:59.999999+00');
SELECT attribute FROM memtx.lookup('cache:1', 'quote', valid_at => '2030-06-01 01:00+00');
SELECT attribute FROM memtx.lookup('cache:1');
-- nothing is revoked by expiry: the record is still active
SELECT state FROM memtx.records WHERE entity = 'cache:1' AND attribute = 'quote';

DROP EXTENSION memtx CASCADE;
DROP ROLE regress_lookup_a;
DROP ROLE regress_lookup_b;
DROP ROLE regress_lookup_c;
DROP ROLE regress_lookup_team;
