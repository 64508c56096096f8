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
    IF tx IS NOT NULL THEN
        PERFORM FROM memtx.transactions t WHERE t.id = tx FOR KEY SHARE;
        IF NOT FOUND AND NOT memtx.copying_into(TG_RELID) THEN
            RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
                MESSAGE = format('a row of %s names transaction %s, which does not exist', TG_TABLE_NAME, tx);
        END IF;
    END IF;
    FOREACH r IN ARRAY coalesce(recs, '{}') LOOP
        CONTINUE WHEN r IS NULL;
        PERFORM FROM memtx.records x WHERE x.id = r FOR KEY SHARE;
        IF NOT FOUND AND NOT memtx.copying_into(TG_RELID) THEN
            RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
                MESSAGE = format('a row of %s names record %s, which does not exist', TG_TABLE_NAME, r);
        END IF;
    END LOOP;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION memtx.reference_check() IS 'trigger: the transaction and records a row names must exist (rows loaded by COPY FROM, as pg_restore loads them, excepted)';

-- Whether this backend is running COPY FROM into the table: the one write
-- the reference triggers let through unchecked.
CREATE FUNCTION memtx.copying_into(rel oid) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
    RETURN EXISTS (SELECT FROM pg_catalog.pg_stat_progress_copy p
                    WHERE p.pid = pg_catalog.pg_backend_pid() AND p.relid = rel AND p.command = 'COPY FROM');
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
    IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN
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

CREATE TRIGGER records_references BEFORE INSERT OR UPDATE OF tx_id ON memtx.records
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER edges_references BEFORE INSERT OR UPDATE OF child, parent ON memtx.edges
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER read_set_references BEFORE INSERT OR UPDATE OF tx_id ON memtx.read_set
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER revocation_registry_references BEFORE INSERT OR UPDATE OF record_id, root_id ON memtx.revocation_registry
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER action_log_references BEFORE INSERT OR UPDATE OF tx_id, action_id ON memtx.action_log
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER compensations_references BEFORE INSERT OR UPDATE OF root_id, action_id ON memtx.compensations
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER transactions_referenced BEFORE DELETE OR UPDATE OF id ON memtx.transactions
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_guard();
CREATE TRIGGER transactions_referenced_truncate BEFORE TRUNCATE ON memtx.transactions
    FOR EACH STATEMENT EXECUTE FUNCTION memtx.reference_guard();
CREATE TRIGGER records_referenced BEFORE DELETE OR UPDATE OF id ON memtx.records
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
