-- The protocol predicates (memtx.is_active, rivals, ancestors, descendants)
-- are defined once; the single-truth exclusion constraint states two of them
-- in index form.  These checks hold the two forms together.
\i test/sql/include/prelude.psql

-- is_active agrees with the constraint's WHERE clause for every state
CREATE FUNCTION pg_temp.constraint_active(s memtx.state) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE pred text; r boolean;
BEGIN
    SELECT pg_get_expr(i.indpred, i.indrelid) INTO pred
      FROM pg_index i WHERE i.indexrelid = 'memtx.records_single_truth'::regclass;
    EXECUTE format('SELECT %s FROM (SELECT %L::memtx.state AS state) x', pred, s) INTO r;
    RETURN r;
END $$;
SELECT s AS state, memtx.is_active(s) AS is_active, pg_temp.constraint_active(s) = memtx.is_active(s) AS agrees
  FROM unnest(enum_range(NULL::memtx.state)) s;

-- rivals agrees with the constraint's value and slot digests
WITH v(a, b) AS (VALUES ('1'::jsonb, '1'::jsonb), ('1', '1.0'), ('{"a": 1, "b": 2}', '{"b": 2, "a": 1}'),
                        ('"x"', '"y"'), ('[1, 2]', '[2, 1]'), ('null', 'null'), ('{"a": [1]}', '{"a": [1.00]}'))
SELECT a, b, memtx.rivals('ns', 'e', 'x', '(,)', a, 'ns', 'e', 'x', '(,)', b) AS rivals,
       memtx.rivals('ns', 'e', 'x', '(,)', a, 'ns', 'e', 'x', '(,)', b)
         = (memtx.value_digest(a) <> memtx.value_digest(b)) AS agrees_with_digest
  FROM v;
-- other slot, or disjoint validity: never rivals
SELECT memtx.rivals('ns', 'e', 'x', '(,)', '1', 'ns', 'e', 'y', '(,)', '2') AS other_attribute,
       memtx.rivals('ns', 'e', 'x', '(,)', '1', 'other', 'e', 'x', '(,)', '2') AS other_namespace,
       memtx.rivals('ns', 'e', 'x', '[2026-01-01,2026-02-01)', '1',
                    'ns', 'e', 'x', '[2026-02-01,2026-03-01)', '2') AS disjoint_validity,
       memtx.rivals('ns', 'e', 'x', '[2026-01-01,2026-02-02)', '1',
                    'ns', 'e', 'x', '[2026-02-01,2026-03-01)', '2') AS overlapping_validity;

-- ancestors and descendants: transitive, each once (a diamond's base once), without the record
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'a', 'x', '1') AS a \gset
SELECT memtx.stage(:tx, 'b', 'x', '1', derived_from => ARRAY[:a]) AS b \gset
SELECT memtx.stage(:tx, 'c', 'x', '1', derived_from => ARRAY[:a]) AS c \gset
SELECT memtx.stage(:tx, 'd', 'x', '1', derived_from => ARRAY[:b, :c]) AS d \gset
SELECT array_agg(x ORDER BY x) AS ancestors_of_d FROM memtx.ancestors(:d) x;
SELECT array_agg(x ORDER BY x) AS descendants_of_a FROM memtx.descendants(:a) x;
SELECT count(*) AS ancestors_of_a FROM memtx.ancestors(:a);
SELECT count(*) AS descendants_of_d FROM memtx.descendants(:d);
-- they inline: the planner sees the recursive query, not a function call
CREATE FUNCTION pg_temp.plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE l text; r text := '';
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP r := r || l || E'\n'; END LOOP;
    RETURN r;
END $$;
SELECT pg_temp.plan(q) LIKE '%Recursive Union%' AS recursive, pg_temp.plan(q) NOT LIKE '%Function Scan%' AS inlined
  FROM (VALUES ('SELECT x FROM memtx.ancestors(1) x'), ('SELECT x FROM memtx.descendants(1) x')) v(q);

