/*
 * memtx 0.1.0 -> 0.2.0.
 *
 * From 0.1.0 on, the base script sql/memtx--0.1.0.sql is frozen and every
 * change to the catalog is a step like this one; CREATE EXTENSION memtx
 * walks the same chain, so a fresh install and an upgraded one are the same
 * by construction (test/sql/upgrade.sql compares the two).
 */
\echo Use "ALTER EXTENSION memtx UPDATE TO '0.2.0'" to load this file. \quit

-- The enum labels compiled into the library, for the catalog lint (they
-- must equal pg_enum: C uses a label's position as its value).
CREATE FUNCTION memtx.enum_labels()
    RETURNS TABLE (type_name text, label text, ordinal integer)
    AS 'MODULE_PATHNAME', 'memtx_enum_labels'
    LANGUAGE C IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION memtx.enum_labels() IS 'the enum labels compiled into the memtx library, in enum order; they must equal pg_enum';

-- Every relation of the store says what it is.
COMMENT ON SEQUENCE memtx.clock IS 'the one global order of protocol events: staging, settling, commits, snapshots';
COMMENT ON SEQUENCE memtx.transaction_id_seq IS 'ids of memtx.transactions';
COMMENT ON SEQUENCE memtx.record_id_seq IS 'ids of memtx.records';
COMMENT ON SEQUENCE memtx.action_log_id_seq IS 'ids of memtx.action_log';
COMMENT ON SEQUENCE memtx.rollback_log_id_seq IS 'ids of memtx.rollback_log';
COMMENT ON SEQUENCE memtx.compensation_id_seq IS 'ids of memtx.compensations';

/*
 * The protocol's predicates, each defined once.  SQL-standard bodies: their
 * names are bound when the function is created (no search_path can redirect
 * them) and the planner inlines them, so a query that uses one plans exactly
 * as if the expression were written out, indexes and partial-index
 * predicates included.  C queries, the views and the invariant checker all
 * use these; the checker stays independent of the repair code, not of the
 * definitions.  The single-truth exclusion constraint states is_active and
 * rivals in index form (slot and value digests); test/sql/predicates.sql
 * checks that the two forms agree.
 */

-- A record is active when it is committed or action_safe (SPEC §1).
CREATE FUNCTION memtx.is_active(state memtx.state) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN state = ANY ('{committed,action_safe}'::memtx.state[]);
COMMENT ON FUNCTION memtx.is_active(memtx.state) IS 'whether a record in this state is active: committed or action_safe';

-- Two records contest each other when they are on the same slot with
-- overlapping validity and different values (SPEC §1 single truth, §4 3d).
-- Values are the same when their canonical jsonb text is (memtx.value_digest
-- is the SHA-256 of that text); the slot key comes first so that a probe
-- through the single-truth index can use it.
CREATE FUNCTION memtx.rivals(a_namespace text, a_entity text, a_attribute text, a_valid tstzrange, a_value jsonb,
                             b_namespace text, b_entity text, b_attribute text, b_valid tstzrange, b_value jsonb)
    RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN memtx.slot_key(a_namespace, a_entity, a_attribute) = memtx.slot_key(b_namespace, b_entity, b_attribute)
       AND a_namespace = b_namespace AND a_entity = b_entity AND a_attribute = b_attribute
       AND a_valid && b_valid
       AND a_value::text <> b_value::text;
COMMENT ON FUNCTION memtx.rivals(text, text, text, tstzrange, jsonb, text, text, text, tstzrange, jsonb) IS 'whether two records contest one slot: same slot, overlapping validity, different values';

-- The transitive ancestors of a record over derived_from edges, without the
-- record itself; each once, however many paths lead to it.
CREATE FUNCTION memtx.ancestors(record bigint) RETURNS SETOF bigint
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    WITH RECURSIVE anc(id) AS (
        SELECT e.parent FROM memtx.edges e WHERE e.child = ancestors.record
        UNION
        SELECT e.parent FROM memtx.edges e JOIN anc ON e.child = anc.id)
    SELECT anc.id FROM anc;
END;
COMMENT ON FUNCTION memtx.ancestors(bigint) IS 'the transitive ancestors of a record (derived_from, without the record itself), each once';

-- The transitive descendants of a record, without the record itself.
CREATE FUNCTION memtx.descendants(record bigint) RETURNS SETOF bigint
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    WITH RECURSIVE d(id) AS (
        SELECT e.child FROM memtx.edges e WHERE e.parent = descendants.record
        UNION
        SELECT e.child FROM memtx.edges e JOIN d ON e.parent = d.id)
    SELECT d.id FROM d;
END;
COMMENT ON FUNCTION memtx.descendants(bigint) IS 'the transitive descendants of a record (without the record itself), each once';

-- The review queue with the one rival predicate.
CREATE OR REPLACE VIEW memtx.review_queue AS
    SELECT c.id AS record_id, c.tx_id, c.namespace, c.entity, c.attribute, c.value,
           ARRAY(SELECT r.id FROM memtx.records r
                  WHERE memtx.is_active(r.state)
                    AND memtx.rivals(c.namespace, c.entity, c.attribute, c.valid, c.value,
                                     r.namespace, r.entity, r.attribute, r.valid, r.value)
                  ORDER BY r.id) AS rival_ids
      FROM memtx.records c
     WHERE c.state = 'quarantined' AND c.reason = 'needs_review';

-- stats counts commits with the one definition of active.
CREATE OR REPLACE VIEW memtx.stats AS
    SELECT (SELECT count(*) FROM memtx.transactions) AS transactions,
           (SELECT count(*) FROM memtx.transactions WHERE status = 'open') AS open_transactions,
           (SELECT count(*) FROM memtx.records
             WHERE memtx.is_active(verdict) AND kind <> 'tool_action') AS commits,
           (SELECT count(*) FROM memtx.records WHERE verdict = 'quarantined') AS quarantines,
           (SELECT coalesce(jsonb_object_agg(q.reason, q.n), '{}')
              FROM (SELECT verdict_reason AS reason, count(*) AS n FROM memtx.records
                     WHERE verdict = 'quarantined' GROUP BY verdict_reason) q) AS quarantines_by_reason,
           (SELECT coalesce(sum(verifier_calls), 0)::bigint FROM memtx.transactions) AS verifier_calls,
           (SELECT count(*) FROM memtx.action_log WHERE allowed) AS actions_allowed,
           (SELECT count(*) FROM memtx.action_log WHERE NOT allowed) AS gate_blocks,
           (SELECT count(DISTINCT root_id) FROM memtx.rollback_log) AS cascades,
           (SELECT count(*) FROM memtx.rollback_log WHERE action = 'leaked') AS leaks,
           (SELECT count(*) FROM memtx.compensations) AS compensations,
           (SELECT count(*) FROM memtx.records WHERE state = 'tentative') AS in_flight;

-- Immutable content (hardening items 10 and 13)
-- The lifecycle trigger guards memtx.records only: it refuses to run on any
-- other table, and nobody may attach it to one of their own.  No GRANT: a
-- trigger fires whatever the privileges of the role whose UPDATE fires it.
REVOKE EXECUTE ON FUNCTION memtx.lifecycle_guard() FROM PUBLIC;
COMMENT ON FUNCTION memtx.lifecycle_guard() IS 'trigger of memtx.records only: refuses lifecycle moves outside the legal transition relation and changes to a record''s content after staging';

-- Namespaces are tenancy (hardening item 14)
--
-- A role may begin in a namespace other than 'default' only when it is a
-- member of a role granted that namespace (or a harness).  Members are kept
-- as role names and checked by membership at begin, like owners and readers:
-- a name that no longer names a role matches nobody.
CREATE TABLE memtx.namespace_members (
    namespace  text NOT NULL CHECK (namespace <> '' AND namespace <> 'default' AND octet_length(namespace) <= 256),
    role_name  text NOT NULL CHECK (role_name <> ''),
    granted_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (namespace, role_name)
);
COMMENT ON TABLE memtx.namespace_members IS 'namespace tenancy: the roles whose members may begin transactions in each namespace (default is open to every role)';
REVOKE ALL ON memtx.namespace_members FROM PUBLIC;
-- A namespace's name is a tenant's: each role sees the grants it holds
-- (directly or through a role it belongs to), nothing else.
GRANT SELECT ON memtx.namespace_members TO PUBLIC;
ALTER TABLE memtx.namespace_members ENABLE ROW LEVEL SECURITY;
CREATE POLICY namespace_members_own ON memtx.namespace_members FOR SELECT
    USING (memtx.can_read(role_name, NULL, NULL));
SELECT pg_catalog.pg_extension_config_dump('memtx.namespace_members', '');

CREATE FUNCTION memtx.grant_namespace(namespace text, role text) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_grant_namespace'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.grant_namespace(text, text) IS 'harness: let the members of a role begin transactions in a namespace';
CREATE FUNCTION memtx.revoke_namespace(namespace text, role text) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_revoke_namespace'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.revoke_namespace(text, text) IS 'harness: withdraw a namespace grant; later begins of the role there are refused, open transactions run on';
REVOKE ALL ON FUNCTION memtx.grant_namespace(text, text), memtx.revoke_namespace(text, text) FROM PUBLIC;
-- Executable by all: the functions refuse every caller but a harness
-- themselves (the harness role is a setting, not a fixed role to grant to).
GRANT EXECUTE ON FUNCTION memtx.grant_namespace(text, text), memtx.revoke_namespace(text, text) TO PUBLIC;

-- Sources: claimants (hardening item 14)
--
-- A source registered with claimants may be staged with only by members of
-- those roles (or a harness); NULL claimants: by anyone, as in 0.1.0.  The
-- two-argument form keeps working: it is the three-argument one with its
-- default, and the C function reads the third argument only when it is there.
ALTER TABLE memtx.sources ADD COLUMN claimants text[]
    CHECK (pg_catalog.array_position(claimants, NULL) IS NULL);
COMMENT ON COLUMN memtx.sources.claimants IS 'roles whose members may stage with this source (NULL: every role)';
DROP FUNCTION memtx.register_source(text, double precision);
CREATE FUNCTION memtx.register_source(name text, authority double precision, claimants text[] DEFAULT NULL) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_register_source'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.register_source(text, double precision, text[]) IS 'harness: register or update a source, its authority (0..1) and the roles that may claim it (NULL: any)';
REVOKE ALL ON FUNCTION memtx.register_source(text, double precision, text[]) FROM PUBLIC;
-- Executable by all: the function refuses every caller but a harness itself.
GRANT EXECUTE ON FUNCTION memtx.register_source(text, double precision, text[]) TO PUBLIC;

-- Expiry by namespace (hardening item 5): a namespace whose lock is held
-- (a writer idle in its SQL transaction) is skipped after lock_timeout, so
-- expiry keeps its promise in every other namespace; the worker expires
-- each namespace in its own SQL transaction.
DROP FUNCTION memtx.expire_transactions();
CREATE FUNCTION memtx.expire_transactions(namespace text DEFAULT NULL)
    RETURNS SETOF bigint
    AS 'MODULE_PATHNAME', 'memtx_expire_transactions'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
COMMENT ON FUNCTION memtx.expire_transactions(text) IS 'harness: abort (reason expired) every open transaction (of the namespace, when given) whose lease ran out; skips a namespace whose lock is not had within lock_timeout; returns the ids it expired';

-- Parallel restore (hardening item 7)
/*
 * pg_dump keeps the store as extension configuration data, and it orders
 * those tables' data by their foreign keys only by sorting the archive: the
 * archive itself records no dependency between two TABLE DATA entries (each
 * names only its own table, which an extension's dump does not contain).
 * A serial pg_restore follows the archive's order; pg_restore -j hands the
 * entries to its workers in any order, so with foreign keys in place the
 * COPY of edges, action_log or compensations could run before the rows they
 * reference had been loaded, and was refused whole.
 *
 * So the references between memtx tables are kept by the triggers below
 * instead of foreign keys.  They check what the foreign keys checked, with
 * the same locks (FOR KEY SHARE on the referenced row, so a concurrent
 * delete waits) and the same SQLSTATE 23503, for every write but one: rows
 * that arrive by COPY FROM into the table itself, which only the extension's
 * owner and superusers may run and which is how pg_restore loads the store;
 * a consistent dump restores consistent, in any load order.  Like the
 * foreign keys' triggers, they do not fire under
 * session_replication_role = replica.
 */
ALTER TABLE memtx.records DROP CONSTRAINT records_tx_id_fkey;
ALTER TABLE memtx.edges DROP CONSTRAINT edges_child_fkey, DROP CONSTRAINT edges_parent_fkey;
ALTER TABLE memtx.read_set DROP CONSTRAINT read_set_tx_id_fkey;
ALTER TABLE memtx.revocation_registry DROP CONSTRAINT revocation_registry_record_id_fkey,
                                      DROP CONSTRAINT revocation_registry_root_id_fkey;
ALTER TABLE memtx.action_log DROP CONSTRAINT action_log_tx_id_fkey, DROP CONSTRAINT action_log_action_id_fkey;
ALTER TABLE memtx.compensations DROP CONSTRAINT compensations_root_id_fkey, DROP CONSTRAINT compensations_action_id_fkey;

-- Namespace in every key (SPEC §3; docs/SCALING.md)
/*
 * The namespace is the unit of consistency and the unit a store is spread
 * over servers by (docs/SCALING.md): every row of a namespace-scoped table
 * carries its namespace, every primary, unique and exclusion key names it,
 * and every reference is checked within it (reference_check below), so no
 * key or reference spans two namespaces.  Ids stay unique through their
 * sequences; a key is (id, namespace), the id first, so a lookup by id uses
 * it.  The registries (sources, tools, role_tiers) and writer_epochs are
 * role- or store-wide and keep their keys.  test/sql/namespace_keys.sql
 * asserts all of it from the catalogs.
 */
ALTER TABLE memtx.edges ADD COLUMN namespace text;
ALTER TABLE memtx.read_set ADD COLUMN namespace text;
ALTER TABLE memtx.revocation_registry ADD COLUMN namespace text;
ALTER TABLE memtx.rollback_log ADD COLUMN namespace text;
ALTER TABLE memtx.compensations ADD COLUMN namespace text;
UPDATE memtx.edges e SET namespace = r.namespace FROM memtx.records r WHERE r.id = e.child;
UPDATE memtx.read_set s SET namespace = t.namespace FROM memtx.transactions t WHERE t.id = s.tx_id;
UPDATE memtx.revocation_registry g SET namespace = r.namespace FROM memtx.records r WHERE r.id = g.record_id;
UPDATE memtx.rollback_log l SET namespace = r.namespace FROM memtx.records r WHERE r.id = l.root_id;
UPDATE memtx.compensations c SET namespace = r.namespace FROM memtx.records r WHERE r.id = c.action_id;
ALTER TABLE memtx.edges ALTER COLUMN namespace SET NOT NULL,
    DROP CONSTRAINT edges_pkey, ADD CONSTRAINT edges_pkey PRIMARY KEY (child, parent, namespace);
ALTER TABLE memtx.read_set ALTER COLUMN namespace SET NOT NULL,
    DROP CONSTRAINT read_set_pkey, ADD CONSTRAINT read_set_pkey PRIMARY KEY (tx_id, record_id, namespace);
ALTER TABLE memtx.revocation_registry ALTER COLUMN namespace SET NOT NULL,
    DROP CONSTRAINT revocation_registry_pkey,
    ADD CONSTRAINT revocation_registry_pkey PRIMARY KEY (record_id, namespace);
ALTER TABLE memtx.rollback_log ALTER COLUMN namespace SET NOT NULL,
    DROP CONSTRAINT rollback_log_pkey, ADD CONSTRAINT rollback_log_pkey PRIMARY KEY (id, namespace);
ALTER TABLE memtx.compensations ALTER COLUMN namespace SET NOT NULL,
    DROP CONSTRAINT compensations_pkey, ADD CONSTRAINT compensations_pkey PRIMARY KEY (id, namespace);
ALTER TABLE memtx.transactions
    DROP CONSTRAINT transactions_pkey, ADD CONSTRAINT transactions_pkey PRIMARY KEY (id, namespace);
ALTER TABLE memtx.action_log
    DROP CONSTRAINT action_log_pkey, ADD CONSTRAINT action_log_pkey PRIMARY KEY (id, namespace);
-- single truth within a namespace, the namespace named as itself (a
-- distributed table's exclusion constraint must compare its distribution
-- column with =); the slot's bigint key still leads
ALTER TABLE memtx.records
    DROP CONSTRAINT records_pkey, ADD CONSTRAINT records_pkey PRIMARY KEY (id, namespace),
    DROP CONSTRAINT records_single_truth,
    ADD CONSTRAINT records_single_truth EXCLUDE USING gist (
        (memtx.slot_key(namespace, entity, attribute)) WITH =,
        namespace WITH =,
        (memtx.slot_digest(namespace, entity, attribute)) WITH =,
        valid WITH &&,
        (memtx.value_digest(value)) WITH <>)
        WHERE (state = 'committed' OR state = 'action_safe');

-- The referencing side: the transaction and records a new or changed row
-- names must exist (and stay, until this transaction ends).
CREATE FUNCTION memtx.reference_check() RETURNS trigger
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tx   bigint;
    recs bigint[];
    r    bigint;
BEGIN
    CASE TG_TABLE_NAME
        WHEN 'records', 'read_set' THEN tx := NEW.tx_id;
        WHEN 'action_log' THEN tx := NEW.tx_id; recs := ARRAY[NEW.action_id];
        WHEN 'edges' THEN recs := ARRAY[NEW.child, NEW.parent];
        WHEN 'revocation_registry' THEN recs := ARRAY[NEW.record_id, NEW.root_id];
        WHEN 'compensations' THEN recs := ARRAY[NEW.root_id, NEW.action_id];
    END CASE;
    -- the named rows must be in the row's own namespace (SPEC §3); a row
    -- without one is the NOT NULL constraint's to refuse
    IF NEW.namespace IS NULL THEN
        RETURN NEW;
    END IF;
    IF tx IS NOT NULL THEN
        PERFORM FROM memtx.transactions t WHERE t.id = tx AND t.namespace = NEW.namespace FOR KEY SHARE;
        IF NOT FOUND AND NOT memtx.copying_into(TG_RELID) THEN
            RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
                MESSAGE = format('a row of %s names transaction %s, which does not exist in namespace %s',
                                 TG_TABLE_NAME, tx, NEW.namespace);
        END IF;
    END IF;
    FOREACH r IN ARRAY coalesce(recs, '{}') LOOP
        CONTINUE WHEN r IS NULL;
        PERFORM FROM memtx.records x WHERE x.id = r AND x.namespace = NEW.namespace FOR KEY SHARE;
        IF NOT FOUND AND NOT memtx.copying_into(TG_RELID) THEN
            RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
                MESSAGE = format('a row of %s names record %s, which does not exist in namespace %s',
                                 TG_TABLE_NAME, r, NEW.namespace);
        END IF;
    END LOOP;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION memtx.reference_check() IS 'trigger: the transaction and records a row names must exist (rows loaded by COPY FROM, as pg_restore loads them, excepted)';

-- Whether this backend is running COPY FROM into the table: the one write
-- the reference triggers let through unchecked.  C (src/references.c): it
-- reads the backend's own COPY progress report, the row of
-- pg_stat_progress_copy, without a query (a SQL body over that view was
-- planned once per SQL transaction, at the first insert into records).
CREATE FUNCTION memtx.copying_into(rel oid) RETURNS boolean
    AS 'MODULE_PATHNAME', 'memtx_copying_into'
    LANGUAGE C STABLE PARALLEL RESTRICTED;
COMMENT ON FUNCTION memtx.copying_into(oid) IS 'whether this backend is running COPY FROM into the table (how pg_restore loads the store)';

-- The referenced side: a transaction or record that rows name cannot be
-- deleted, renumbered or truncated away.
CREATE FUNCTION memtx.reference_guard() RETURNS trigger
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ref  bigint;
    used boolean;
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        IF TG_TABLE_NAME = 'transactions' THEN
            used := EXISTS (SELECT FROM memtx.records) OR EXISTS (SELECT FROM memtx.read_set)
                    OR EXISTS (SELECT FROM memtx.action_log);
        ELSE
            used := EXISTS (SELECT FROM memtx.edges) OR EXISTS (SELECT FROM memtx.revocation_registry)
                    OR EXISTS (SELECT FROM memtx.action_log WHERE action_id IS NOT NULL)
                    OR EXISTS (SELECT FROM memtx.compensations);
        END IF;
        IF used THEN
            RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
                MESSAGE = format('cannot truncate %s while other memtx tables name its rows', TG_TABLE_NAME);
        END IF;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.id = OLD.id AND NEW.namespace = OLD.namespace THEN
        RETURN NEW;
    END IF;
    ref := OLD.id;
    IF TG_TABLE_NAME = 'transactions' THEN
        used := EXISTS (SELECT FROM memtx.records c WHERE c.tx_id = ref)
             OR EXISTS (SELECT FROM memtx.read_set c WHERE c.tx_id = ref)
             OR EXISTS (SELECT FROM memtx.action_log c WHERE c.tx_id = ref);
    ELSE
        used := EXISTS (SELECT FROM memtx.edges c WHERE c.child = ref)
             OR EXISTS (SELECT FROM memtx.edges c WHERE c.parent = ref)
             OR EXISTS (SELECT FROM memtx.revocation_registry c WHERE c.record_id = ref OR c.root_id = ref)
             OR EXISTS (SELECT FROM memtx.action_log c WHERE c.action_id = ref)
             OR EXISTS (SELECT FROM memtx.compensations c WHERE c.root_id = ref OR c.action_id = ref);
    END IF;
    IF used THEN
        RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
            MESSAGE = format('%s %s is named by other memtx rows', rtrim(TG_TABLE_NAME, 's'), ref),
            DETAIL = 'Rows of memtx tables that name it would be left dangling.';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END $$;
COMMENT ON FUNCTION memtx.reference_guard() IS 'trigger: a transaction or record that other memtx rows name cannot be deleted, renumbered or truncated away';

-- trigger functions: fired by the tables, called by no one
REVOKE ALL ON FUNCTION memtx.reference_check() FROM PUBLIC;
REVOKE ALL ON FUNCTION memtx.reference_guard() FROM PUBLIC;
REVOKE ALL ON FUNCTION memtx.copying_into(oid) FROM PUBLIC;

CREATE TRIGGER records_references BEFORE INSERT OR UPDATE OF tx_id, namespace ON memtx.records
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER edges_references BEFORE INSERT OR UPDATE OF child, parent, namespace ON memtx.edges
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER read_set_references BEFORE INSERT OR UPDATE OF tx_id, namespace ON memtx.read_set
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER revocation_registry_references BEFORE INSERT OR UPDATE OF record_id, root_id, namespace ON memtx.revocation_registry
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER action_log_references BEFORE INSERT OR UPDATE OF tx_id, action_id, namespace ON memtx.action_log
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER compensations_references BEFORE INSERT OR UPDATE OF root_id, action_id, namespace ON memtx.compensations
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER transactions_referenced BEFORE DELETE OR UPDATE OF id, namespace ON memtx.transactions
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_guard();
CREATE TRIGGER transactions_referenced_truncate BEFORE TRUNCATE ON memtx.transactions
    FOR EACH STATEMENT EXECUTE FUNCTION memtx.reference_guard();
CREATE TRIGGER records_referenced BEFORE DELETE OR UPDATE OF id, namespace ON memtx.records
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_guard();
CREATE TRIGGER records_referenced_truncate BEFORE TRUNCATE ON memtx.records
    FOR EACH STATEMENT EXECUTE FUNCTION memtx.reference_guard();

-- Retrieval and reads without a transaction (SPEC §14)
--
-- The recall document of a record, defined once: the GIN index below and
-- memtx.recall's query both call it, and since a SQL-standard body is
-- inlined, the planner matches the query's expression to the index.
CREATE FUNCTION memtx.recall_document(entity text, attribute text, value jsonb) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN pg_catalog.to_tsvector('english'::regconfig, entity || ' ' || attribute || ' ' || value::text);
COMMENT ON FUNCTION memtx.recall_document(text, text, jsonb) IS 'the full-text document memtx.recall searches: english to_tsvector of entity, attribute and the value''s text';

-- Every record, whatever its state: raw_read exposes every state and a
-- transaction sees its own tentative records, so a partial index (active
-- records only) would miss what recall must find.  Visibility is decided
-- after the index probe, by the same code as memtx.read.
CREATE INDEX records_recall_idx ON memtx.records USING gin (memtx.recall_document(entity, attribute, value));

CREATE FUNCTION memtx.recall(tx bigint, query text, k integer DEFAULT 8, entity_prefix text DEFAULT NULL)
    RETURNS TABLE (record_id bigint, entity text, attribute text, value jsonb, rank real)
    AS 'MODULE_PATHNAME', 'memtx_recall'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
COMMENT ON FUNCTION memtx.recall(bigint, text, integer, text) IS 'ranked full-text retrieval: the best k records visible to the transaction that match the query (websearch syntax), best first; adds them to its read set';
REVOKE ALL ON FUNCTION memtx.recall(bigint, text, integer, text) FROM PUBLIC;
-- An agent's API: the function checks the transaction's agent itself.
GRANT EXECUTE ON FUNCTION memtx.recall(bigint, text, integer, text) TO PUBLIC;

CREATE FUNCTION memtx.lookup(entity text, attribute text DEFAULT NULL, namespace text DEFAULT 'default')
    RETURNS SETOF memtx.records
    AS 'MODULE_PATHNAME', 'memtx_lookup'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.lookup(text, text, text) IS 'the active records on a slot (or entity) that the caller may read, in id order, without a transaction and without writing anything (runs on a hot standby)';
REVOKE ALL ON FUNCTION memtx.lookup(text, text, text) FROM PUBLIC;
-- Anyone's read: it returns only what the calling role may read.
GRANT EXECUTE ON FUNCTION memtx.lookup(text, text, text) TO PUBLIC;

-- Tool definitions for LLM function calling (SPEC §15)
-- A domain tool's name is one LLM providers accept as a function name, and
-- memory_ names are memtx's own tools (SPEC §15): register_tool refuses
-- other names, tool_specs leaves out 0.1.0 registrations that break it.
CREATE FUNCTION memtx.is_tool_name(name text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN name ~ '^[A-Za-z0-9_-]{1,64}$' AND name !~ '^memory_';
COMMENT ON FUNCTION memtx.is_tool_name(text) IS 'whether a name may name a domain tool: 1 to 64 ASCII letters, digits, underscores or hyphens, not beginning memory_';

/*
 * memtx.tool_specs(format) hands an agent runner the tool list it passes to
 * a model: the seven memory tools and one tool per registered domain tool.
 * Each tool is defined once below, as (name, description, properties,
 * required); the three formats differ only in the envelope built at the
 * end.  Parameters are JSON Schema 2020-12 object schemas without "$schema"
 * (the providers do not all accept it).  A runner holds the agent's memtx
 * transaction and namespace and supplies tx and namespace itself, so no
 * tool has them; nor does any tool have a tier, agent or isolation
 * parameter: those are the harness's (§3).  Domain tools are named as
 * registered; register_tool refuses names the providers would refuse (both
 * use memtx.is_tool_name), and a tool registered under
 * 0.1.0 with such a name is left out rather than spoiling the whole list.
 * STABLE, read-only and free of memtx transactions: it runs under any
 * isolation level and on a hot standby.
 */
CREATE FUNCTION memtx.tool_specs(format text DEFAULT 'openai') RETURNS jsonb
    LANGUAGE plpgsql STABLE PARALLEL SAFE CALLED ON NULL INPUT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- fragments that several tools share
    ids constant jsonb := '{"type": "array", "items": {"type": "integer"}, "default": []}';
    roles constant jsonb := '{"type": "array", "items": {"type": "string", "minLength": 1}}';
    nonempty constant jsonb := '{"type": "string", "minLength": 1}';
    kinds constant jsonb := to_jsonb(array_remove(enum_range(NULL::memtx.kind), 'tool_action'));
    scopes constant jsonb := to_jsonb(enum_range(NULL::memtx.scope));
    specs jsonb;
BEGIN
    IF tool_specs.format IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed',
            MESSAGE = 'tool format must not be null',
            HINT = 'Pass openai, anthropic or mcp.';
    END IF;
    IF tool_specs.format NOT IN ('openai', 'anthropic', 'mcp') THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = pg_catalog.format('unknown tool format "%s"', tool_specs.format),
            DETAIL = 'The formats are openai (Chat Completions), anthropic (Messages) and mcp (Model Context Protocol).';
    END IF;

    WITH tool(ord, name, description, properties, required) AS (
        VALUES
        (1, 'memory_recall',
         'Search shared memory by keywords (full-text) and get the best matching records you may see, '
         'best first: record_id, entity, attribute, value, rank. Use it to find what is known before '
         'deciding or writing. Everything returned counts as read by you: a record you write afterwards '
         'may not be shared more widely than what you read.',
         jsonb_build_object(
            'query', '{"type": "string", "description": "What to look for: plain words, or web-search syntax (\"quoted phrase\", or, -excluded). A query of stop words only finds nothing."}'::jsonb,
            'k', '{"type": "integer", "minimum": 1, "maximum": 1000, "default": 8, "description": "How many records to return at most."}'::jsonb,
            'entity_prefix', nonempty || '{"description": "Only records whose entity starts with this text (a plain prefix, not a pattern), e.g. \"customer:42\"."}'),
         ARRAY['query']),
        (2, 'memory_read',
         'Read the records you may see, narrowed to an entity, an attribute or both (omit both to read '
         'everything you may see). Each row has the record''s id, value, state, kind, source and its '
         'authority, confidence, scope and validity. Everything returned counts as read by you: a record '
         'you write afterwards may not be shared more widely than what you read.',
         jsonb_build_object(
            'entity', nonempty || '{"description": "The entity to read, e.g. \"order:1234\"; omit to read every entity."}',
            'attribute', nonempty || '{"description": "The attribute of the entity to read, e.g. \"status\"; omit to read every attribute."}'),
         ARRAY[]::text[]),
        (3, 'memory_stage',
         'Propose a record for shared memory: a value of one attribute of one entity. It is tentative, '
         'visible to you only, until memory_commit admits it (evidence, validity, conflicts with what is '
         'already believed, stability of what it derives from) or quarantines it with a reason. Declare '
         'in derived_from every record you derived it from. Returns the new record''s id.',
         jsonb_build_object(
            'entity', nonempty || '{"description": "What the record is about, e.g. \"customer:42\". Entities beginning with \"tool:\" are reserved for tool actions."}',
            'attribute', nonempty || '{"description": "Which attribute of the entity the value is, e.g. \"email\"."}',
            'value', '{"description": "The value: any JSON value (string, number, boolean, null, object or array)."}'::jsonb,
            'kind', jsonb_build_object('type', 'string', 'enum', kinds, 'default', 'belief',
                'description', 'What sort of record: belief (a fact, the default); summary, profile, index_entry '
                               'or shared_copy (views derived from other records, quarantined for rebuilding '
                               'when one of their sources is retracted).'),
            'source', nonempty || '{"description": "Where the value comes from, e.g. \"crm\"; the authority registered for the source settles conflicts (an unregistered source gets the default authority). Omit when unknown."}',
            'confidence', '{"type": "number", "minimum": 0, "maximum": 1, "default": 1.0, "description": "How sure you are, from 0 to 1. Below the configured threshold the record is quarantined (low_evidence) unless its source is highly authoritative."}'::jsonb,
            'derived_from', ids || '{"description": "Ids of the records this one was derived from (from memory_read or memory_recall). When one of them is retracted, this record is repaired with it."}',
            'scope', jsonb_build_object('type', 'string', 'enum', scopes, 'default', 'private',
                'description', 'Audience: private (the default) and shared records are readable by their owner '
                               'and readers, public ones by everyone. A record may be no wider than the records '
                               'it derives from (private < shared < public).'),
            'readers', roles || '{"description": "Roles that may read the record besides its owner (you). It may not add readers that the records it derives from lack."}',
            'writers', roles || '{"description": "Roles that may replace the record by a better-supported different value, besides its owner."}',
            'valid', '{"type": "string", "description": "When the value holds, as a PostgreSQL tstzrange literal: \"[2026-01-01T00:00:00Z,2026-07-01T00:00:00Z)\" (\"[\" includes the bound, \")\" excludes it, an empty bound is unbounded). Omit when it always holds."}'::jsonb,
            'observed_at', '{"type": "string", "format": "date-time", "description": "When the value was observed, an ISO 8601 timestamp with a UTC offset, not in the future. Omit to take the latest observation time of the records it derives from."}'::jsonb,
            'expected_head', '{"type": "integer", "minimum": 0, "description": "The id of the record you saw as the current value of this slot (from memory_read or memory_recall), or 0 when you saw none. If the slot has changed since, the record is quarantined (stale_head) instead of replacing a newer value. Omit for no expectation."}'::jsonb,
            'proposal', nonempty || '{"description": "Your own id for this write (e.g. a UUID), unique in the namespace forever. A retry with the same id and content returns the original record instead of writing twice; memory_outcome tells what became of it."}'),
         ARRAY['entity', 'attribute', 'value']),
        (4, 'memory_commit',
         'Submit everything you staged in this transaction to the admission checks. Returns one row per '
         'staged record: record_id, state (committed or action_safe when admitted, quarantined when not) '
         'and reason (the reason code of a quarantine). Commit before calling an irreversible tool. '
         'Calling it again returns the same outcome.',
         '{}'::jsonb, ARRAY[]::text[]),
        (5, 'memory_abort',
         'Abandon this transaction: every record you staged in it is revoked (reason aborted), and '
         'whatever was derived from them is repaired. Returns the repair log rows.',
         '{}'::jsonb, ARRAY[]::text[]),
        (6, 'memory_revoke',
         'Retract a record you own that proved wrong. It is revoked and everything derived from it is '
         'repaired by kind: beliefs are revoked, summaries and other views quarantined for rebuilding, '
         'tool actions compensated or reported as leaked. Returns the repair log rows (none when the '
         'record was already revoked).',
         jsonb_build_object(
            'record', '{"type": "integer", "description": "Id of the record to retract."}'::jsonb,
            'note', nonempty || '{"description": "Why it is retracted; kept on every repair log row."}'),
         ARRAY['record']),
        (7, 'memory_outcome',
         'Find out what became of a proposal, by the proposal id it was staged with, when the reply to '
         'that write was lost: its record_id, tx_id, current state and reason, and the transaction''s '
         'status. No row when the id is unknown or the record is not readable by you. Resubmit a '
         'quarantined proposal under a new proposal id.',
         jsonb_build_object(
            'proposal', nonempty || '{"description": "The proposal id given when the record was staged."}'),
         ARRAY['proposal'])
        UNION ALL
        SELECT 8, t.name,
               pg_catalog.format('Call the tool %s. The call passes the memtx action gate first: it runs only '
                                 'if the gate allows it, and is recorded with the records it relied on. ', t.name)
            || CASE
                 WHEN NOT t.reversible THEN
                   'Irreversible: it is blocked while any tentative record is in flight (commit or abort '
                   'your staged records first), and it may require action-safe records in derived_from. '
                   'If a record it relied on is retracted later, the effect is reported as leaked.'
                 WHEN t.compensator IS NOT NULL THEN
                   pg_catalog.format('Reversible: if a record it relied on is retracted later, memtx '
                                     'schedules the compensating tool %s to undo it.', t.compensator)
                 ELSE
                   'Reversible: it can run while records are in flight; it has no compensating tool.'
               END
            || ' A blocked call returns the reason and the ids of the records that blocked it (blockers).',
               jsonb_build_object(
                  'args', '{"type": "object", "description": "The arguments of the tool call itself, passed on unchanged."}'::jsonb,
                  'derived_from', ids || '{"description": "Ids of the records this call relies on (from memory_read or memory_recall); each must be visible to you."}',
                  'effect_key', nonempty || '{"description": "A key that makes the effect happen at most once: repeating the call with the same key returns the first decision instead of acting again."}'),
               ARRAY['args']
          FROM memtx.tools t
         WHERE memtx.is_tool_name(t.name)
    ), shaped AS (
        SELECT tool.ord, tool.name, tool.description,
               jsonb_build_object('type', 'object', 'properties', tool.properties,
                                  'required', to_jsonb(tool.required), 'additionalProperties', false) AS schema
          FROM tool
    )
    SELECT coalesce(jsonb_agg(
               CASE tool_specs.format
                 WHEN 'openai' THEN jsonb_build_object('type', 'function', 'function',
                     jsonb_build_object('name', s.name, 'description', s.description, 'parameters', s.schema))
                 WHEN 'anthropic' THEN jsonb_build_object('name', s.name, 'description', s.description, 'input_schema', s.schema)
                 ELSE jsonb_build_object('name', s.name, 'description', s.description, 'inputSchema', s.schema)
               END ORDER BY s.ord, s.name COLLATE "C"), '[]')
      INTO specs
      FROM shaped s;
    RETURN specs;
END $$;
COMMENT ON FUNCTION memtx.tool_specs(text) IS 'tool definitions for LLM function calling (openai, anthropic or mcp): the memory tools, then each registered domain tool, routed through memtx.act';
REVOKE ALL ON FUNCTION memtx.tool_specs(text) FROM PUBLIC;
-- Executable by all: it describes the API every role may call, and the tool
-- registry it lists is readable by every role already.
GRANT EXECUTE ON FUNCTION memtx.tool_specs(text) TO PUBLIC;

-- Writer fencing (SPEC §12)
/*
 * Each role has a writer epoch, 0 until its first fence; memtx.fence(role)
 * opens the next one (a row here), aborts the role's open transactions
 * (reason fenced) and refuses every write by the role until
 * memtx.unfence(role) marks the row unfenced.  A transaction records its
 * agent's epoch at begin, and a call on a transaction opened under an
 * older epoch fails forever.  The row keeps the clock position of the fence,
 * so the checker can prove that no record of an older epoch's transaction
 * committed after it.  Role names are kept as text, like namespace grants:
 * the epoch stays with the name.
 */
ALTER TABLE memtx.transactions ADD COLUMN epoch bigint NOT NULL DEFAULT 0 CHECK (epoch >= 0);
COMMENT ON COLUMN memtx.transactions.epoch IS 'the writer epoch of the agent when the transaction began (SPEC §12)';

CREATE TABLE memtx.writer_epochs (
    role_name   text NOT NULL CHECK (role_name <> ''),
    epoch       bigint NOT NULL CHECK (epoch > 0),
    pos         bigint NOT NULL,
    fenced_at   timestamptz NOT NULL,
    unfenced_at timestamptz,
    PRIMARY KEY (role_name, epoch)
);
COMMENT ON TABLE memtx.writer_epochs IS 'the writer epochs of roles: one row per fence (epoch, clock position, when fenced and unfenced); a role without rows is at epoch 0';
REVOKE ALL ON memtx.writer_epochs FROM PUBLIC;
-- Whether a role was fenced is the harness's business and the role's own:
-- each role sees the rows of the roles it belongs to, nothing else.
GRANT SELECT ON memtx.writer_epochs TO PUBLIC;
ALTER TABLE memtx.writer_epochs ENABLE ROW LEVEL SECURITY;
CREATE POLICY writer_epochs_own ON memtx.writer_epochs FOR SELECT
    USING (memtx.can_read(role_name, NULL, NULL));
SELECT pg_catalog.pg_extension_config_dump('memtx.writer_epochs', '');

-- A role's current writer epoch, defined once: begin records it, every call
-- on a transaction compares the transaction's with it, the checker uses it.
-- PL/pgSQL, not SQL: PostgreSQL does not inline a SQL function whose body
-- has a sub-select, and plans such a body afresh at every call from a
-- prepared statement (a tenth of a millisecond, at every transaction load);
-- PL/pgSQL keeps the plan for the session.
CREATE FUNCTION memtx.writer_epoch(role text) RETURNS bigint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN coalesce((SELECT max(w.epoch) FROM memtx.writer_epochs w
                      WHERE w.role_name = writer_epoch.role), 0);
END $$;
COMMENT ON FUNCTION memtx.writer_epoch(text) IS 'the current writer epoch of a role: 0 until fenced, then the number of fences';

CREATE FUNCTION memtx.fence(role text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'memtx_fence'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.fence(text) IS 'harness: advance a role''s writer epoch and return it, abort its open transactions in every namespace (reason fenced) and refuse its writes until memtx.unfence';
CREATE FUNCTION memtx.unfence(role text) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_unfence'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.unfence(text) IS 'harness: let a fenced role write again; its epoch stays, so transactions opened before the fence stay refused';
REVOKE ALL ON FUNCTION memtx.fence(text), memtx.unfence(text) FROM PUBLIC;
-- Executable by all: the functions refuse every caller but a harness
-- themselves (the harness role is a setting, not a fixed role to grant to).
GRANT EXECUTE ON FUNCTION memtx.fence(text), memtx.unfence(text) TO PUBLIC;

-- Proposals: exact head and one disposition per proposal (SPEC §10)
--
-- expected_head is the predecessor the proposer saw (0: typed absence, NULL:
-- no expectation); proposal is a client-chosen id, bound forever to the first
-- record staged under it in its namespace.  Both are content: the lifecycle
-- trigger keeps them fixed after staging like every column it does not list.
ALTER TABLE memtx.records
    ADD COLUMN expected_head bigint CHECK (expected_head >= 0),
    ADD COLUMN proposal text CHECK (proposal <> '' AND octet_length(proposal) <= 1024);
CREATE UNIQUE INDEX records_proposal_idx ON memtx.records (namespace, proposal) WHERE proposal IS NOT NULL;

-- stage gains expected_head and proposal after observed_at.  The old
-- signature is dropped so that positional and named calls of 0.1.0 resolve
-- to this one (the new arguments default to NULL); the C function reads them
-- only when the caller's signature has them.
DROP FUNCTION memtx.stage(bigint, text, text, jsonb, memtx.kind, text, double precision, bigint[], memtx.scope, text[], text[], tstzrange, timestamptz);
CREATE FUNCTION memtx.stage(tx bigint, entity text, attribute text, value jsonb,
                            kind memtx.kind DEFAULT 'belief', source text DEFAULT NULL,
                            confidence double precision DEFAULT 1.0, derived_from bigint[] DEFAULT '{}',
                            scope memtx.scope DEFAULT 'private', readers text[] DEFAULT NULL,
                            writers text[] DEFAULT NULL, valid tstzrange DEFAULT NULL,
                            observed_at timestamptz DEFAULT NULL, expected_head bigint DEFAULT NULL,
                            proposal text DEFAULT NULL)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'memtx_stage'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.stage(bigint, text, text, jsonb, memtx.kind, text, double precision, bigint[], memtx.scope, text[], text[], tstzrange, timestamptz, bigint, text) IS 'stage a tentative record and its derived-from edges in an open transaction; expected_head (0: none) is checked at commit, a proposal id makes a retry return the original record';
REVOKE ALL ON FUNCTION memtx.stage(bigint, text, text, jsonb, memtx.kind, text, double precision, bigint[], memtx.scope, text[], text[], tstzrange, timestamptz, bigint, text) FROM PUBLIC;
-- An agent's API: the function checks the transaction's agent itself.
GRANT EXECUTE ON FUNCTION memtx.stage(bigint, text, text, jsonb, memtx.kind, text, double precision, bigint[], memtx.scope, text[], text[], tstzrange, timestamptz, bigint, text) TO PUBLIC;

CREATE FUNCTION memtx.outcome(proposal text, namespace text DEFAULT 'default')
    RETURNS TABLE (record_id bigint, tx_id bigint, state memtx.state, reason text, tx_status text)
    AS 'MODULE_PATHNAME', 'memtx_outcome'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.outcome(text, text) IS 'the disposition of a proposal (record, transaction, current state and reason, transaction status); no row when the id is unknown or the record not readable by the caller; writes nothing';
REVOKE ALL ON FUNCTION memtx.outcome(text, text) FROM PUBLIC;
-- Anyone's read: it answers only about records the calling role may read.
GRANT EXECUTE ON FUNCTION memtx.outcome(text, text) TO PUBLIC;

-- begin + stage + commit of one record, in C (src/propose.c): the three
-- calls' code in one call.  A proposal already bound with the same content
-- and agent returns its outcome and writes nothing: with a proposal id the
-- begin and the stage run in a subtransaction that is rolled back once
-- stage has answered with a record of an earlier transaction.
CREATE FUNCTION memtx.propose(entity text, attribute text, value jsonb,
                              kind memtx.kind DEFAULT 'belief', source text DEFAULT NULL,
                              confidence double precision DEFAULT 1.0, derived_from bigint[] DEFAULT '{}',
                              scope memtx.scope DEFAULT 'private', readers text[] DEFAULT NULL,
                              writers text[] DEFAULT NULL, valid tstzrange DEFAULT NULL,
                              observed_at timestamptz DEFAULT NULL, expected_head bigint DEFAULT NULL,
                              proposal text DEFAULT NULL, namespace text DEFAULT 'default')
    RETURNS TABLE (tx_id bigint, record_id bigint, state memtx.state, reason text)
    AS 'MODULE_PATHNAME', 'memtx_propose'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 1
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.propose(text, text, jsonb, memtx.kind, text, double precision, bigint[], memtx.scope, text[], text[], tstzrange, timestamptz, bigint, text, text) IS 'begin, stage and commit one record at the caller''s configured tier; a proposal already bound with the same content and agent returns its outcome and writes nothing';
REVOKE ALL ON FUNCTION memtx.propose(text, text, jsonb, memtx.kind, text, double precision, bigint[], memtx.scope, text[], text[], tstzrange, timestamptz, bigint, text, text) FROM PUBLIC;
-- An agent's API: it makes the checks of begin, stage and commit itself.
GRANT EXECUTE ON FUNCTION memtx.propose(text, text, jsonb, memtx.kind, text, double precision, bigint[], memtx.scope, text[], text[], tstzrange, timestamptz, bigint, text, text) TO PUBLIC;

-- History, as-of reads and erasure (SPEC §13)
/*
 * memtx.history keeps every state change of a record from its staging on:
 * the state and reason it moved to, memtx.now() at the move and a position
 * in the one global order (memtx.clock).  Two statement-level triggers on
 * memtx.records write it, so every path that changes a state — the API's,
 * the worker's, a harness's direct UPDATE — leaves its row, one INSERT per
 * statement however many records a cascade settles.  The position is the
 * record's own when the statement sets it (staged_pos at staging,
 * settled_pos when it leaves tentative), a fresh one otherwise.
 * `validated` lives only inside one commit and is not kept.  History holds
 * no values and is never rewritten (erasure leaves it as it is).
 *
 * Rows that arrive by COPY FROM into memtx.records (pg_restore loading a
 * dump) write no history: the dump carries the history rows themselves.
 *
 * A store upgraded from 0.1.0 kept no history; what can be known is
 * backfilled below, without taking a position from the clock: each
 * record's state at staging (tentative, or committed for a tool action; at
 * its created_at and staged_pos) and, when it has moved on, its current
 * state and reason — at its last rollback log row when a repair put it
 * there (that row's position and time), else at settled_pos and its
 * transaction's end.  A record that passed through states in between
 * (committed, then superseded, then revoked) has only those two rows, so
 * as-of reads of instants before the upgrade see it in its staged state
 * and then directly in its current one.
 */
ALTER TABLE memtx.records ADD COLUMN restored_from bigint, ADD COLUMN erased_at timestamptz;
COMMENT ON COLUMN memtx.records.restored_from IS 'the record memtx.restore copied (auxiliary lineage: no derivation edge)';
COMMENT ON COLUMN memtx.records.erased_at IS 'when memtx.erase removed the value (NULL: not erased)';

CREATE TABLE memtx.history (
    record_id bigint NOT NULL,
    state     memtx.state NOT NULL,
    reason    text,
    at        timestamptz NOT NULL,
    pos       bigint NOT NULL,
    namespace text NOT NULL
);
-- a record's history in order; not unique: positions written by hand (a
-- direct INSERT of a record, a restored store) need not be
CREATE INDEX history_record_idx ON memtx.history (record_id, pos);
COMMENT ON TABLE memtx.history IS 'every state change of each record from its staging on: state, reason, memtx.now() and global position (no values)';
REVOKE ALL ON memtx.history FROM PUBLIC;
-- History is readable with its record, under the records' row-level security.
GRANT SELECT ON memtx.history TO PUBLIC;
ALTER TABLE memtx.history ENABLE ROW LEVEL SECURITY;
CREATE POLICY history_readable ON memtx.history FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = record_id AND r.namespace = history.namespace));
SELECT pg_catalog.pg_extension_config_dump('memtx.history', '');

