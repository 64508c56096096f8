-- The namespace in every key (SPEC §3; docs/SCALING.md "Tables"): the
-- property a store spread over servers by namespace needs, asserted from the
-- catalogs.  Each query lists the offenders, so an empty result is the pass
-- and a new table, key or reference that breaks the rule shows up by name.
\i test/sql/include/prelude.psql
CREATE FUNCTION pg_temp.memtx_tables() RETURNS SETOF regclass LANGUAGE sql AS $$
    SELECT c.oid::regclass FROM pg_class c
     WHERE c.relnamespace = 'memtx'::regnamespace AND c.relkind IN ('r', 'p') $$;
-- the attribute number of a table's namespace column (NULL: it has none)
CREATE FUNCTION pg_temp.ns_attnum(regclass) RETURNS smallint LANGUAGE sql AS $$
    SELECT a.attnum FROM pg_attribute a
     WHERE a.attrelid = $1 AND a.attname = 'namespace' AND NOT a.attisdropped $$;

-- Only the store-wide tables lack a namespace: the registries (sources,
-- tools, role tiers) and the role-wide writer epochs.  A new table either
-- carries its namespace or joins this list here, on purpose.
SELECT t AS table_without_namespace FROM pg_temp.memtx_tables() t
 WHERE pg_temp.ns_attnum(t) IS NULL
EXCEPT
SELECT unnest(ARRAY['memtx.sources', 'memtx.tools', 'memtx.role_tiers', 'memtx.writer_epochs']::regclass[])
ORDER BY 1;

-- Every namespace column is text and NOT NULL.
SELECT a.attrelid::regclass AS loose_namespace_column, format_type(a.atttypid, a.atttypmod), a.attnotnull
  FROM pg_attribute a
 WHERE a.attrelid IN (SELECT pg_temp.memtx_tables()) AND a.attname = 'namespace'
   AND (a.atttypid <> 'text'::regtype OR NOT a.attnotnull)
 ORDER BY 1;

-- Every primary, unique and exclusion key of a namespace-scoped table names
-- the namespace as a plain column (inside an expression does not count: a
-- distributed table's key must hold its distribution column itself).
SELECT c.conrelid::regclass AS "table", c.conname AS key_without_namespace
  FROM pg_constraint c
 WHERE c.conrelid IN (SELECT pg_temp.memtx_tables()) AND c.contype IN ('p', 'u', 'x')
   AND pg_temp.ns_attnum(c.conrelid) IS NOT NULL
   AND NOT pg_temp.ns_attnum(c.conrelid) = ANY (c.conkey)
 ORDER BY 1, 2;

-- Unique indexes without a constraint (partial ones included) too.
SELECT i.indrelid::regclass AS "table", i.indexrelid::regclass AS unique_index_without_namespace
  FROM pg_index i
 WHERE i.indrelid IN (SELECT pg_temp.memtx_tables()) AND i.indisunique
   AND pg_temp.ns_attnum(i.indrelid) IS NOT NULL
   AND NOT pg_temp.ns_attnum(i.indrelid) = ANY (i.indkey::smallint[])
 ORDER BY 1, 2;

-- An exclusion key compares the namespace with = (text equality).
SELECT c.conrelid::regclass AS "table", c.conname AS exclusion_without_namespace_equality
  FROM pg_constraint c
 WHERE c.conrelid IN (SELECT pg_temp.memtx_tables()) AND c.contype = 'x'
   AND NOT EXISTS (SELECT 1 FROM unnest(c.conkey, c.conexclop) AS k(att, op)
                    WHERE k.att = pg_temp.ns_attnum(c.conrelid) AND k.op = 'pg_catalog.=(text,text)'::regoperator)
 ORDER BY 1, 2;

-- Every namespace-scoped table but the append-only history has a primary
-- key (the one a distributed table is addressed by).
SELECT t AS table_without_primary_key FROM pg_temp.memtx_tables() t
 WHERE pg_temp.ns_attnum(t) IS NOT NULL AND t <> 'memtx.history'::regclass
   AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conrelid = t AND c.contype = 'p')
 ORDER BY 1;

-- References between memtx tables are kept by triggers (see references.sql),
-- not foreign keys; a foreign key that comes back must name the namespace on
-- both sides.
SELECT c.conrelid::regclass AS "table", c.conname AS foreign_key_without_namespace
  FROM pg_constraint c
 WHERE c.conrelid IN (SELECT pg_temp.memtx_tables()) AND c.contype = 'f'
   AND NOT (pg_temp.ns_attnum(c.conrelid) = ANY (c.conkey)
            AND pg_temp.ns_attnum(c.confrelid) = ANY (c.confkey))
 ORDER BY 1, 2;

-- The reference triggers re-check a row whose namespace changes: each fires
-- on an UPDATE of the namespace column.
SELECT t.tgrelid::regclass AS "table", t.tgname AS reference_trigger_blind_to_namespace
  FROM pg_trigger t
 WHERE t.tgfoid IN ('memtx.reference_check'::regproc, 'memtx.reference_guard'::regproc)
   AND (t.tgtype & 16) <> 0        -- fires on UPDATE (TRIGGER_TYPE_UPDATE)
   AND NOT pg_temp.ns_attnum(t.tgrelid) = ANY (t.tgattr::smallint[])
 ORDER BY 1, 2;

-- What the rules above pass: each namespace-scoped table's keys, in order.
SELECT c.conrelid::regclass AS "table", c.conname AS key, c.contype AS type,
       (SELECT string_agg(coalesce(a.attname::text, 'expr'), ', ' ORDER BY k.ord)
          FROM unnest(c.conkey) WITH ORDINALITY AS k(att, ord)
          LEFT JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.att) AS columns
  FROM pg_constraint c
 WHERE c.conrelid IN (SELECT pg_temp.memtx_tables()) AND c.contype IN ('p', 'u', 'x')
   AND pg_temp.ns_attnum(c.conrelid) IS NOT NULL
 ORDER BY 1::text, 2;
