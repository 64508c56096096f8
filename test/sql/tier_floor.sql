-- Tier floor: without a harness tier, the highest tier configured for the current role or the
-- session user, so SET ROLE to a group role cannot lower it.
\i test/sql/include/prelude.psql
CREATE ROLE regress_memtx_tf_group;
CREATE ROLE regress_memtx_tf_agent IN ROLE regress_memtx_tf_group;
CREATE ROLE regress_memtx_tf_plain IN ROLE regress_memtx_tf_group;
CREATE FUNCTION pg_temp.tier_of(tx bigint) RETURNS text LANGUAGE sql AS
    $$SELECT agent || ' ' || tier || ' ' || isolation FROM memtx.transactions WHERE id = tx$$;
SELECT memtx.set_role_tier('regress_memtx_tf_agent', 'external_action');
SELECT memtx.set_role_tier('regress_memtx_tf_group', 'low');

-- the agent logged in as itself (session user) and SET ROLE to its low-tier group: the agent's
-- tier still applies; the transaction's agent is the current role
SET SESSION AUTHORIZATION regress_memtx_tf_agent;
SELECT memtx.begin() AS tx \gset
SET ROLE regress_memtx_tf_group;
SELECT memtx.begin() AS tx_group \gset
RESET ROLE;
RESET SESSION AUTHORIZATION;
SELECT pg_temp.tier_of(:tx) AS as_itself, pg_temp.tier_of(:tx_group) AS after_set_role;

-- a current role configured higher than the session user wins as well
SELECT memtx.set_role_tier('regress_memtx_tf_agent', 'medium');
SELECT memtx.set_role_tier('regress_memtx_tf_group', 'high');
SET SESSION AUTHORIZATION regress_memtx_tf_agent;
SET ROLE regress_memtx_tf_group;
SELECT memtx.begin() AS tx \gset
RESET ROLE;
RESET SESSION AUTHORIZATION;
SELECT pg_temp.tier_of(:tx) AS group_higher;

-- only configured tiers count: a session user with none leaves the current role's
SET SESSION AUTHORIZATION regress_memtx_tf_plain;
SET ROLE regress_memtx_tf_group;
SELECT memtx.begin() AS tx \gset
RESET ROLE;
SELECT memtx.begin() AS tx_plain \gset
RESET SESSION AUTHORIZATION;
SELECT pg_temp.tier_of(:tx) AS group_tier, pg_temp.tier_of(:tx_plain) AS default_tier;

-- a harness that names an agent gets that agent's configured tier, and its own tier when it
-- passes one
SELECT pg_temp.tier_of(memtx.begin(agent => 'regress_memtx_tf_group')) AS named_agent,
       pg_temp.tier_of(memtx.begin('low', agent => 'regress_memtx_tf_group')) AS harness_tier;

DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_tf_agent;
DROP ROLE regress_memtx_tf_plain;
DROP ROLE regress_memtx_tf_group;