WITH staged AS (
    SELECT r.*, CASE WHEN r.kind = 'tool_action' THEN 'committed' ELSE 'tentative' END::memtx.state AS staged_state,
           (SELECT l.pos FROM memtx.rollback_log l WHERE l.record_id = r.id ORDER BY l.pos DESC LIMIT 1) AS repair_pos,
           (SELECT l.logged_at FROM memtx.rollback_log l WHERE l.record_id = r.id ORDER BY l.pos DESC LIMIT 1) AS repaired_at
      FROM memtx.records r)
INSERT INTO memtx.history (record_id, state, reason, at, pos, namespace)
SELECT s.id, s.staged_state, NULL, s.created_at, s.staged_pos, s.namespace FROM staged s
UNION ALL
SELECT s.id, s.state, s.reason, coalesce(s.repaired_at, t.ended_at, s.created_at),
       coalesce(s.repair_pos, CASE WHEN s.settled_pos <> s.staged_pos THEN s.settled_pos END, s.staged_pos),
       s.namespace
  FROM staged s JOIN memtx.transactions t ON t.id = s.tx_id
 WHERE s.state <> s.staged_state;

CREATE FUNCTION memtx.history_write() RETURNS trigger
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NOT memtx.copying_into(TG_RELID) THEN
            INSERT INTO memtx.history (record_id, state, reason, at, pos, namespace)
            SELECT n.id, n.state, n.reason, memtx.now(), n.staged_pos, n.namespace
              FROM new_rows n WHERE n.state <> 'validated';
        END IF;
    ELSE
        INSERT INTO memtx.history (record_id, state, reason, at, pos, namespace)
        SELECT c.id, c.state, c.reason, memtx.now(),
               CASE WHEN c.settled_pos IS DISTINCT FROM c.old_settled_pos THEN c.settled_pos
                    ELSE pg_catalog.nextval('memtx.clock') END, c.namespace
          FROM (SELECT n.id, n.state, n.reason, n.settled_pos, o.settled_pos AS old_settled_pos, n.namespace
                  FROM new_rows n JOIN old_rows o ON o.id = n.id
                 WHERE n.state <> 'validated'
                   AND (n.state <> o.state OR n.reason IS DISTINCT FROM o.reason)
                 ORDER BY n.id) c;
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION memtx.history_write() IS 'trigger of memtx.records: keeps each staging and state change in memtx.history';
-- a trigger function: fired by the table, called by no one
REVOKE ALL ON FUNCTION memtx.history_write() FROM PUBLIC;
CREATE TRIGGER records_history_insert AFTER INSERT ON memtx.records
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memtx.history_write();
CREATE TRIGGER records_history_update AFTER UPDATE ON memtx.records
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memtx.history_write();

