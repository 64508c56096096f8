-- memtx.begin: tier -> isolation, harness-only arguments, role tiers, default tier, namespace.
\i test/sql/include/prelude.psql

-- a harness (superuser) may pass the tier; each tier maps to its level
SELECT memtx.begin('low') AS tx1, memtx.begin('medium') AS tx2,
       memtx.begin('high') AS tx3, memtx.begin('external_action') AS tx4;
SELECT id, tier, isolation, namespace, status, agent = current_user AS agent_is_caller,
       verifier_calls, ended_at IS NULL AS not_ended
  FROM memtx.transactions ORDER BY id;
-- named arguments; isolation pins the level regardless of tier
SELECT memtx.begin(tier => 'external_action', isolation => 'raw_read', namespace => 'ns-b');
SELECT memtx.begin(isolation => 'committed_read');
SELECT id, tier, isolation, namespace FROM memtx.transactions WHERE id > 4 ORDER BY id;
-- defaults: tier from memtx.default_tier (medium), namespace 'default'
SELECT memtx.begin();
SET memtx.default_tier = 'high';
SELECT memtx.begin();
RESET memtx.default_tier;
SELECT id, tier, isolation, namespace FROM memtx.transactions WHERE id > 6 ORDER BY id;

-- the snapshot is taken at begin: a clock position and PostgreSQL's snapshot
SELECT count(DISTINCT snapshot_seq) = count(*) AS positions_distinct,
       bool_and(snapshot_xid IS NOT NULL) AS xids
  FROM memtx.transactions;

-- agents: a harness may name one (a role); others get the calling role
CREATE ROLE regress_memtx_agent;
CREATE ROLE regress_memtx_other;
SELECT memtx.begin(agent => 'regress_memtx_agent') AS tx;
SELECT agent, tier FROM memtx.transactions WHERE id = 9;
SELECT pg_temp.try('SELECT memtx.begin(agent => ''regress_memtx_nobody'')');
SELECT pg_temp.try('SELECT memtx.begin(agent => '''')');

-- a non-harness gets 42501 for tier, agent or isolation, and nothing is written
SET ROLE regress_memtx_agent;
SELECT pg_temp.try('SELECT memtx.begin(''low'')');
SELECT pg_temp.try('SELECT memtx.begin(tier => ''external_action'')');
SELECT pg_temp.try('SELECT memtx.begin(agent => ''regress_memtx_other'')');
SELECT pg_temp.try('SELECT memtx.begin(isolation => ''raw_read'')');
SELECT pg_temp.try('SELECT memtx.begin(NULL, NULL, ''default'', ''raw_read'')');
RESET ROLE;
SELECT count(*) AS transactions FROM memtx.transactions;

-- without arguments an agent gets memtx.default_tier, and is the calling role
SET ROLE regress_memtx_agent;
SELECT memtx.begin() AS tx;
RESET ROLE;
SELECT id, agent, tier, isolation FROM memtx.transactions WHERE id = 10;
-- a role tier set by the harness wins over the default
SELECT memtx.set_role_tier('regress_memtx_agent', 'external_action');
SELECT memtx.set_role_tier('regress_memtx_other', 'low');
SELECT memtx.grant_namespace('tenant-a', 'regress_memtx_agent');   -- tenancy: see namespaces.sql
SET ROLE regress_memtx_agent;
SELECT memtx.begin(namespace => 'tenant-a') AS tx;
RESET ROLE;
SET ROLE regress_memtx_other;
SELECT memtx.begin() AS tx;
RESET ROLE;
SELECT id, agent, tier, isolation, namespace FROM memtx.transactions WHERE id > 10 ORDER BY id;
-- the harness's explicit tier wins over the role tier; a named agent's role tier applies otherwise
SELECT memtx.begin(tier => 'low', agent => 'regress_memtx_agent') AS tx;
SELECT memtx.begin(agent => 'regress_memtx_agent') AS tx;
SELECT id, agent, tier, isolation FROM memtx.transactions WHERE id > 12 ORDER BY id;
-- removing the role tier falls back to the default
SELECT memtx.set_role_tier('regress_memtx_agent', NULL);
SET ROLE regress_memtx_agent;
SELECT memtx.begin() AS tx;
RESET ROLE;
SELECT tier, isolation FROM memtx.transactions WHERE id = 15;
-- an agent cannot set its own tier
SET ROLE regress_memtx_agent;
SELECT pg_temp.try('SELECT memtx.set_role_tier(''regress_memtx_agent'', ''low'')');
SELECT pg_temp.try('SET memtx.default_tier = ''low''');
RESET ROLE;
-- a member of memtx.harness_role is a harness
CREATE ROLE regress_memtx_harness;
GRANT regress_memtx_harness TO regress_memtx_other;
SET memtx.harness_role = 'regress_memtx_harness';
SET ROLE regress_memtx_other;
SELECT memtx.begin(tier => 'high', agent => 'regress_memtx_agent') AS tx;
RESET ROLE;
RESET memtx.harness_role;
SELECT agent, tier, isolation FROM memtx.transactions WHERE id = 16;

-- namespace: NULL and empty are refused, long names too
SELECT pg_temp.try('SELECT memtx.begin(namespace => NULL)');
SELECT pg_temp.try('SELECT memtx.begin(namespace => '''')');
SELECT pg_temp.try(format('SELECT memtx.begin(namespace => %L)', repeat('n', 300)));
-- unknown enum labels
SELECT pg_temp.try('SELECT memtx.begin(''reckless'')');
SELECT pg_temp.try('SELECT memtx.begin(isolation => ''dirty_read'')');
SELECT count(*) AS transactions FROM memtx.transactions;

-- only the transaction's agent (or a harness) may operate on it
SET ROLE regress_memtx_other;
SELECT pg_temp.try('SELECT memtx.stage(10, ''e'', ''a'', ''1'')');
SELECT pg_temp.try('SELECT count(*) FROM memtx.read(10)');
SELECT pg_temp.try('SELECT count(*) FROM memtx.commit(10)');
RESET ROLE;
SET ROLE regress_memtx_agent;
SELECT pg_temp.try('SELECT memtx.stage(10, ''e'', ''a'', ''1'')');
RESET ROLE;
SELECT memtx.stage(10, 'e', 'b', '2');  -- the harness may
SELECT tx_id, CASE WHEN owner = current_user THEN '(harness)' ELSE owner END AS owner FROM memtx.records ORDER BY id;
SELECT status FROM memtx.transactions WHERE id = 10;

DROP OWNED BY regress_memtx_agent, regress_memtx_other;
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_agent;
DROP ROLE regress_memtx_other;
DROP ROLE regress_memtx_harness;
