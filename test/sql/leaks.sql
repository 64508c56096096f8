-- Metadata leaks: errors never name a namespace, owner or record the caller may not read, and
-- a record id that does not exist and one the caller may not read get the same error (42704).
\i test/sql/include/prelude.psql
-- the full error, detail included; digits masked so two errors about two ids compare equal
CREATE FUNCTION pg_temp.err(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE m text; d text;
BEGIN EXECUTE sql; RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
    RETURN SQLSTATE || ': ' || regexp_replace(m || coalesce(' / ' || nullif(d, ''), ''), '[0-9]+', 'N', 'g');
END $$;
CREATE ROLE regress_memtx_lk_owner;
CREATE ROLE regress_memtx_lk_reader;
CREATE ROLE regress_memtx_lk_outsider;
SELECT memtx.grant_namespace('tenant-secret', 'regress_memtx_lk_owner');

-- the owner's records: one private in 'default', one shared with a reader, one in its own namespace
SET ROLE regress_memtx_lk_owner;
SELECT memtx.begin() AS otx \gset
SELECT memtx.stage(:otx, 'acct:1', 'pin', '1234') AS private_rec \gset
SELECT memtx.stage(:otx, 'acct:1', 'alias', '"a"', readers => ARRAY['regress_memtx_lk_reader']) AS shared_rec \gset
SELECT count(*) FROM memtx.commit(:otx);
SELECT memtx.begin(namespace => 'tenant-secret') AS stx \gset
SELECT memtx.stage(:stx, 'deal', 'price', '1', scope => 'public') AS public_secret_ns \gset
SELECT memtx.stage(:stx, 'deal', 'terms', '2') AS private_secret_ns \gset
SELECT count(*) FROM memtx.commit(:stx);
RESET ROLE;
SELECT max(id) + 1000 AS missing FROM memtx.records \gset

-- stage: a parent that does not exist and one the caller may not read are the same error,
-- before the namespace check (a private record elsewhere is not found, not "elsewhere")
SET ROLE regress_memtx_lk_outsider;
SELECT memtx.begin() AS tx \gset
SELECT pg_temp.err(format('SELECT memtx.stage(%s, ''e'', ''a'', ''1'', derived_from => ARRAY[%s]::bigint[])', :tx, :missing)) AS missing_parent,
       pg_temp.err(format('SELECT memtx.stage(%s, ''e'', ''a'', ''1'', derived_from => ARRAY[%s]::bigint[])', :tx, :private_rec)) AS unreadable_parent,
       pg_temp.err(format('SELECT memtx.stage(%s, ''e'', ''a'', ''1'', derived_from => ARRAY[%s]::bigint[])', :tx, :private_secret_ns)) AS unreadable_elsewhere;
-- a readable parent in another namespace: refused like an unknown id (42704),
-- without naming either namespace
SELECT pg_temp.err(format('SELECT memtx.stage(%s, ''e'', ''a'', ''1'', derived_from => ARRAY[%s]::bigint[])', :tx, :public_secret_ns)) AS readable_elsewhere;

-- act: the same for inputs
SELECT pg_temp.err(format('SELECT memtx.act(%s, ''notify'', ''{}'', ARRAY[%s]::bigint[])', :tx, :missing)) AS missing_input,
       pg_temp.err(format('SELECT memtx.act(%s, ''notify'', ''{}'', ARRAY[%s]::bigint[])', :tx, :private_rec)) AS unreadable_input,
       pg_temp.err(format('SELECT memtx.act(%s, ''notify'', ''{}'', ARRAY[%s]::bigint[])', :tx, :public_secret_ns)) AS readable_input_elsewhere;
SELECT count(*) AS action_log_rows FROM memtx.action_log;

-- revoke: the same for a record to retract; a readable record of another owner is 42501
-- without the owner's name
SELECT pg_temp.err(format('SELECT count(*) FROM memtx.revoke(%s)', :missing)) AS revoke_missing,
       pg_temp.err(format('SELECT count(*) FROM memtx.revoke(%s)', :private_rec)) AS revoke_unreadable;
RESET ROLE;
SET ROLE regress_memtx_lk_reader;
SELECT pg_temp.err(format('SELECT count(*) FROM memtx.revoke(%s)', :shared_rec)) AS revoke_readable_not_owned;
RESET ROLE;
SELECT state FROM memtx.records WHERE id IN (:private_rec, :shared_rec) ORDER BY id;

-- another agent's transaction: refused without naming its agent
SET ROLE regress_memtx_lk_outsider;
SELECT pg_temp.err(format('SELECT memtx.stage(%s, ''e'', ''a'', ''1'')', :stx)) AS others_transaction;
-- begin in a namespace the role is not a member of names neither it nor its members
SELECT pg_temp.err('SELECT memtx.begin(namespace => ''tenant-secret'')') AS foreign_namespace;
RESET ROLE;

-- a harness acting for an agent may name an input the agent reads and it does not
CREATE ROLE regress_memtx_lk_harness;
SET memtx.harness_role = 'regress_memtx_lk_harness';
SET ROLE regress_memtx_lk_harness;
SELECT memtx.begin(agent => 'regress_memtx_lk_owner') AS htx \gset
SELECT allowed, reason FROM memtx.act(:htx, 'notify', '{}', ARRAY[:private_rec]::bigint[]);
SELECT pg_temp.err(format('SELECT memtx.act(%s, ''notify'', ''{}'', ARRAY[%s]::bigint[])', :htx, :missing)) AS missing_input;
RESET ROLE;
RESET memtx.harness_role;

-- the harness still finds every record
SELECT count(*) > 0 AS harness_revokes FROM memtx.revoke(:private_secret_ns);

DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_lk_owner;
DROP ROLE regress_memtx_lk_reader;
DROP ROLE regress_memtx_lk_outsider;
DROP ROLE regress_memtx_lk_harness;