-- A record's state and reason at an instant: those of its last history row
-- (by position) at or before it; no row when it did not exist yet.
CREATE FUNCTION memtx.state_at(record bigint, at timestamptz)
    RETURNS TABLE (state memtx.state, reason text)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT h.state, h.reason FROM memtx.history h
     WHERE h.record_id = state_at.record AND h.at <= state_at.at
     ORDER BY h.pos DESC, h.at DESC LIMIT 1;
END;
COMMENT ON FUNCTION memtx.state_at(bigint, timestamptz) IS 'a record''s state and reason at an instant: its last history row at or before it (none: it did not exist yet)';

/*
 * memtx.read_as_of: the records active at a past instant, with the state and
 * reason they had then and every other column as it is now (an erased value
 * stays erased).  It runs as the caller, so the records' row-level security
 * decides what it returns, exactly as for a direct SELECT; it takes no memtx
 * transaction and writes nothing, so it runs on a hot standby.
 */
CREATE FUNCTION memtx.read_as_of(at timestamptz, entity text DEFAULT NULL, attribute text DEFAULT NULL,
                                 namespace text DEFAULT 'default', valid_at timestamptz DEFAULT NULL)
    RETURNS SETOF memtx.records
    LANGUAGE plpgsql STABLE CALLED ON NULL INPUT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp SET jit = off
