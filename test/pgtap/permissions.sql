-- Principals, permissions and hardening (SPEC §3 tier trust, §7).
-- Agents are PostgreSQL roles; each assertion runs its SQL as one of them.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
SET client_min_messages = warning;
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
DROP EXTENSION IF EXISTS memtx CASCADE;
CREATE EXTENSION memtx CASCADE;
SELECT plan(57);

CREATE ROLE regress_memtx_team_a NOLOGIN;
CREATE ROLE regress_memtx_team_b NOLOGIN;
CREATE ROLE regress_memtx_alice NOLOGIN IN ROLE regress_memtx_team_a;
CREATE ROLE regress_memtx_carol NOLOGIN IN ROLE regress_memtx_team_a;
CREATE ROLE regress_memtx_bob NOLOGIN IN ROLE regress_memtx_team_b;
SELECT memtx.register_source('crm', 0.5);
SELECT memtx.register_source('ledger', 1.0);

-- Run q as role r: 'ok' or the SQLSTATE of its error.
CREATE FUNCTION pg_temp.as_role(r text, q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        EXECUTE format('SET LOCAL ROLE %I', r);
        EXECUTE q;
        RESET ROLE;
        RETURN 'ok';
    EXCEPTION WHEN OTHERS THEN
        RETURN SQLSTATE;
    END;
END $$;
-- Run q as role r with search_path sp: 'ok' or the SQLSTATE of its error.
CREATE FUNCTION pg_temp.as_role_path(r text, sp text, q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE saved text := current_setting('search_path');
BEGIN
    BEGIN
        EXECUTE format('SET LOCAL ROLE %I', r);
        PERFORM pg_catalog.set_config('search_path', sp, true);
        EXECUTE q;
        PERFORM pg_catalog.set_config('search_path', saved, true);
        RESET ROLE;
        RETURN 'ok';
    EXCEPTION WHEN OTHERS THEN
        RETURN SQLSTATE;
    END;
END $$;
-- Run q as role r and return its first column as text (errors propagate).
CREATE FUNCTION pg_temp.value_as(r text, q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE res text;
BEGIN
    EXECUTE format('SET LOCAL ROLE %I', r);
    EXECUTE q INTO res;
    RESET ROLE;
    RETURN res;
END $$;
-- Stage one record as r in a fresh transaction of r's and commit it; returns
-- 'id:state:reason'.
CREATE FUNCTION pg_temp.commit_one(r text, stage_args text, pre text DEFAULT '') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE tx bigint; rid bigint; res text;
BEGIN
    tx := pg_temp.value_as(r, 'SELECT memtx.begin()')::bigint;
    IF pre <> '' THEN PERFORM pg_temp.value_as(r, format(pre, tx)); END IF;
    rid := pg_temp.value_as(r, format('SELECT memtx.stage(%s, %s)', tx, stage_args))::bigint;
    res := pg_temp.value_as(r, format(
        'SELECT string_agg(record_id || '':'' || state || '':'' || coalesce(reason, ''''), '','') FROM memtx.commit(%s) WHERE record_id = %s', tx, rid));
    RETURN res;
END $$;
CREATE TEMP TABLE ids (name text PRIMARY KEY, id bigint);
GRANT ALL ON ids TO PUBLIC;

-- alice: a private record and a record shared with team_a
INSERT INTO ids SELECT 'private', split_part(pg_temp.commit_one('regress_memtx_alice',
    $$'acct:1', 'balance', '100', source => 'crm'$$), ':', 1)::bigint;
INSERT INTO ids SELECT 'shared', split_part(pg_temp.commit_one('regress_memtx_alice',
    $$'acct:1', 'owner', '"ann"', source => 'crm', scope => 'shared', readers => '{regress_memtx_team_a}'$$), ':', 1)::bigint;

-- direct writes are refused for agents
SELECT is(pg_temp.as_role('regress_memtx_bob', format(
    $$INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, authority, confidence, owner, staged_xid, staged_pos)
      VALUES (1, 'default', 'x', 'y', '1', 1, 1, 'regress_memtx_bob', '1', 1)$$)),
    '42501', 'direct INSERT into memtx.records is refused');
SELECT is(pg_temp.as_role('regress_memtx_alice', $$UPDATE memtx.records SET state = 'revoked'$$),
    '42501', 'direct UPDATE of memtx.records is refused');
SELECT is(pg_temp.as_role('regress_memtx_alice', $$DELETE FROM memtx.records$$),
    '42501', 'direct DELETE from memtx.records is refused');
SELECT is(pg_temp.as_role('regress_memtx_alice', $$INSERT INTO memtx.edges VALUES (2, 1)$$),
    '42501', 'direct INSERT into memtx.edges is refused');
SELECT is(pg_temp.as_role('regress_memtx_alice', $$UPDATE memtx.transactions SET status = 'committed'$$),
    '42501', 'direct UPDATE of memtx.transactions is refused');

-- row-level security and read
SELECT is(pg_temp.value_as('regress_memtx_bob', format('SELECT count(*) FROM memtx.records WHERE id IN (%s, %s)',
    (SELECT id FROM ids WHERE name = 'private'), (SELECT id FROM ids WHERE name = 'shared'))), '0',
    'RLS hides private and other-team records from a direct SELECT');
SELECT is(pg_temp.value_as('regress_memtx_carol', format('SELECT count(*) FROM memtx.records WHERE id IN (%s, %s)',
    (SELECT id FROM ids WHERE name = 'private'), (SELECT id FROM ids WHERE name = 'shared'))), '1',
    'RLS shows a team member the team''s shared record but not a colleague''s private one');
SELECT is(pg_temp.value_as('regress_memtx_alice', 'SELECT count(*) FROM memtx.records'), '2',
    'RLS shows the owner her records');
SELECT is(pg_temp.value_as('regress_memtx_bob',
    $$SELECT count(*) FROM memtx.read(memtx.begin(), 'acct:1')$$), '0',
    'memtx.read hides records the agent cannot read');
SELECT is(pg_temp.value_as('regress_memtx_carol',
    $$SELECT string_agg(attribute, ',') FROM memtx.read(memtx.begin(), 'acct:1')$$), 'owner',
    'memtx.read shows a team member only the shared record');

-- deriving from an unreadable parent
SELECT is(pg_temp.as_role('regress_memtx_bob', format(
    $$SELECT memtx.stage(memtx.begin(), 'acct:1', 'copy', '1', derived_from => ARRAY[%s]::bigint[])$$,
    (SELECT id FROM ids WHERE name = 'private'))),
    '42704', 'staging derived from an unreadable parent is refused like a missing parent');

-- tier trust and transaction ownership
SELECT is(pg_temp.as_role('regress_memtx_alice', $$SELECT memtx.begin(tier => 'low')$$),
    '42501', 'an agent passing a tier is refused');
SELECT is(pg_temp.as_role('regress_memtx_alice', $$SELECT memtx.begin(agent => 'regress_memtx_bob')$$),
    '42501', 'an agent naming another agent is refused');
SELECT is(pg_temp.as_role('regress_memtx_alice', $$SELECT memtx.begin(isolation => 'raw_read')$$),
    '42501', 'an agent pinning an isolation level is refused');
SELECT memtx.set_role_tier('regress_memtx_carol', 'external_action');
INSERT INTO ids SELECT 'carol_tx', pg_temp.value_as('regress_memtx_carol', 'SELECT memtx.begin()')::bigint;
SELECT is(pg_temp.value_as('regress_memtx_carol', format($$SELECT tier || '/' || isolation FROM memtx.transactions WHERE id = %s$$, (SELECT id FROM ids WHERE name = 'carol_tx'))),
    'external_action/action_safe_read', 'an agent gets the tier configured for its role');
INSERT INTO ids SELECT 'alice_tx', pg_temp.value_as('regress_memtx_alice', 'SELECT memtx.begin()')::bigint;
SELECT is(pg_temp.as_role('regress_memtx_bob', format($$SELECT memtx.stage(%s, 'e', 'a', '1')$$, (SELECT id FROM ids WHERE name = 'alice_tx'))),
    '42501', 'staging into another agent''s transaction is refused');
SELECT is(pg_temp.as_role('regress_memtx_bob', format($$SELECT * FROM memtx.commit(%s)$$, (SELECT id FROM ids WHERE name = 'alice_tx'))),
    '42501', 'committing another agent''s transaction is refused');
SELECT is(pg_temp.as_role('regress_memtx_bob', format($$SELECT * FROM memtx.read(%s)$$, (SELECT id FROM ids WHERE name = 'alice_tx'))),
    '42501', 'reading in another agent''s transaction is refused');
SELECT is(pg_temp.as_role('regress_memtx_bob', format($$SELECT * FROM memtx.gate(%s, 'email')$$, (SELECT id FROM ids WHERE name = 'alice_tx'))),
    '42501', 'gating in another agent''s transaction is refused');
SELECT is(pg_temp.as_role('regress_memtx_bob', format($$SELECT * FROM memtx.abort(%s)$$, (SELECT id FROM ids WHERE name = 'alice_tx'))),
    '42501', 'aborting another agent''s transaction is refused');
SELECT is(pg_temp.as_role('regress_memtx_bob', format($$SELECT * FROM memtx.revoke(%s)$$, (SELECT id FROM ids WHERE name = 'private'))),
    '42704', 'revoking a record the agent may not read is refused like a missing record');
SELECT is(pg_temp.as_role('regress_memtx_carol', format($$SELECT * FROM memtx.revoke(%s)$$, (SELECT id FROM ids WHERE name = 'shared'))),
    '42501', 'revoking a readable record the agent does not own is refused');

-- namespaces are tenancy, and SET ROLE to a group cannot lower the tier
SELECT is(pg_temp.as_role('regress_memtx_bob', $$SELECT memtx.begin(namespace => 'team_a_space')$$),
    '42501', 'an agent cannot begin in a namespace it was not granted');
SELECT memtx.grant_namespace('team_a_space', 'regress_memtx_team_a');
SELECT is(pg_temp.as_role('regress_memtx_alice', $$SELECT memtx.begin(namespace => 'team_a_space')$$),
    'ok', 'a member of a granted role begins there');
SELECT is(pg_temp.as_role('regress_memtx_bob', $$SELECT memtx.begin(namespace => 'team_a_space')$$),
    '42501', 'a role outside the grant still cannot');
SELECT is(pg_temp.as_role('regress_memtx_bob', $$SELECT memtx.grant_namespace('team_b_space', 'regress_memtx_bob')$$),
    '42501', 'an agent cannot grant itself a namespace');
SELECT is(pg_temp.as_role('regress_memtx_bob', $$SELECT memtx.register_source('mine', 1.0, ARRAY['regress_memtx_bob'])$$),
    '42501', 'an agent cannot register a source');
SELECT memtx.register_source('vault', 1.0, ARRAY['regress_memtx_team_a']);
SELECT is(pg_temp.as_role('regress_memtx_bob', $$SELECT memtx.stage(memtx.begin(), 'acct:2', 'x', '1', source => 'vault')$$),
    '42501', 'an agent outside a source''s claimants cannot stage with it');
SELECT is(pg_temp.as_role('regress_memtx_carol', $$SELECT memtx.stage(memtx.begin(), 'acct:2', 'x', '1', source => 'vault')$$),
    'ok', 'a member of a claimant role can');

-- permission laundering
SELECT alike(pg_temp.commit_one('regress_memtx_alice', format(
    $$'acct:1', 'summary', '"rich"', kind => 'summary', scope => 'shared', readers => '{regress_memtx_team_a}', derived_from => ARRAY[%s]::bigint[]$$,
    (SELECT id FROM ids WHERE name = 'private'))), '%:quarantined:permission_laundering',
    'laundering private -> shared is blocked');
SELECT alike(pg_temp.commit_one('regress_memtx_alice', format(
    $$'acct:1', 'public_summary', '"rich"', kind => 'summary', scope => 'public', derived_from => ARRAY[%s]::bigint[]$$,
    (SELECT id FROM ids WHERE name = 'private'))), '%:quarantined:permission_laundering',
    'laundering private -> public is blocked');
SELECT alike(pg_temp.commit_one('regress_memtx_alice', format(
    $$'acct:1', 'owner_public', '"ann"', scope => 'public', derived_from => ARRAY[%s]::bigint[]$$,
    (SELECT id FROM ids WHERE name = 'shared'))), '%:quarantined:permission_laundering',
    'laundering shared -> public is blocked');
SELECT alike(pg_temp.commit_one('regress_memtx_alice', format(
    $$'acct:1', 'owner_copy', '"ann"', kind => 'shared_copy', scope => 'shared', readers => '{regress_memtx_team_a,regress_memtx_team_b}', derived_from => ARRAY[%s]::bigint[]$$,
    (SELECT id FROM ids WHERE name = 'shared'))), '%:quarantined:permission_laundering',
    'a child widening its parent''s readers is blocked');
SELECT alike(pg_temp.commit_one('regress_memtx_alice',
    $$'acct:2', 'summary', '"x"', kind => 'summary', scope => 'shared', readers => '{regress_memtx_team_a}',
      derived_from => ARRAY[(SELECT max(id) FROM memtx.records WHERE entity = 'acct:2' AND attribute = 'secret')]$$,
    $$SELECT memtx.stage(%s, 'acct:2', 'secret', '"s3cr3t"')$$), '%:quarantined:permission_laundering',
    'laundering from a private parent staged in the same transaction is blocked');
SELECT alike(pg_temp.commit_one('regress_memtx_alice',
    $$'acct:3', 'note', '"balance is 100"', scope => 'shared', readers => '{regress_memtx_team_a}'$$,
    $$SELECT count(*) FROM memtx.read(%s, 'acct:1', 'balance')$$), '%:quarantined:permission_laundering',
    'transcription after a private read is blocked by the read-set rule');
SET memtx.flow_control = 'declared';
SELECT alike(pg_temp.commit_one('regress_memtx_alice',
    $$'acct:3', 'note2', '"balance is 100"', scope => 'shared', readers => '{regress_memtx_team_a}'$$,
    $$SELECT count(*) FROM memtx.read(%s, 'acct:1', 'balance')$$), '%:committed:',
    'with flow_control = declared the same transcription commits (the rule is what blocks it)');
RESET memtx.flow_control;

-- legitimate derivations
SELECT alike(pg_temp.commit_one('regress_memtx_alice', format(
    $$'acct:1', 'balance_copy', '100', derived_from => ARRAY[%s]::bigint[]$$,
    (SELECT id FROM ids WHERE name = 'private'))), '%:committed:',
    'private -> private derivation commits');
SELECT alike(pg_temp.commit_one('regress_memtx_carol', format(
    $$'acct:1', 'owner_summary', '"ann"', kind => 'summary', scope => 'shared', readers => '{regress_memtx_team_a}', derived_from => ARRAY[%s]::bigint[]$$,
    (SELECT id FROM ids WHERE name = 'shared'))), '%:action_safe:',
    'shared -> shared derivation with the same readers commits');

-- superseding requires writer membership
SELECT alike(pg_temp.commit_one('regress_memtx_carol',
    $$'acct:1', 'owner', '"zed"', source => 'ledger', scope => 'shared', readers => '{regress_memtx_team_a}'$$),
    '%:quarantined:write_not_permitted',
    'superseding a rival without writer membership gives write_not_permitted');

-- settings are superuser-only
SELECT is(pg_temp.as_role('regress_memtx_alice', format('SET memtx.%s = %L', s, v)), '42501',
          format('an agent cannot SET memtx.%s', s))
  FROM (VALUES ('confidence_threshold', '0'), ('authority_bypass', '0'), ('logical_now', '2000-01-01'),
               ('flow_control', 'declared'), ('harness_role', 'regress_memtx_alice'),
               ('default_tier', 'low'), ('default_authority', '1'), ('lease_timeout', '99999')) g(s, v)
 ORDER BY s;

-- search_path attack: an agent plants look-alikes of functions and operators
-- the API uses, in a schema it puts first on its search_path
CREATE SCHEMA regress_memtx_evil AUTHORIZATION regress_memtx_bob;
SET ROLE regress_memtx_bob;
CREATE TABLE regress_memtx_evil.log (what text);
CREATE FUNCTION regress_memtx_evil.unnest(bigint[]) RETURNS SETOF bigint LANGUAGE sql
    AS $$ INSERT INTO regress_memtx_evil.log VALUES ('unnest') RETURNING 1::bigint $$;
CREATE FUNCTION regress_memtx_evil.nextval(regclass) RETURNS bigint LANGUAGE sql
    AS $$ INSERT INTO regress_memtx_evil.log VALUES ('nextval') RETURNING 1::bigint $$;
CREATE FUNCTION regress_memtx_evil.evil_eq(text, text) RETURNS boolean LANGUAGE sql
    AS $$ INSERT INTO regress_memtx_evil.log VALUES ('=') RETURNING true $$;
CREATE OPERATOR regress_memtx_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = regress_memtx_evil.evil_eq);
RESET ROLE;
SELECT is(pg_temp.as_role_path('regress_memtx_bob', 'regress_memtx_evil, pg_catalog',
    $$SELECT count(*) FROM unnest(ARRAY[1::bigint]) WHERE 'a' = 'a'$$), 'ok',
    'the planted functions work for a query that does not pin search_path');
SELECT ok((SELECT count(*) FROM regress_memtx_evil.log) > 0, 'the trap fired for the unpinned query');
TRUNCATE regress_memtx_evil.log;
SELECT is(pg_temp.as_role_path('regress_memtx_bob', 'regress_memtx_evil, pg_catalog', $$
    WITH t AS (SELECT memtx.begin() AS tx),
         p AS (SELECT memtx.stage(t.tx, 'evil', 'p', '1') AS id, t.tx FROM t),
         c AS (SELECT memtx.stage(p.tx, 'evil', 'c', '2', derived_from => ARRAY[p.id]) AS id, p.tx FROM p)
    SELECT (SELECT count(*) FROM memtx.commit(c.tx)) + (SELECT count(*) FROM memtx.read(c.tx, 'evil', 'p'))
         + (SELECT count(*) FROM memtx.act(c.tx, 'email', '{}', ARRAY[c.id]))
      FROM c$$), 'ok',
    'the API runs for an agent with a hostile search_path');
SELECT is((SELECT count(*) FROM regress_memtx_evil.log), 0::bigint,
    'no API function ran a planted function or operator');

-- writer fencing (SPEC §12) is the harness's
SELECT is(pg_temp.as_role('regress_memtx_bob', $$SELECT memtx.fence('regress_memtx_alice')$$),
    '42501', 'an agent cannot fence another');
SELECT is(pg_temp.as_role('regress_memtx_bob', $$SELECT memtx.unfence('regress_memtx_alice')$$),
    '42501', 'an agent cannot unfence another');
SELECT memtx.fence('regress_memtx_bob');
SELECT is(pg_temp.as_role('regress_memtx_bob', $$SELECT memtx.begin()$$),
    '42501', 'a fenced agent cannot begin');
SELECT is(pg_temp.as_role('regress_memtx_bob', $$SELECT memtx.unfence('regress_memtx_bob')$$),
    '42501', 'a fenced agent cannot unfence itself');
SELECT memtx.unfence('regress_memtx_bob');
SELECT is(pg_temp.as_role('regress_memtx_bob', $$SELECT memtx.begin()$$),
    'ok', 'after unfence the agent begins again');
SELECT is(pg_temp.as_role('regress_memtx_alice', $$SELECT memtx.begin()$$),
    'ok', 'a fence of one role leaves the others writing');

SELECT * FROM finish();
ROLLBACK;
