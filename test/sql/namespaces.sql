-- Namespaces are tenancy: begin only where the role is a member (or a harness); 'default' is open.
\i test/sql/include/prelude.psql
CREATE ROLE regress_memtx_ns_team;
CREATE ROLE regress_memtx_ns_alice IN ROLE regress_memtx_ns_team;
CREATE ROLE regress_memtx_ns_bob;
CREATE ROLE regress_memtx_ns_harness;
GRANT regress_memtx_ns_harness TO regress_memtx_ns_bob;

-- 'default' is open to every role
SET ROLE regress_memtx_ns_bob;
SELECT memtx.begin() > 0 AS began_in_default;
-- any other namespace needs a grant: 42501, the same for a namespace in use and one never
-- used, and the error names neither (leaks.sql shows its detail)
SELECT pg_temp.try('SELECT memtx.begin(namespace => ''acme'')');
SELECT pg_temp.try('SELECT memtx.begin(namespace => ''never-used'')');
RESET ROLE;
SELECT count(*) AS transactions FROM memtx.transactions;

-- the harness grants a namespace to a role; members of that role may begin there
SELECT memtx.grant_namespace('acme', 'regress_memtx_ns_team');
SELECT memtx.grant_namespace('acme', 'regress_memtx_ns_team');   -- again: no change
SELECT namespace, role_name FROM memtx.namespace_members ORDER BY 1, 2;
SET ROLE regress_memtx_ns_alice;
SELECT memtx.begin(namespace => 'acme') AS alice_tx \gset
SELECT memtx.stage(:alice_tx, 'order:1', 'status', '"paid"') AS alice_rec \gset
SELECT state FROM memtx.commit(:alice_tx);
-- a member sees the grants she holds (directly or through a group), nothing else
SELECT namespace, role_name FROM memtx.namespace_members;
RESET ROLE;
SET ROLE regress_memtx_ns_bob;
SELECT pg_temp.try('SELECT memtx.begin(namespace => ''acme'')');
SELECT count(*) AS grants_bob_sees FROM memtx.namespace_members;
RESET ROLE;

-- a harness begins anywhere, also for an agent outside the namespace; that agent may then
-- work in the transaction the harness opened for it
SELECT memtx.begin(namespace => 'elsewhere') > 0 AS harness_began;
SELECT memtx.begin(namespace => 'acme', agent => 'regress_memtx_ns_bob') AS bob_tx \gset
SET ROLE regress_memtx_ns_bob;
SELECT memtx.stage(:bob_tx, 'order:2', 'status', '"new"') > 0 AS bob_staged;
SELECT count(*) FROM memtx.abort(:bob_tx);
RESET ROLE;
-- so does a member of memtx.harness_role
SET memtx.harness_role = 'regress_memtx_ns_harness';
SET ROLE regress_memtx_ns_bob;
SELECT memtx.begin(namespace => 'harnessed') > 0 AS member_of_harness_role_began;
RESET ROLE;
RESET memtx.harness_role;

-- revoke_namespace: later begins are refused; an open transaction runs on to its end, and
-- records keep their own permissions
SET ROLE regress_memtx_ns_alice;
SELECT memtx.begin(namespace => 'acme') AS open_tx \gset
RESET ROLE;
SELECT memtx.revoke_namespace('acme', 'regress_memtx_ns_team');
SELECT memtx.revoke_namespace('acme', 'regress_memtx_ns_team');  -- not granted: no change
SELECT count(*) AS grants FROM memtx.namespace_members;
SET ROLE regress_memtx_ns_alice;
SELECT pg_temp.try('SELECT memtx.begin(namespace => ''acme'')');
SELECT memtx.stage(:open_tx, 'order:3', 'status', '"shipped"') > 0 AS staged_in_open_tx;
SELECT state FROM memtx.commit(:open_tx);
SELECT entity, value FROM memtx.records WHERE id = :alice_rec;
RESET ROLE;

-- grant_namespace and revoke_namespace: harness only, checked arguments, nothing written on error
SET ROLE regress_memtx_ns_alice;
SELECT pg_temp.try('SELECT memtx.grant_namespace(''acme'', ''regress_memtx_ns_alice'')');
SELECT pg_temp.try('SELECT memtx.revoke_namespace(''acme'', ''regress_memtx_ns_team'')');
RESET ROLE;
SELECT pg_temp.try('SELECT memtx.grant_namespace(NULL, ''regress_memtx_ns_bob'')');
SELECT pg_temp.try('SELECT memtx.grant_namespace(''acme'', NULL)');
SELECT pg_temp.try('SELECT memtx.grant_namespace('''', ''regress_memtx_ns_bob'')');
SELECT pg_temp.try(format('SELECT memtx.grant_namespace(%L, ''regress_memtx_ns_bob'')', repeat('n', 300)));
SELECT pg_temp.try('SELECT memtx.grant_namespace(''acme'', ''regress_memtx_ns_nobody'')');
SELECT pg_temp.try('SELECT memtx.grant_namespace(''default'', ''regress_memtx_ns_bob'')');
SELECT pg_temp.try('SELECT memtx.revoke_namespace(''default'', ''regress_memtx_ns_bob'')');
SELECT pg_temp.try('SELECT memtx.revoke_namespace(NULL, ''regress_memtx_ns_bob'')');
SELECT count(*) AS grants FROM memtx.namespace_members;

DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_ns_alice;
DROP ROLE regress_memtx_ns_bob;
DROP ROLE regress_memtx_ns_team;
DROP ROLE regress_memtx_ns_harness;