AS $$
BEGIN
    IF read_as_of.at IS NULL OR read_as_of.namespace IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed',
            MESSAGE = pg_catalog.format('%s must not be null', CASE WHEN read_as_of.at IS NULL THEN 'at' ELSE 'namespace' END);
    END IF;
    RETURN QUERY
        SELECT (pg_catalog.jsonb_populate_record(r, pg_catalog.jsonb_build_object('state', h.state, 'reason', h.reason))).*
          FROM memtx.records r
          CROSS JOIN LATERAL memtx.state_at(r.id, read_as_of.at) h
         WHERE r.namespace = read_as_of.namespace
           AND (read_as_of.entity IS NULL OR r.entity = read_as_of.entity)
           AND (read_as_of.attribute IS NULL OR r.attribute = read_as_of.attribute)
           AND (read_as_of.valid_at IS NULL OR r.valid @> read_as_of.valid_at)
           AND memtx.is_active(h.state)
         ORDER BY r.id;
END $$;
COMMENT ON FUNCTION memtx.read_as_of(timestamptz, text, text, text, timestamptz) IS 'the records active at a past instant (and valid at valid_at, when given) that the caller may read, in id order, with their state and reason as at that instant; writes nothing';
REVOKE ALL ON FUNCTION memtx.read_as_of(timestamptz, text, text, text, timestamptz) FROM PUBLIC;
-- Anyone's read: it runs as the caller, under the records' row-level security.
GRANT EXECUTE ON FUNCTION memtx.read_as_of(timestamptz, text, text, text, timestamptz) TO PUBLIC;