-- the set-wise forms walk once for a set of records: each equals the union of the walks
-- of the set's records, and a record of the set appears only when it is the ancestor
-- (descendant) of another; the one-record forms are defined through them
SELECT memtx.stage(:tx, 'e', 'x', '1', derived_from => ARRAY[:d]) AS e \gset
SELECT memtx.stage(:tx, 'f', 'x', '1') AS f \gset
SELECT memtx.stage(:tx, 'g', 'x', '1', derived_from => ARRAY[:f, :c]) AS g \gset
WITH sets(s) AS (VALUES (ARRAY[:a]::bigint[]), (ARRAY[:b, :c]), (ARRAY[:a, :d]), (ARRAY[:f, :b]),
                        (ARRAY[:e, :g]), ('{}'), (ARRAY[:a, :b, :c, :d, :e, :f, :g]), (ARRAY[:d, :d]))
SELECT s,
       (SELECT array_agg(x ORDER BY x) FROM memtx.ancestors_of(s) x) AS ancestors_of,
       (SELECT array_agg(x ORDER BY x) FROM memtx.ancestors_of(s) x)
         IS NOT DISTINCT FROM (SELECT array_agg(DISTINCT x ORDER BY x) FROM unnest(s) r, memtx.ancestors(r) x)
         AS ancestors_agree,
       (SELECT array_agg(x ORDER BY x) FROM memtx.descendants_of(s) x) AS descendants_of,
       (SELECT array_agg(x ORDER BY x) FROM memtx.descendants_of(s) x)
         IS NOT DISTINCT FROM (SELECT array_agg(DISTINCT x ORDER BY x) FROM unnest(s) r, memtx.descendants(r) x)
         AS descendants_agree
  FROM sets;
-- each once, however many records of the set lead to it
SELECT count(*) = count(DISTINCT x) AS ancestors_once
  FROM memtx.ancestors_of(ARRAY[:e, :g, :d]::bigint[]) x;
SELECT count(*) = count(DISTINCT x) AS descendants_once
  FROM memtx.descendants_of(ARRAY[:a, :b, :c, :f]::bigint[]) x;
-- they inline when the set is a value (here a parameter and a column of a row before)
SELECT pg_temp.plan(q) LIKE '%Recursive Union%' AS recursive, pg_temp.plan(q) NOT LIKE '%Function Scan%' AS inlined
  FROM (VALUES ('SELECT x FROM memtx.ancestors_of(ARRAY[1, 2]) x'),
               ('SELECT x FROM memtx.descendants_of(ARRAY[1, 2]) x'),
               ('SELECT x FROM (SELECT ARRAY[1, 2] AS ids OFFSET 0) s, memtx.descendants_of(s.ids) x')) v(q);
-- every step of a walk probes the edges from the records the step before found, whatever
-- the planner may prefer: no join of the edges with the walk so far, even with nested
-- loops discouraged (a hash join would read every edge at every step)
SET enable_nestloop = off;
SELECT pg_temp.plan(q) NOT LIKE '%Hash Join%' AND pg_temp.plan(q) NOT LIKE '%Merge Join%' AS probes
  FROM (VALUES ('SELECT x FROM memtx.ancestors_of(ARRAY[1, 2]) x'),
               ('SELECT x FROM memtx.descendants_of(ARRAY[1, 2]) x'),
               ('SELECT x FROM memtx.ancestors(1) x'), ('SELECT x FROM memtx.descendants(1) x')) v(q);
RESET enable_nestloop;
-- a kind is a view (a cascade quarantines it) by memtx.is_view_kind alone
SELECT k, memtx.is_view_kind(k) AS view FROM unnest(enum_range(NULL::memtx.kind)) k;
-- the head set of SPEC §10, one definition for commit, resolve, propose and restore, is
-- inlined where they call it: by content (parameters) and by a record's own columns
SELECT pg_temp.plan(q) NOT LIKE '%Function Scan%' AS inlined
  FROM (VALUES ('SELECT h.id FROM memtx.head_set(''n'', ''e'', ''a'', NULL) h'),
               ('SELECT h.id FROM memtx.records c CROSS JOIN LATERAL '
                'memtx.head_set(c.namespace, c.entity, c.attribute, c.valid) h WHERE c.id = 1')) v(q);
-- "retracted" is a view: a probe by id reaches both of its arms, the records and the registry
SELECT pg_temp.plan('SELECT EXISTS (SELECT FROM memtx.retracted x WHERE x.id = 1)')
       LIKE '%records%revocation_registry%' AS both_arms;
