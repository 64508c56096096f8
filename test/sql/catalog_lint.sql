-- Catalog lint (in the spirit of PostgreSQL's misc_sanity): rules every
-- object of the extension must keep.  Each query lists the offenders, so
-- an empty result is the pass and a new object that breaks a rule shows up
-- here by name.
\i test/sql/include/prelude.psql
-- test/vector/sql/catalog_lint.sql runs this file with memtx_vector installed too
\if :{?with_vector}
SET client_min_messages = warning;
CREATE EXTENSION memtx_vector CASCADE;
RESET client_min_messages;
\endif
CREATE FUNCTION pg_temp.memtx_functions() RETURNS SETOF regprocedure LANGUAGE sql AS $$
    SELECT d.objid::regprocedure FROM pg_depend d
     WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
       AND d.refclassid = 'pg_extension'::regclass
       AND d.refobjid IN (SELECT oid FROM pg_extension WHERE extname IN ('memtx', 'memtx_vector')) $$;

-- every function pins search_path, except
--  * SQL functions with a SQL-standard body (the protocol predicates): their
--    names are bound at CREATE time, and a SET clause would stop the planner
--    from inlining them;
--  * the C functions that run no SQL at all (pure computations, used in
--    index expressions and RLS policies, where a SET clause would cost a
--    function-manager hop per row).  The list is exact: a function that
--    leaves it, or joins it, shows up below.
SELECT p.oid::regprocedure AS unpinned
  FROM pg_proc p
 WHERE p.oid IN (SELECT pg_temp.memtx_functions()) AND p.prosqlbody IS NULL
   AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%')
EXCEPT
SELECT f::regprocedure FROM unnest(ARRAY[
    'memtx.value_digest(jsonb)', 'memtx.slot_digest(text,text,text)', 'memtx.slot_key(text,text,text)',
    'memtx.now()', 'memtx.lifecycle_guard()', 'memtx.legal_transition(memtx.state,memtx.state)',
    'memtx.happened_before(xid8,bigint,pg_snapshot,xid8,bigint)', 'memtx.can_read(text,text[],memtx.scope)',
    'memtx.is_harness()', 'memtx.copying_into(oid)', 'memtx.read_set_lost_before()'
]::regprocedure[]) f
ORDER BY 1;
-- and the query-free functions are all C
SELECT p.oid::regprocedure AS unpinned_not_c
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.oid IN (SELECT pg_temp.memtx_functions()) AND l.lanname <> 'c' AND p.prosqlbody IS NULL
   AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%');
-- a query-free function with arguments is STRICT (NULL in, NULL out, as
-- PostgreSQL's own functions of this kind), except the two whose answer
-- for a NULL is a boolean by design: can_read (a NULL part of a record's
-- permission block grants nothing) and copying_into (no table: false)
SELECT p.oid::regprocedure AS not_strict
  FROM pg_proc p
 WHERE p.oid IN (SELECT pg_temp.memtx_functions()) AND p.prosqlbody IS NULL AND p.pronargs > 0
   AND p.prorettype <> 'trigger'::regtype AND NOT p.proisstrict
   AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%')
EXCEPT
SELECT f::regprocedure FROM unnest(ARRAY[
    'memtx.can_read(text,text[],memtx.scope)', 'memtx.copying_into(oid)'
]::regprocedure[]) f
ORDER BY 1;
-- pinned means pg_catalog first and pg_temp last, nothing the caller controls
SELECT p.oid::regprocedure AS bad_search_path, c
  FROM pg_proc p, unnest(p.proconfig) c
 WHERE p.oid IN (SELECT pg_temp.memtx_functions()) AND c LIKE 'search_path=%'
   AND c <> 'search_path=pg_catalog, pg_temp';
-- every function has a comment
SELECT f AS uncommented FROM pg_temp.memtx_functions() f WHERE obj_description(f, 'pg_proc') IS NULL;
-- no trigger function is executable by PUBLIC (nobody attaches one to a table of theirs)
SELECT p.oid::regprocedure AS public_trigger_function
  FROM pg_proc p
 WHERE p.oid IN (SELECT pg_temp.memtx_functions()) AND p.prorettype = 'trigger'::regtype
   AND has_function_privilege('public', p.oid, 'EXECUTE');
-- every SECURITY DEFINER function pins search_path
SELECT p.oid::regprocedure AS definer_unpinned
  FROM pg_proc p
 WHERE p.oid IN (SELECT pg_temp.memtx_functions()) AND p.prosecdef
   AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%');

-- every table and sequence is in extconfig, so pg_dump keeps the store
SELECT c.oid::regclass AS not_dumped, c.relkind
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'memtx' AND c.relkind IN ('r', 'S')
   AND c.oid <> ALL (SELECT unnest(extconfig) FROM pg_extension WHERE extname IN ('memtx', 'memtx_vector'))
 ORDER BY 1;
-- every relation has a comment
SELECT c.oid::regclass AS uncommented_relation
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'memtx' AND c.relkind IN ('r', 'v', 'S') AND obj_description(c.oid, 'pg_class') IS NULL
 ORDER BY 1;

-- no table, view or sequence is writable by PUBLIC (reads go through RLS)
SELECT c.oid::regclass AS public_writable, a.privilege_type
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
       aclexplode(coalesce(c.relacl, acldefault(CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END::"char", c.relowner))) a
 WHERE n.nspname = 'memtx' AND a.grantee = 0 AND a.privilege_type <> 'SELECT'
 ORDER BY 1, 2;
-- and no role but the owner may create in the schema
SELECT a.grantee::regrole AS schema_create
  FROM pg_namespace n, aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a
 WHERE n.nspname = 'memtx' AND a.privilege_type = 'CREATE' AND a.grantee <> n.nspowner;
-- every table PUBLIC can read is under row-level security, or is a registry of no secrets
SELECT c.oid::regclass AS public_readable_without_rls
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'memtx' AND c.relkind = 'r' AND NOT c.relrowsecurity
   AND has_table_privilege('public', c.oid, 'SELECT')
   AND c.relname NOT IN ('sources', 'tools', 'role_tiers', 'embedding_models')
 ORDER BY 1;

-- the C label tables equal pg_enum, label for label and in order
(SELECT type_name, label, ordinal FROM memtx.enum_labels()
 EXCEPT
 SELECT t.typname::text, e.enumlabel::text,
        row_number() OVER (PARTITION BY t.typname ORDER BY e.enumsortorder)::int
   FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid JOIN pg_namespace n ON n.oid = t.typnamespace
  WHERE n.nspname = 'memtx')
UNION ALL
(SELECT t.typname::text, e.enumlabel::text,
        row_number() OVER (PARTITION BY t.typname ORDER BY e.enumsortorder)::int
   FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid JOIN pg_namespace n ON n.oid = t.typnamespace
  WHERE n.nspname = 'memtx'
 EXCEPT
 SELECT type_name, label, ordinal FROM memtx.enum_labels());
SELECT count(DISTINCT type_name) AS enums_compiled_in FROM memtx.enum_labels();

-- the version the library runs over is the default version of the control file
\i test/sql/include/default_version.psql
SELECT :'default_version' <> '' AS control_file_read;
SELECT extversion = :'default_version' AS at_default_version
  FROM pg_extension WHERE extname = 'memtx';
-- the base is 0.1.0 and every step leads to the default version
SELECT source, target FROM pg_extension_update_paths('memtx')
 WHERE path IS NOT NULL AND target = :'default_version'
 ORDER BY 1;