CREATE FUNCTION memtx.erase(record bigint, note text DEFAULT NULL)
    RETURNS SETOF memtx.rollback_log
    AS 'MODULE_PATHNAME', 'memtx_erase'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
COMMENT ON FUNCTION memtx.erase(bigint, text) IS 'harness: legal erasure — revoke the record (reason erased, cascade as for revoke) unless revoked already, then replace its value by JSON null in the record and in every copy memtx keeps; returns the repair log rows';
REVOKE ALL ON FUNCTION memtx.erase(bigint, text) FROM PUBLIC;
-- Executable by all: the function refuses every caller but a harness itself.
GRANT EXECUTE ON FUNCTION memtx.erase(bigint, text) TO PUBLIC;

/*
 * memtx.restore stages in tx a copy of the record that was active on a slot
 * at a past instant (memtx.state_at, as read_as_of), with restored_from set
 * to it and no derivation edge, and expected_head set to the slot's current
 * head, through memtx.stage: the normal pipeline admits it (src/restore.c).
 */
CREATE FUNCTION memtx.restore(tx bigint, entity text, attribute text, at timestamptz, valid_at timestamptz DEFAULT NULL)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'memtx_restore'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.restore(bigint, text, text, timestamptz, timestamptz) IS 'stage in tx a copy of the record active on the slot at a past instant (valid at valid_at, when given), expecting the slot''s current head; returns the new record''s id';
REVOKE ALL ON FUNCTION memtx.restore(bigint, text, text, timestamptz, timestamptz) FROM PUBLIC;
-- An agent's API: the function checks the transaction's agent itself.
GRANT EXECUTE ON FUNCTION memtx.restore(bigint, text, text, timestamptz, timestamptz) TO PUBLIC;

-- Receipts (SPEC §11)
/*
 * Every terminal disposition appends one receipt: a commit outcome per
 * record, an act decision, a retraction, a fence.  The call that makes the
 * disposition appends it with seq, prev_hash and hash NULL and an
 * `appended` number from a sequence; the chain is built after the SQL
 * transaction commits, by memtx.chain_receipts (the worker runs it every
 * naptime; memtx.verify_receipts runs it first), which takes the namespace's
 * head row FOR UPDATE and gives the pending receipts it can see seq, the
 * completed body and the hashes, in `appended` order.  So commits append
 * without waiting for each other, and the chain is still in durability
 * order: a transaction that began after another committed draws a higher
 * `appended`, and a chainer that sees the later one sees the earlier one
 * too (src/receipt.c).  A rolled-back call leaves no receipt and no gap.
 *
 * Receipts hold no values: a commit receipt carries the SHA-256 of the
 * record's value salted with a random salt kept in memtx.record_salts,
 * which memtx.erase deletes with the value.
 */
CREATE SEQUENCE memtx.receipt_order;
COMMENT ON SEQUENCE memtx.receipt_order IS 'the order in which receipts were appended (cache 1: one order across backends)';
REVOKE ALL ON SEQUENCE memtx.receipt_order FROM PUBLIC;

CREATE TABLE memtx.receipts (
    namespace   text NOT NULL,
    seq         bigint CHECK (seq > 0),
    kind        text NOT NULL CHECK (kind IN ('commit', 'act', 'retract', 'fence')),
    subject     bigint NOT NULL,
    disposition text NOT NULL CHECK (disposition IN ('committed', 'action_safe', 'quarantined',
                                                     'allowed', 'blocked', 'retracted', 'fenced')),
    reason      text,
    body        jsonb NOT NULL,
    prev_hash   bytea,
    hash        bytea,
    at          timestamptz NOT NULL,
    appended    bigint NOT NULL DEFAULT pg_catalog.nextval('memtx.receipt_order'),
    PRIMARY KEY (namespace, appended),
    UNIQUE (namespace, seq),
    CHECK ((seq IS NULL) = (hash IS NULL) AND (seq IS NULL) = (prev_hash IS NULL))
);
COMMENT ON TABLE memtx.receipts IS 'one receipt per terminal disposition, hash-chained per namespace in durability order (seq and hashes NULL until chained); no values';
-- the receipts a chainer has still to chain, in the order it chains them
CREATE INDEX receipts_pending_idx ON memtx.receipts (namespace, appended) WHERE seq IS NULL;
CREATE INDEX receipts_subject_idx ON memtx.receipts (kind, subject);
ALTER SEQUENCE memtx.receipt_order OWNED BY memtx.receipts.appended;

-- The end of each namespace's chain: what a deleted last receipt is found
-- against, and the row chainers of one namespace serialize on.
CREATE TABLE memtx.receipt_heads (
    namespace text PRIMARY KEY,
    seq       bigint NOT NULL CHECK (seq >= 0),
    hash      bytea NOT NULL CHECK (octet_length(hash) = 32)
);
COMMENT ON TABLE memtx.receipt_heads IS 'the last chained receipt of each namespace: its seq and hash';

CREATE TABLE memtx.record_salts (
    record_id bigint NOT NULL,
    namespace text NOT NULL,
    salt      bytea NOT NULL CHECK (octet_length(salt) >= 16),
    PRIMARY KEY (record_id, namespace)
);
COMMENT ON TABLE memtx.record_salts IS 'the random salt of each record''s value digest in its receipts; memtx.erase deletes it with the value';

-- Whether the calling role is a harness (a superuser or a member of the
-- role named by memtx.harness_role), defined once in C.
CREATE FUNCTION memtx.is_harness() RETURNS boolean
    AS 'MODULE_PATHNAME', 'memtx_is_harness'
    LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION memtx.is_harness() IS 'whether the current role is a harness (superuser or member of memtx.harness_role)';
REVOKE ALL ON FUNCTION memtx.is_harness() FROM PUBLIC;
-- Anyone may ask about themselves; the row-level security of receipts uses it.
GRANT EXECUTE ON FUNCTION memtx.is_harness() TO PUBLIC;

REVOKE ALL ON memtx.receipts, memtx.receipt_heads, memtx.record_salts FROM PUBLIC;
-- Receipts and chain heads are readable by a harness only (SPEC §11); the
-- salts by nobody but the extension's owner (a salt would let a reader test
-- guesses of a value against its digest).
GRANT SELECT ON memtx.receipts, memtx.receipt_heads TO PUBLIC;
ALTER TABLE memtx.receipts ENABLE ROW LEVEL SECURITY;
CREATE POLICY receipts_harness ON memtx.receipts FOR SELECT USING (memtx.is_harness());
ALTER TABLE memtx.receipt_heads ENABLE ROW LEVEL SECURITY;
CREATE POLICY receipt_heads_harness ON memtx.receipt_heads FOR SELECT USING (memtx.is_harness());
ALTER TABLE memtx.record_salts ENABLE ROW LEVEL SECURITY;
SELECT pg_catalog.pg_extension_config_dump('memtx.receipts', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.receipt_heads', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.record_salts', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.receipt_order', '');

-- Append-only: a receipt is never deleted, and changed only by the chaining
-- fill-in (seq, hashes and the completed body of a receipt not yet chained).
CREATE FUNCTION memtx.receipts_guard() RETURNS trigger
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.seq IS NULL AND NEW.seq IS NOT NULL
       AND (NEW.namespace, NEW.kind, NEW.subject, NEW.disposition, NEW.reason, NEW.at, NEW.appended)
           IS NOT DISTINCT FROM (OLD.namespace, OLD.kind, OLD.subject, OLD.disposition, OLD.reason, OLD.at, OLD.appended)
       AND NEW.body @> OLD.body THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
        MESSAGE = 'memtx.receipts is append-only',
        DETAIL = 'A receipt is never deleted, and changed only when memtx.chain_receipts chains it.';
END $$;
COMMENT ON FUNCTION memtx.receipts_guard() IS 'trigger of memtx.receipts: refuses UPDATE (but the chaining fill-in), DELETE and TRUNCATE';
-- a trigger function: fired by the table, called by no one
REVOKE ALL ON FUNCTION memtx.receipts_guard() FROM PUBLIC;
CREATE TRIGGER receipts_append_only BEFORE UPDATE OR DELETE ON memtx.receipts
    FOR EACH ROW EXECUTE FUNCTION memtx.receipts_guard();
CREATE TRIGGER receipts_append_only_truncate BEFORE TRUNCATE ON memtx.receipts
    FOR EACH STATEMENT EXECUTE FUNCTION memtx.receipts_guard();

/*
 * The terminal dispositions the store records, each with the receipt it
 * must have (SPEC §11), defined once: check_invariants compares them with
 * the receipts, and the upgrade below writes the receipts of the
 * dispositions made before 0.2.0.  `subject_is` says what the subject
 * number names (with the role, for a fence's epoch).
 *   commit   a record the pipeline settled (its verdict; a record revoked
 *            while tentative has verdict revoked and no commit receipt),
 *            and once more a quarantined one that resolve accepted (it was
 *            active later);
 *   act      an action log row;
 *   retract  an aborted transaction (abort, expiry, fence); a record revoked
 *            as the root of a revoke or a rejecting resolve; an erased record;
 *   fence    an epoch of a role, in each namespace where the role had a
 *            transaction opened under an older epoch.
 */
-- (A SQL-standard body binds its names when created, so it pins no
-- search_path: with a SET clause PostgreSQL would neither inline it into the
-- audits that call it nor keep its plan, and re-planned it at every call.)
CREATE FUNCTION memtx.dispositions()
    RETURNS TABLE (namespace text, kind text, subject bigint, subject_is text, disposition text,
                   reason text, body jsonb, at timestamptz, pos bigint)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT r.namespace, 'commit', r.id, 'record', r.verdict::text, r.verdict_reason,
           jsonb_build_object('tx', r.tx_id, 'record', r.id), t.ended_at, r.settled_pos
      FROM memtx.records r JOIN memtx.transactions t ON t.id = r.tx_id
     WHERE r.verdict IN ('committed', 'action_safe', 'quarantined') AND r.kind <> 'tool_action'
    UNION ALL
    SELECT r.namespace, 'commit', r.id, 'record', h.state::text, NULL,
           jsonb_build_object('tx', r.tx_id, 'record', r.id), h.at, h.pos
      FROM memtx.records r
      JOIN LATERAL (SELECT x.state, x.at, x.pos FROM memtx.history x
                     WHERE x.record_id = r.id AND memtx.is_active(x.state)
                     ORDER BY x.pos LIMIT 1) h ON true
     WHERE r.verdict = 'quarantined' AND r.kind <> 'tool_action'
    UNION ALL
    SELECT a.namespace, 'act', a.tx_id, 'transaction', CASE WHEN a.allowed THEN 'allowed' ELSE 'blocked' END,
           a.reason, jsonb_build_object('tx', a.tx_id, 'log', a.id), a.logged_at, a.gate_pos
      FROM memtx.action_log a
    UNION ALL
    SELECT t.namespace, 'retract', t.id, 'transaction', 'retracted', t.end_reason,
           jsonb_build_object('tx', t.id), t.ended_at, NULL
      FROM memtx.transactions t
     WHERE t.status = 'aborted' AND t.end_reason IS NOT NULL
    UNION ALL
    SELECT r.namespace, 'retract', r.id, 'record', 'retracted', l.reason,
           jsonb_build_object('record', r.id), l.logged_at, l.pos
      FROM memtx.records r
      JOIN LATERAL (SELECT x.reason, x.logged_at, x.pos FROM memtx.rollback_log x
                     WHERE x.root_id = r.id AND x.record_id = r.id AND x.reason = 'revoked'
                     ORDER BY x.pos LIMIT 1) l ON true
    UNION ALL
    SELECT r.namespace, 'retract', r.id, 'record', 'retracted', 'erased',
           jsonb_build_object('record', r.id), r.erased_at, NULL
      FROM memtx.records r
     WHERE r.erased_at IS NOT NULL
    UNION ALL
    SELECT DISTINCT t.namespace, 'fence', w.epoch, 'epoch', 'fenced', NULL::text,
           jsonb_build_object('role', w.role_name), w.fenced_at, w.pos
      FROM memtx.writer_epochs w
      JOIN memtx.transactions t ON t.agent = w.role_name AND t.epoch < w.epoch;
END;
COMMENT ON FUNCTION memtx.dispositions() IS 'harness audit: every terminal disposition the store records, with the kind, subject, disposition and reason of the receipt it must have';
REVOKE ALL ON FUNCTION memtx.dispositions() FROM PUBLIC;

-- The digest a receipt keeps of a record's value, defined once: SHA-256 of
-- the record's salt (memtx.record_salts) and the value's canonical text,
-- hex; NULL without a salt (erased).  A plain expression, so the planner
-- inlines it into the statement that joins the salt.
CREATE FUNCTION memtx.value_salted_digest(salt bytea, value jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN pg_catalog.encode(pg_catalog.sha256(salt || pg_catalog.convert_to(value::text, 'UTF8')), 'hex');
COMMENT ON FUNCTION memtx.value_salted_digest(bytea, jsonb) IS 'the salted SHA-256 of a record''s value that its receipts carry (hex; NULL without a salt)';
REVOKE ALL ON FUNCTION memtx.value_salted_digest(bytea, jsonb) FROM PUBLIC;

-- The columns of a receipt as its body repeats them, defined once: the
-- chainer adds them to the body it hashes, the verifier compares them.  The
-- time is written in UTC, whatever the session's TimeZone.
CREATE FUNCTION memtx.receipt_columns(namespace text, seq bigint, kind text, subject bigint,
                                      disposition text, reason text, at timestamptz) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN pg_catalog.jsonb_build_object('namespace', namespace, 'seq', seq, 'kind', kind,
               'subject', subject, 'disposition', disposition, 'reason', reason,
               'at', pg_catalog.to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'));
COMMENT ON FUNCTION memtx.receipt_columns(text, bigint, text, bigint, text, text, timestamptz) IS 'the columns of a receipt as its body repeats them (time in UTC)';
REVOKE ALL ON FUNCTION memtx.receipt_columns(text, bigint, text, bigint, text, text, timestamptz) FROM PUBLIC;

/*
 * What is wrong with a namespace's chain, defined once (verify_receipts
 * reports the lowest seq, check_invariants every row): a seq missing (a
 * deleted receipt, the last included: the head remembers it), a broken
 * link or hash, a column that disagrees with the body, a subject that does
 * not exist, a value digest that no longer matches its record (unless the
 * record was erased).  Receipts not yet chained are not looked at.
 */
CREATE FUNCTION memtx.receipt_problems(namespace text) RETURNS TABLE (seq bigint, detail text)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    WITH c AS (
        SELECT r.*, pg_catalog.lag(r.hash) OVER w AS before_hash, pg_catalog.row_number() OVER w AS n
          FROM memtx.receipts r
         WHERE r.namespace = receipt_problems.namespace AND r.seq IS NOT NULL
        WINDOW w AS (ORDER BY r.seq)),
    judged AS (
        SELECT c.n, c.seq, CASE
            WHEN c.seq <> c.n THEN 'is missing'
            WHEN c.prev_hash IS DISTINCT FROM coalesce(c.before_hash, pg_catalog.decode(pg_catalog.repeat('00', 32), 'hex'))
                THEN 'has a prev_hash that is not the hash of the receipt before it'
            WHEN c.hash IS DISTINCT FROM pg_catalog.sha256(c.prev_hash || pg_catalog.convert_to(c.body::text, 'UTF8'))
                THEN 'has a hash that is not the hash of its link and body'
            WHEN NOT c.body @> memtx.receipt_columns(c.namespace, c.seq, c.kind, c.subject, c.disposition, c.reason, c.at)
                THEN 'has a column that disagrees with its body'
            WHEN NOT CASE WHEN c.kind = 'fence'
                              THEN EXISTS (SELECT FROM memtx.writer_epochs w
                                            WHERE w.role_name = c.body->>'role' AND w.epoch = c.subject)
                          WHEN c.kind = 'act' OR c.body->>'subject_is' = 'transaction'
                              THEN EXISTS (SELECT FROM memtx.transactions t WHERE t.id = c.subject)
                          ELSE EXISTS (SELECT FROM memtx.records x WHERE x.id = c.subject) END
                THEN pg_catalog.format('names a %s (%s) that does not exist', c.body->>'subject_is', c.subject)
            WHEN c.kind = 'commit'
                 AND EXISTS (SELECT FROM memtx.records x LEFT JOIN memtx.record_salts s ON s.record_id = x.id
                              WHERE x.id = c.subject AND x.erased_at IS NULL
                                AND (c.body->>'value_digest') IS DISTINCT FROM memtx.value_salted_digest(s.salt, x.value))
                THEN pg_catalog.format('has a value digest that no longer matches record %s', c.subject)
            END AS detail
          FROM c)
    SELECT j.n, pg_catalog.format('receipt %s %s', j.n, j.detail) FROM judged j WHERE j.detail IS NOT NULL
    UNION ALL
    SELECT CASE WHEN k.seq > l.last THEN l.last + 1 ELSE k.seq END,
           CASE WHEN k.seq > l.last THEN pg_catalog.format('receipt %s is missing (the chain''s head is receipt %s)', l.last + 1, k.seq)
                       ELSE pg_catalog.format('receipt %s has a hash that is not the chain''s head', k.seq) END
      FROM memtx.receipt_heads k,
           LATERAL (SELECT coalesce(pg_catalog.max(r.seq), 0) AS last FROM memtx.receipts r
                     WHERE r.namespace = k.namespace AND r.seq IS NOT NULL) l
     WHERE k.namespace = receipt_problems.namespace
       AND (k.seq > l.last OR (k.seq > 0 AND k.seq = l.last AND k.hash IS DISTINCT FROM
            (SELECT r.hash FROM memtx.receipts r WHERE r.namespace = k.namespace AND r.seq = k.seq)))
    ORDER BY 1;
END;
COMMENT ON FUNCTION memtx.receipt_problems(text) IS 'harness audit: what is wrong with a namespace''s chained receipts, by seq (none when the chain holds)';
REVOKE ALL ON FUNCTION memtx.receipt_problems(text) FROM PUBLIC;

CREATE FUNCTION memtx.chain_receipts(namespace text DEFAULT NULL) RETURNS bigint
    AS 'MODULE_PATHNAME', 'memtx_chain_receipts'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.chain_receipts(text) IS 'harness: chain the committed receipts not yet chained (of one namespace, or of all), in the order they were appended; returns how many';

CREATE TYPE memtx.receipt_check AS (namespace text, checked bigint, first_bad_seq bigint, detail text);
COMMENT ON TYPE memtx.receipt_check IS 'one namespace''s result of memtx.verify_receipts';
CREATE FUNCTION memtx.verify_receipts(namespace text DEFAULT NULL) RETURNS SETOF memtx.receipt_check
    AS 'MODULE_PATHNAME', 'memtx_verify_receipts'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.verify_receipts(text) IS 'harness: chain what is pending, then recompute each namespace''s chain from the rows and from what they name; first_bad_seq is NULL when it holds';
REVOKE ALL ON FUNCTION memtx.chain_receipts(text), memtx.verify_receipts(text) FROM PUBLIC;
-- Executable by all: the functions refuse every caller but a harness
-- themselves (the harness role is a setting, not a fixed role to grant to).
GRANT EXECUTE ON FUNCTION memtx.chain_receipts(text), memtx.verify_receipts(text) TO PUBLIC;

-- The dispositions made before 0.2.0 get their receipts now, with
-- `backfilled` in the body, in the order of their time; the first chaining
-- chains them.  A fresh install has none.
INSERT INTO memtx.record_salts (record_id, namespace, salt)
SELECT c.subject, c.namespace, pg_catalog.uuid_send(pg_catalog.gen_random_uuid())
  FROM (SELECT DISTINCT d.subject, d.namespace FROM memtx.dispositions() d WHERE d.kind = 'commit') c;
INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at)
SELECT d.namespace, d.kind, d.subject, d.disposition, d.reason,
       d.body || jsonb_build_object('subject_is', d.subject_is, 'backfilled', true)
              || CASE WHEN d.kind = 'commit' THEN jsonb_build_object('value_digest',
                    (SELECT memtx.value_salted_digest(s.salt, r.value)
                       FROM memtx.records r JOIN memtx.record_salts s ON s.record_id = r.id
                      WHERE r.id = d.subject)) ELSE '{}' END,
       coalesce(d.at, pg_catalog.now())
  FROM memtx.dispositions() d
 ORDER BY d.at NULLS LAST, d.pos NULLS LAST;

-- Set-wise staging (issue "A write path close to PostgreSQL's own floor")
/*
 * memtx.stage_many stages a JSON array of records in one call: each element
 * an object whose keys are memtx.stage's argument names (every one but tx),
 * an absent key taking stage's default.  Each element goes through the one
 * stage path, with the same checks and errors (the element's index leads the
 * error detail); ids come back in element order, and an error stages nothing.
 */
CREATE FUNCTION memtx.stage_many(tx bigint, records jsonb)
    RETURNS SETOF bigint
    AS 'MODULE_PATHNAME', 'memtx_stage_many'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE ROWS 100
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.stage_many(bigint, jsonb) IS 'stage a JSON array of records (objects keyed by memtx.stage''s argument names) in an open transaction, all or nothing; returns their ids in array order';
REVOKE ALL ON FUNCTION memtx.stage_many(bigint, jsonb) FROM PUBLIC;
-- An agent's API: the function checks the transaction's agent itself.
GRANT EXECUTE ON FUNCTION memtx.stage_many(bigint, jsonb) TO PUBLIC;
