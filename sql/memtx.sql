/*
 * memtx: the whole current catalog.
 *
 * This file is what CREATE EXTENSION memtx runs (the build copies it to
 * memtx--<version>.sql).  It is ordered by the sections of the SQL contract
 * (SPEC.md) and labelled with them, so every object is defined in one
 * place, with its comment, privileges, row-level security and pg_dump
 * registration beside it.  A store installed earlier reaches the same
 * catalog through the upgrade chain instead: the frozen base
 * sql/memtx--0.1.0.sql and one step script per release
 * (sql/memtx--A--B.sql), none of which is edited once released.  A change
 * to the catalog goes into this file and into the next step;
 * test/sql/upgrade.sql proves that a fresh install and an upgraded one are
 * the same catalog, fact for fact.
 *
 * Everything lives in schema memtx.  Catalog tables hold the store; the
 * protocol runs in C (module memtx).  Clients use the API functions only:
 * tables are owned by the extension owner and not writable by PUBLIC
 * (default deny: every table and sequence revokes PUBLIC's rights), the C
 * functions switch to the owner for their table access and pin
 * search_path, and row-level security limits direct SELECTs.
 */
\echo Use "CREATE EXTENSION memtx" to load this file. \quit

CREATE SCHEMA memtx;
COMMENT ON SCHEMA memtx IS 'memtx: transactional belief memory for LLM agents';
-- Agents reach memtx through the API functions (EXECUTE is PUBLIC's by
-- default; the harness-only ones check the caller themselves); the schema
-- must be usable for that.
GRANT USAGE ON SCHEMA memtx TO PUBLIC;

/* ----------------------------------------------------------------------
 * §1 Data model: types, the global order, slots and values
 */

CREATE TYPE memtx.state AS ENUM (
    'raw', 'tentative', 'validated', 'committed', 'action_safe',
    'quarantined', 'superseded', 'revoked');
COMMENT ON TYPE memtx.state IS 'lifecycle state of a memory record';

CREATE TYPE memtx.isolation AS ENUM (
    'raw_read', 'committed_read', 'verified_read', 'causally_stable_read',
    'action_safe_read');
COMMENT ON TYPE memtx.isolation IS 'read isolation level of a memtx transaction';

CREATE TYPE memtx.risk_tier AS ENUM ('low', 'medium', 'high', 'external_action');
COMMENT ON TYPE memtx.risk_tier IS 'risk tier of a memtx transaction; decides its isolation level';

CREATE TYPE memtx.kind AS ENUM (
    'belief', 'summary', 'profile', 'index_entry', 'shared_copy', 'tool_action');
COMMENT ON TYPE memtx.kind IS 'what a record is; decides how cascade repair treats it';

CREATE TYPE memtx.scope AS ENUM ('private', 'shared', 'public');
COMMENT ON TYPE memtx.scope IS 'audience of a record, ordered private < shared < public';

CREATE TYPE memtx.tx_status AS ENUM ('open', 'committed', 'partially_committed', 'aborted');
COMMENT ON TYPE memtx.tx_status IS 'status of a memtx transaction';

-- The enum labels compiled into the library, for the catalog lint (they
-- must equal pg_enum: C uses a label's position as its value).
CREATE FUNCTION memtx.enum_labels()
    RETURNS TABLE (type_name text, label text, ordinal integer)
    AS 'MODULE_PATHNAME', 'memtx_enum_labels'
    LANGUAGE C IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION memtx.enum_labels() IS 'the enum labels compiled into the memtx library, in enum order; they must equal pg_enum';

-- One global order of protocol events (staging, settling, commits, snapshots).
CREATE SEQUENCE memtx.clock AS bigint;
CREATE SEQUENCE memtx.transaction_id_seq AS bigint;
CREATE SEQUENCE memtx.record_id_seq AS bigint;
CREATE SEQUENCE memtx.action_log_id_seq AS bigint;
CREATE SEQUENCE memtx.rollback_log_id_seq AS bigint;
CREATE SEQUENCE memtx.compensation_id_seq AS bigint;
COMMENT ON SEQUENCE memtx.clock IS 'the one global order of protocol events: staging, settling, commits, snapshots';
COMMENT ON SEQUENCE memtx.transaction_id_seq IS 'ids of memtx.transactions';
COMMENT ON SEQUENCE memtx.record_id_seq IS 'ids of memtx.records';
COMMENT ON SEQUENCE memtx.action_log_id_seq IS 'ids of memtx.action_log';
COMMENT ON SEQUENCE memtx.rollback_log_id_seq IS 'ids of memtx.rollback_log';
COMMENT ON SEQUENCE memtx.compensation_id_seq IS 'ids of memtx.compensations';
REVOKE ALL ON SEQUENCE memtx.clock, memtx.transaction_id_seq, memtx.record_id_seq,
    memtx.action_log_id_seq, memtx.rollback_log_id_seq, memtx.compensation_id_seq FROM PUBLIC;
-- User data and its sequences go into pg_dump output.
SELECT pg_catalog.pg_extension_config_dump('memtx.clock', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.transaction_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.record_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.action_log_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.rollback_log_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.compensation_id_seq', '');

CREATE FUNCTION memtx.value_digest(jsonb) RETURNS bytea
    AS 'MODULE_PATHNAME', 'memtx_value_digest'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION memtx.value_digest(jsonb) IS 'SHA-256 of a value''s canonical text: equal digests mean the same value';
CREATE FUNCTION memtx.slot_digest(namespace text, entity text, attribute text) RETURNS bytea
    AS 'MODULE_PATHNAME', 'memtx_slot_digest'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION memtx.slot_digest(text, text, text) IS 'SHA-256 of a slot''s length-prefixed namespace, entity and attribute: equal digests mean the same slot';
CREATE FUNCTION memtx.slot_key(namespace text, entity text, attribute text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'memtx_slot_key'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION memtx.slot_key(text, text, text) IS 'the first eight bytes of memtx.slot_digest as a bigint: the leading key of the single-truth index';

/* ----------------------------------------------------------------------
 * §2 Clock
 */

CREATE FUNCTION memtx.now() RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'memtx_now'
    LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION memtx.now() IS 'memtx clock: memtx.logical_now when set, else transaction_timestamp()';

/* ----------------------------------------------------------------------
 * §7 Principals (first: the row-level security of every table uses them)
 */

CREATE FUNCTION memtx.can_read(owner text, readers text[], scope memtx.scope)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'memtx_can_read'
    LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION memtx.can_read(text, text[], memtx.scope) IS 'whether the current role may read a record with this permission block';

-- Whether the calling role is a harness (a superuser or a member of the
-- role named by memtx.harness_role), defined once in C.
CREATE FUNCTION memtx.is_harness() RETURNS boolean
    AS 'MODULE_PATHNAME', 'memtx_is_harness'
    LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION memtx.is_harness() IS 'whether the current role is a harness (superuser or member of memtx.harness_role)';
REVOKE ALL ON FUNCTION memtx.is_harness() FROM PUBLIC;
-- Anyone may ask about themselves; the row-level security of receipts uses it.
GRANT EXECUTE ON FUNCTION memtx.is_harness() TO PUBLIC;

/* ----------------------------------------------------------------------
 * §1 Sources and their authority (§16: claimants)
 */

CREATE TABLE memtx.sources (
    name          text PRIMARY KEY CHECK (name <> '' AND octet_length(name) <= 256),
    authority     double precision NOT NULL CHECK (authority >= 0 AND authority <= 1),
    registered_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    claimants     text[] CHECK (pg_catalog.array_position(claimants, NULL) IS NULL)
);
COMMENT ON TABLE memtx.sources IS 'source registry: authority copied onto records staged from each source';
COMMENT ON COLUMN memtx.sources.claimants IS 'roles whose members may stage with this source (NULL: every role)';
REVOKE ALL ON memtx.sources FROM PUBLIC;
-- Registries are configuration, readable by all, written by harness functions.
GRANT SELECT ON memtx.sources TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('memtx.sources', '');

-- A source registered with claimants may be staged with only by members of
-- those roles (or a harness); NULL claimants: by anyone.  A two-argument
-- call is the three-argument one with its default, and the C function reads
-- the third argument only when it is there.
CREATE FUNCTION memtx.register_source(name text, authority double precision, claimants text[] DEFAULT NULL) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_register_source'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.register_source(text, double precision, text[]) IS 'harness: register or update a source, its authority (0..1) and the roles that may claim it (NULL: any)';
REVOKE ALL ON FUNCTION memtx.register_source(text, double precision, text[]) FROM PUBLIC;
-- Executable by all: the function refuses every caller but a harness itself.
GRANT EXECUTE ON FUNCTION memtx.register_source(text, double precision, text[]) TO PUBLIC;

/* ----------------------------------------------------------------------
 * §1 Records, derivation edges and the protocol predicates
 */

CREATE TABLE memtx.records (
    id             bigint NOT NULL DEFAULT pg_catalog.nextval('memtx.record_id_seq'),
    tx_id          bigint NOT NULL,
    namespace      text NOT NULL,
    entity         text NOT NULL CHECK (entity <> '' AND octet_length(entity) <= 1024),
    attribute      text NOT NULL CHECK (attribute <> '' AND octet_length(attribute) <= 1024),
    value          jsonb NOT NULL,
    kind           memtx.kind NOT NULL DEFAULT 'belief',
    state          memtx.state NOT NULL DEFAULT 'tentative',
    source         text,
    authority      double precision NOT NULL CHECK (authority >= 0 AND authority <= 1),
    confidence     double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    owner          text NOT NULL,
    readers        text[] NOT NULL DEFAULT '{}',
    writers        text[] NOT NULL DEFAULT '{}',
    scope          memtx.scope NOT NULL DEFAULT 'private',
    valid          tstzrange NOT NULL DEFAULT '(,)',
    observed_at    timestamptz,
    -- positions: (PostgreSQL xid, clock) of staging, of leaving tentative and
    -- of becoming committed; xid visibility decides "before" across backends
    staged_xid     xid8 NOT NULL,
    staged_pos     bigint NOT NULL,
    settled_xid    xid8,
    settled_pos    bigint,
    committed_xid  xid8,
    committed_seq  bigint,
    -- what memtx.commit decided for the record (its stored outcome)
    verdict        memtx.state,
    verdict_reason text,
    reason         text,
    created_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    -- §10: the predecessor the proposer saw (0: typed absence, NULL: no
    -- expectation) and the client-chosen proposal id; both are content
    expected_head  bigint CHECK (expected_head >= 0),
    proposal       text CHECK (proposal <> '' AND octet_length(proposal) <= 1024),
    -- §13: the record memtx.restore copied, and when memtx.erase removed the value
    restored_from  bigint,
    erased_at      timestamptz,
    -- §17: the agent whose proposal id this record bears (its transaction's)
    proposer       text,
    PRIMARY KEY (id, namespace),
    CONSTRAINT records_proposer_check CHECK ((proposal IS NULL) = (proposer IS NULL)),
    -- single truth: no two active records on one slot with overlapping
    -- validity and different values (slots and values compared by the
    -- SHA-256 of their text; the slot's bigint key leads, see value.c), within
    -- a namespace named as itself (a distributed table's exclusion constraint
    -- must compare its distribution column with =)
    CONSTRAINT records_single_truth EXCLUDE USING gist (
        (memtx.slot_key(namespace, entity, attribute)) WITH =,
        namespace WITH =,
        (memtx.slot_digest(namespace, entity, attribute)) WITH =,
        valid WITH &&,
        (memtx.value_digest(value)) WITH <>)
        WHERE (state = 'committed' OR state = 'action_safe')
);
COMMENT ON TABLE memtx.records IS 'memory records: governed objects with evidence, permissions, provenance, validity and lifecycle state';
-- a slot's or an entity's records, and the entities under a prefix: the entity
-- in byte order (text_pattern_ops), so that starts_with(entity, prefix) is an
-- index condition whatever the database's collation (equality is the same);
-- a slot's records in id order, so that the first of them after a given one
-- is one probe, not a read of the slot's history
CREATE INDEX records_slot_idx ON memtx.records (namespace, entity text_pattern_ops, attribute, id);
-- a slot's revoked records (a store's deletes): the last of them is one probe
CREATE INDEX records_revoked_idx ON memtx.records (namespace, entity, attribute, id) WHERE state = 'revoked';
CREATE INDEX records_tx_idx ON memtx.records (tx_id, staged_pos);
-- in flight: the gate probes a namespace, causally stable reads a slot
CREATE INDEX records_tentative_idx ON memtx.records (namespace, entity, attribute) WHERE state = 'tentative';
CREATE INDEX records_action_safe_idx ON memtx.records (namespace, id) WHERE state = 'action_safe';
-- restored copies of a record: erase reaches them, lineage walks to them (§17)
CREATE INDEX records_restored_from_idx ON memtx.records (restored_from) WHERE restored_from IS NOT NULL;
COMMENT ON COLUMN memtx.records.restored_from IS 'the record memtx.restore copied (auxiliary lineage: no derivation edge)';
COMMENT ON COLUMN memtx.records.erased_at IS 'when memtx.erase removed the value (NULL: not erased)';
REVOKE ALL ON memtx.records FROM PUBLIC;
-- Records: anyone may SELECT, row-level security shows each role what it may
-- read (owner, a member of a reader role, or public scope).
GRANT SELECT ON memtx.records TO PUBLIC;
ALTER TABLE memtx.records ENABLE ROW LEVEL SECURITY;
CREATE POLICY records_readable ON memtx.records FOR SELECT
    USING (memtx.can_read(owner, readers, scope));
SELECT pg_catalog.pg_extension_config_dump('memtx.records', '');

CREATE TABLE memtx.edges (
    child     bigint NOT NULL,
    parent    bigint NOT NULL,
    namespace text NOT NULL,
    PRIMARY KEY (child, parent, namespace),
    -- parents are older than their children, so the graph cannot cycle
    CHECK (parent < child)
);
COMMENT ON TABLE memtx.edges IS 'derived-from DAG: child was derived from parent';
CREATE INDEX edges_parent_idx ON memtx.edges (parent, child);
REVOKE ALL ON memtx.edges FROM PUBLIC;
-- Edges: visible when both ends are (the subqueries are themselves filtered).
GRANT SELECT ON memtx.edges TO PUBLIC;
ALTER TABLE memtx.edges ENABLE ROW LEVEL SECURITY;
CREATE POLICY edges_readable ON memtx.edges FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = child)
           AND EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = parent));
SELECT pg_catalog.pg_extension_config_dump('memtx.edges', '');

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

-- A record of this kind is a view of other records (summary, profile,
-- index_entry, shared_copy): a cascade quarantines it for rebuilding and
-- enters it in the revocation registry where it revokes a belief (SPEC §6).
CREATE FUNCTION memtx.is_view_kind(kind memtx.kind) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN kind = ANY ('{summary,profile,index_entry,shared_copy}'::memtx.kind[]);
COMMENT ON FUNCTION memtx.is_view_kind(memtx.kind) IS 'whether a record of this kind is a view (summary, profile, index_entry, shared_copy), which a cascade quarantines instead of revoking';

-- The head set of a slot over a validity (SPEC §10): every active record on
-- the slot whose validity overlaps it, whatever its value; a NULL validity
-- is all of time.  The slot's key and digest come first, so a probe goes
-- through the single-truth index by them: with only the slot's columns and
-- the state, the planner may read that whole partial index of active
-- records (test/sql/hot_paths.sql).  Whole rows, so a caller may leave out
-- what its rule leaves out (the candidate itself).
CREATE FUNCTION memtx.head_set(namespace text, entity text, attribute text, valid tstzrange)
    RETURNS SETOF memtx.records
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT h.* FROM memtx.records h
     WHERE memtx.slot_key(h.namespace, h.entity, h.attribute)
           = memtx.slot_key(head_set.namespace, head_set.entity, head_set.attribute)
       AND memtx.slot_digest(h.namespace, h.entity, h.attribute)
           = memtx.slot_digest(head_set.namespace, head_set.entity, head_set.attribute)
       AND h.namespace = head_set.namespace AND h.entity = head_set.entity
       AND h.attribute = head_set.attribute
       AND memtx.is_active(h.state)
       AND h.valid && coalesce(head_set.valid, '(,)'::pg_catalog.tstzrange);
END;
COMMENT ON FUNCTION memtx.head_set(text, text, text, tstzrange) IS 'the head set of a slot over a validity (NULL: all of time): its active records whose validity overlaps it';

-- The transitive ancestors of a set of records over derived_from edges, each
-- once, however many paths lead to it: one walk for the whole set (a record
-- of the set appears only as an ancestor of another).  The walk up from each
-- record stops where it meets one already found, so its cost is that of the
-- union of their ancestries, not of their sum.  Each step probes the edges'
-- index from the records found by the step before (a lateral subquery the
-- planner cannot turn into a join), whatever the caller's planner settings:
-- as a join, a planner free to hash could scan every edge at every step.
-- Callers pass the set as an array value (a parameter, or a column of a row
-- before it, as "FROM s, memtx.descendants_of(s.ids)"), not as
-- ARRAY(SELECT ...) among the arguments: the planner inlines no function
-- with a subquery among its arguments.
CREATE FUNCTION memtx.ancestors_of(records bigint[]) RETURNS SETOF bigint
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    WITH RECURSIVE anc(id) AS (
        SELECT e.parent FROM memtx.edges e WHERE e.child = ANY (ancestors_of.records)
        UNION
        SELECT p.parent FROM anc CROSS JOIN LATERAL (
            SELECT e.parent FROM memtx.edges e WHERE e.child = anc.id OFFSET 0) p)
    SELECT anc.id FROM anc;
END;
COMMENT ON FUNCTION memtx.ancestors_of(bigint[]) IS 'the transitive ancestors of any of the records (derived_from), each once, in one walk';

-- The transitive descendants of a set of records, each once, in one walk
-- (probing the edges' index as ancestors_of does).
CREATE FUNCTION memtx.descendants_of(records bigint[]) RETURNS SETOF bigint
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    WITH RECURSIVE d(id) AS (
        SELECT e.child FROM memtx.edges e WHERE e.parent = ANY (descendants_of.records)
        UNION
        SELECT c.child FROM d CROSS JOIN LATERAL (
            SELECT e.child FROM memtx.edges e WHERE e.parent = d.id OFFSET 0) c)
    SELECT d.id FROM d;
END;
COMMENT ON FUNCTION memtx.descendants_of(bigint[]) IS 'the transitive descendants of any of the records, each once, in one walk';

-- The transitive ancestors of one record, without the record itself.
CREATE FUNCTION memtx.ancestors(record bigint) RETURNS SETOF bigint
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT a.id FROM memtx.ancestors_of(ARRAY[ancestors.record]) a(id);
END;
COMMENT ON FUNCTION memtx.ancestors(bigint) IS 'the transitive ancestors of a record (derived_from, without the record itself), each once';

-- The transitive descendants of one record, without the record itself.
CREATE FUNCTION memtx.descendants(record bigint) RETURNS SETOF bigint
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT d.id FROM memtx.descendants_of(ARRAY[descendants.record]) d(id);
END;
COMMENT ON FUNCTION memtx.descendants(bigint) IS 'the transitive descendants of a record (without the record itself), each once';

/* ----------------------------------------------------------------------
 * §1 Lifecycle (§16: immutable content)
 */

CREATE FUNCTION memtx.legal_transition(from_state memtx.state, to_state memtx.state) RETURNS boolean
    AS 'MODULE_PATHNAME', 'memtx_legal_transition'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION memtx.legal_transition(memtx.state, memtx.state) IS 'whether the lifecycle allows moving a record from one state to another';

-- The lifecycle trigger guards memtx.records only: it refuses to run on any
-- other table, and nobody may attach it to one of their own.  No GRANT: a
-- trigger fires whatever the privileges of the role whose UPDATE fires it.
CREATE FUNCTION memtx.lifecycle_guard() RETURNS trigger
    AS 'MODULE_PATHNAME', 'memtx_lifecycle_guard'
    LANGUAGE C;
COMMENT ON FUNCTION memtx.lifecycle_guard() IS 'trigger of memtx.records only: refuses lifecycle moves outside the legal transition relation and changes to a record''s content after staging';
REVOKE EXECUTE ON FUNCTION memtx.lifecycle_guard() FROM PUBLIC;
CREATE TRIGGER records_lifecycle BEFORE UPDATE ON memtx.records
    FOR EACH ROW EXECUTE FUNCTION memtx.lifecycle_guard();

/* ----------------------------------------------------------------------
 * §3 Transactions, snapshots, isolation (§12: the writer epoch)
 */

CREATE TABLE memtx.transactions (
    id               bigint NOT NULL DEFAULT pg_catalog.nextval('memtx.transaction_id_seq'),
    agent            text NOT NULL,
    tier             memtx.risk_tier NOT NULL,
    isolation        memtx.isolation NOT NULL,
    namespace        text NOT NULL,
    -- the snapshot: PostgreSQL's snapshot at begin, the begin's own xid and
    -- clock position (for records committed earlier in the same SQL transaction)
    snapshot         pg_snapshot NOT NULL,
    snapshot_xid     xid8 NOT NULL,
    snapshot_seq     bigint NOT NULL,
    status           memtx.tx_status NOT NULL DEFAULT 'open',
    verifier_calls   integer NOT NULL DEFAULT 0,
    opened_at        timestamptz NOT NULL DEFAULT pg_catalog.now(),
    lease_expires_at timestamptz NOT NULL,
    ended_at         timestamptz,
    end_reason       text,
    epoch            bigint NOT NULL DEFAULT 0 CHECK (epoch >= 0),
    PRIMARY KEY (id, namespace)
);
COMMENT ON TABLE memtx.transactions IS 'memtx transactions: one agent turn each, with its snapshot and status';
-- open transactions (expiry scans these); the lease itself is not indexed, so
-- renewing it is a HOT update
CREATE INDEX transactions_open_idx ON memtx.transactions (id) WHERE status = 'open';
COMMENT ON COLUMN memtx.transactions.epoch IS 'the writer epoch of the agent when the transaction began (SPEC §12)';
REVOKE ALL ON memtx.transactions FROM PUBLIC;
-- Transactions: each agent sees its own.
GRANT SELECT ON memtx.transactions TO PUBLIC;
ALTER TABLE memtx.transactions ENABLE ROW LEVEL SECURITY;
CREATE POLICY transactions_own ON memtx.transactions FOR SELECT
    USING (memtx.can_read(agent, NULL, NULL));
SELECT pg_catalog.pg_extension_config_dump('memtx.transactions', '');

-- A transaction counts as expired when its lease ran out, or when it was
-- open across a crash that may have lost reads of it that rolled back (§17
-- "The durable read set survives restarts", src/readset.c): the first memtx
-- call on the writable server after such a start fixes the transaction id
-- before which that is so, memtx.read_set_lost_before() (NULL: no crash
-- since the store's reads were kept).  Defined once: every call on a
-- transaction, expire_transactions and the worker use memtx.lease_expired.
CREATE FUNCTION memtx.read_set_lost_before() RETURNS xid8
    AS 'MODULE_PATHNAME', 'memtx_read_set_lost_before'
    LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION memtx.read_set_lost_before() IS 'the transaction id before which open memtx transactions may have lost reads in a crash, so they count as expired (NULL: none)';
CREATE FUNCTION memtx.lease_expired(lease_expires_at timestamptz, snapshot_xid xid8) RETURNS boolean
    LANGUAGE sql VOLATILE PARALLEL RESTRICTED
    RETURN lease_expires_at < pg_catalog.clock_timestamp()
        OR coalesce(snapshot_xid < memtx.read_set_lost_before(), false);
COMMENT ON FUNCTION memtx.lease_expired(timestamptz, xid8) IS 'whether an open transaction counts as expired: its lease ran out, or it was open across a crash that may have lost its reads';

-- The shared buffer of reads not yet durable (§17 "No tenant can starve
-- another"): its lost reads, the reads sessions hold in SQL transactions
-- that have not ended, the common pool and its use, the units reserved for
-- every session, this session's use, and the lost reads of this database's
-- store.  Harness: the counts are the whole cluster's.
CREATE FUNCTION memtx.read_set_usage(OUT lost_reads bigint, OUT pending_reads bigint, OUT common_pool integer,
                                     OUT common_used integer, OUT reserved_per_session integer,
                                     OUT session_used integer, OUT store_lost_reads bigint)
    AS 'MODULE_PATHNAME', 'memtx_read_set_usage'
    LANGUAGE C VOLATILE PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION memtx.read_set_usage() IS 'harness: the shared read-set buffer (lost reads, reads held by sessions, the common pool and its use, the units reserved per session), this session''s use of it and the lost reads of this database''s store';
REVOKE ALL ON FUNCTION memtx.read_set_usage() FROM PUBLIC;
-- Executable by all: the function refuses every caller but a harness itself.
GRANT EXECUTE ON FUNCTION memtx.read_set_usage() TO PUBLIC;

CREATE TABLE memtx.role_tiers (
    role_name text PRIMARY KEY CHECK (role_name <> ''),
    tier      memtx.risk_tier NOT NULL
);
COMMENT ON TABLE memtx.role_tiers IS 'risk tier given to transactions begun by each role';
REVOKE ALL ON memtx.role_tiers FROM PUBLIC;
-- Registries are configuration, readable by all, written by harness functions.
GRANT SELECT ON memtx.role_tiers TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('memtx.role_tiers', '');

CREATE FUNCTION memtx.set_role_tier(role text, tier memtx.risk_tier) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_set_role_tier'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.set_role_tier(text, memtx.risk_tier) IS 'harness: the risk tier given to transactions begun by a role (NULL tier removes it)';

-- Every API function is C, runs as the calling role for permission decisions
-- and as the extension owner for table access, and pins search_path.  JIT is
-- off inside them: their queries are short index probes whose recursive
-- walks the planner overestimates, and compiling them would cost far more
-- than running them.  For the same reason the protocol functions plan with
-- hash and merge joins off: a walk of a record's ancestry or descendants must
-- be index nested loops, whose cost follows the walk, never a join that reads
-- the whole store (check_invariants, an audit, keeps them for its scans of
-- whole tables and turns them off for its walks).  Sequential scans
-- are off as well: every statement of these functions is a probe by key, and
-- a plan made while a table was small (a fresh install, a store loaded in
-- bulk) would otherwise keep scanning it whole as it grows, until the next
-- ANALYZE invalidates the plan.  This reaches the foreign-key checks too,
-- whose plans are made inside these functions.  The calls that touch one
-- transaction's few records also turn bitmap scans off: a generic plan
-- expecting many rows per transaction would AND the transaction's index with
-- the in-flight index and read every record in flight.

CREATE FUNCTION memtx.begin(tier memtx.risk_tier DEFAULT NULL, agent text DEFAULT NULL,
                            namespace text DEFAULT 'default', isolation memtx.isolation DEFAULT NULL)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'memtx_begin'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.begin(memtx.risk_tier, text, text, memtx.isolation) IS 'open a memtx transaction and capture its snapshot; tier, agent and isolation are for harnesses';

-- The records each transaction has read through memtx.read or recall, kept
-- for flow control (§4 3c).  Written in volume on hot paths, like the
-- rollback log: no foreign keys (see "References between tables" below).
CREATE TABLE memtx.read_set (
    tx_id     bigint NOT NULL,
    record_id bigint NOT NULL,
    namespace text NOT NULL,
    PRIMARY KEY (tx_id, record_id, namespace)
);
COMMENT ON TABLE memtx.read_set IS 'records each transaction has read through memtx.read';
REVOKE ALL ON memtx.read_set FROM PUBLIC;
-- Read sets: visible with their transaction.
GRANT SELECT ON memtx.read_set TO PUBLIC;
ALTER TABLE memtx.read_set ENABLE ROW LEVEL SECURITY;
CREATE POLICY read_set_own ON memtx.read_set FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.transactions t WHERE t.id = tx_id));
SELECT pg_catalog.pg_extension_config_dump('memtx.read_set', '');

CREATE FUNCTION memtx.read(tx bigint, entity text DEFAULT NULL, attribute text DEFAULT NULL)
    RETURNS SETOF memtx.records
    AS 'MODULE_PATHNAME', 'memtx_read'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.read(bigint, text, text) IS 'records visible to the transaction at its isolation level (a slot, an entity, or the namespace); adds them to its read set';

CREATE FUNCTION memtx.happened_before(xid xid8, pos bigint, snapshot pg_snapshot, snapshot_xid xid8, snapshot_pos bigint)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'memtx_happened_before'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION memtx.happened_before(xid8, bigint, pg_snapshot, xid8, bigint) IS 'whether an event at (xid, pos) precedes a snapshot taken at (snapshot_xid, snapshot_pos)';

-- Expiry by namespace: a namespace whose lock is held (a writer idle in its
-- SQL transaction) is skipped after lock_timeout, so expiry keeps its promise
-- in every other namespace; the worker expires each namespace in its own SQL
-- transaction.
CREATE FUNCTION memtx.expire_transactions(namespace text DEFAULT NULL)
    RETURNS SETOF bigint
    AS 'MODULE_PATHNAME', 'memtx_expire_transactions'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
COMMENT ON FUNCTION memtx.expire_transactions(text) IS 'harness: abort (reason expired) every open transaction (of the namespace, when given) whose lease ran out; skips a namespace whose lock is not had within lock_timeout; returns the ids it expired';

/* ----------------------------------------------------------------------
 * §16 Namespaces are tenancy
 */

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

-- Namespaces are tenancy for reads too (§17): the reads without a
-- transaction answer a namespace other than default only to its members and
-- harnesses.  The check for the reads written in SQL (read_as_of); the C
-- ones make it themselves.
CREATE FUNCTION memtx.require_namespace_reader(namespace text) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_require_namespace_reader'
    LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION memtx.require_namespace_reader(text) IS 'raises 42501 unless the calling role may read the namespace (default, a member, or a harness)';
REVOKE ALL ON FUNCTION memtx.require_namespace_reader(text) FROM PUBLIC;
-- Anyone may ask about themselves; it reveals no more than begin does.
GRANT EXECUTE ON FUNCTION memtx.require_namespace_reader(text) TO PUBLIC;

/* ----------------------------------------------------------------------
 * §4 Staging and the commit pipeline (§10: expected head and proposal id)
 */

-- Named arguments are the documented calling style.  expected_head and
-- proposal (§10) come last; the C function reads them only when the
-- caller's signature has them (a library newer than the catalog).
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

CREATE FUNCTION memtx.commit(tx bigint)
    RETURNS TABLE (record_id bigint, state memtx.state, reason text)
    AS 'MODULE_PATHNAME', 'memtx_commit'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.commit(bigint) IS 'admit staged records through the four-check pipeline; idempotent (a repeat returns the stored outcome)';

CREATE FUNCTION memtx.resolve(record bigint, accept boolean)
    RETURNS memtx.state
    AS 'MODULE_PATHNAME', 'memtx_resolve'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
COMMENT ON FUNCTION memtx.resolve(bigint, boolean) IS 'harness: settle a needs_review record (accept commits it and supersedes its rivals; reject revokes it with cascade); returns its new state';

/* ----------------------------------------------------------------------
 * §5 Action gate
 */

CREATE TABLE memtx.tools (
    name          text PRIMARY KEY CHECK (name <> '' AND octet_length(name) <= 256),
    reversible    boolean NOT NULL,
    compensator   text CHECK (compensator IS NULL OR compensator <> ''),
    registered_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE memtx.tools IS 'tool registry: reversibility and compensator of each tool; unregistered tools are irreversible';
REVOKE ALL ON memtx.tools FROM PUBLIC;
-- Registries are configuration, readable by all, written by harness functions.
GRANT SELECT ON memtx.tools TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('memtx.tools', '');

CREATE FUNCTION memtx.register_tool(name text, reversible boolean, compensator text DEFAULT NULL) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_register_tool'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.register_tool(text, boolean, text) IS 'harness: register or update a tool, its reversibility and compensator';

CREATE TABLE memtx.action_log (
    id            bigint NOT NULL DEFAULT pg_catalog.nextval('memtx.action_log_id_seq'),
    tx_id         bigint NOT NULL,
    namespace     text NOT NULL,
    tool          text NOT NULL,
    reversible    boolean NOT NULL,
    args          jsonb,
    inputs        bigint[] NOT NULL DEFAULT '{}',
    allowed       boolean NOT NULL,
    reason        text,
    blockers      bigint[] NOT NULL DEFAULT '{}',
    action_id     bigint,
    effect_key    text,
    -- what the gate saw: its snapshot, xid and clock position
    gate_snapshot pg_snapshot NOT NULL,
    gate_xid      xid8 NOT NULL,
    gate_pos      bigint NOT NULL,
    logged_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (id, namespace)
);
COMMENT ON TABLE memtx.action_log IS 'every gated tool call: allowed or blocked, with reason, blockers and what the gate saw';
CREATE UNIQUE INDEX action_log_effect_key_idx ON memtx.action_log (namespace, effect_key)
    WHERE allowed AND effect_key IS NOT NULL;
CREATE INDEX action_log_tx_idx ON memtx.action_log (tx_id);
CREATE INDEX action_log_action_idx ON memtx.action_log (action_id);
REVOKE ALL ON memtx.action_log FROM PUBLIC;
-- The action log: visible with its transaction.
GRANT SELECT ON memtx.action_log TO PUBLIC;
ALTER TABLE memtx.action_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY action_log_own ON memtx.action_log FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.transactions t WHERE t.id = tx_id));
SELECT pg_catalog.pg_extension_config_dump('memtx.action_log', '');

CREATE FUNCTION memtx.gate(tx bigint, tool text, OUT allowed boolean, OUT reason text, OUT blockers bigint[])
    AS 'MODULE_PATHNAME', 'memtx_gate'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.gate(bigint, text) IS 'whether the transaction may call the tool now; a probe that records nothing';

CREATE FUNCTION memtx.act(tx bigint, tool text, args jsonb, derived_from bigint[] DEFAULT '{}',
                          effect_key text DEFAULT NULL,
                          OUT allowed boolean, OUT reason text, OUT action_id bigint, OUT blockers bigint[],
                          OUT repeated boolean)
    AS 'MODULE_PATHNAME', 'memtx_act'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.act(bigint, text, jsonb, bigint[], text) IS 'gate a tool call with its declared inputs; an allowed call is recorded as a committed tool_action record, every call in the action log; repeated: the stored decision of an effect key''s first call was returned';
REVOKE ALL ON FUNCTION memtx.act(bigint, text, jsonb, bigint[], text) FROM PUBLIC;
-- An agent's API: the function checks the transaction's agent itself.
GRANT EXECUTE ON FUNCTION memtx.act(bigint, text, jsonb, bigint[], text) TO PUBLIC;

/* ----------------------------------------------------------------------
 * §6 Retraction and typed cascade repair
 */

CREATE TABLE memtx.revocation_registry (
    record_id     bigint NOT NULL,
    root_id       bigint NOT NULL,
    registered_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    namespace     text NOT NULL,
    PRIMARY KEY (record_id, namespace)
);
COMMENT ON TABLE memtx.revocation_registry IS 'views quarantined by a cascade, waiting to be rebuilt';
REVOKE ALL ON memtx.revocation_registry FROM PUBLIC;
-- Repair records: visible with the record they concern.
GRANT SELECT ON memtx.revocation_registry TO PUBLIC;
ALTER TABLE memtx.revocation_registry ENABLE ROW LEVEL SECURITY;
CREATE POLICY revocation_registry_readable ON memtx.revocation_registry FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = record_id));
SELECT pg_catalog.pg_extension_config_dump('memtx.revocation_registry', '');

-- The retracted records (SPEC §4 3a, §8, §16): those revoked and those in
-- the revocation registry (views a cascade quarantined), with their
-- namespace; a record revoked after it was registered appears twice.  A
-- view, so the rewriter writes its text into each query that names it and
-- the planner pushes a probe by id into both arms (two index probes), as if
-- the union were spelled out.  As the invoker, under the tables' row-level
-- security.
CREATE VIEW memtx.retracted WITH (security_invoker = true) AS
    SELECT r.id, r.namespace FROM memtx.records r WHERE r.state = 'revoked'
    UNION ALL
    SELECT rr.record_id, rr.namespace FROM memtx.revocation_registry rr;
COMMENT ON VIEW memtx.retracted IS 'the retracted records: revoked, or in the revocation registry (a record may appear twice)';
REVOKE ALL ON memtx.retracted FROM PUBLIC;
GRANT SELECT ON memtx.retracted TO PUBLIC;

CREATE TABLE memtx.rollback_log (
    id        bigint NOT NULL DEFAULT pg_catalog.nextval('memtx.rollback_log_id_seq'),
    root_id   bigint NOT NULL,
    record_id bigint NOT NULL,
    kind      memtx.kind NOT NULL,
    action    text NOT NULL CHECK (action IN ('revoked', 'quarantined', 'compensated', 'leaked')),
    reason    text NOT NULL,
    note      text,
    pos       bigint NOT NULL,
    logged_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    namespace text NOT NULL,
    PRIMARY KEY (id, namespace)
);
COMMENT ON TABLE memtx.rollback_log IS 'one row per retraction root and per repaired descendant';
CREATE INDEX rollback_log_root_idx ON memtx.rollback_log (root_id);
CREATE INDEX rollback_log_record_idx ON memtx.rollback_log (record_id);
REVOKE ALL ON memtx.rollback_log FROM PUBLIC;
-- Repair records: visible with the record they concern.
GRANT SELECT ON memtx.rollback_log TO PUBLIC;
ALTER TABLE memtx.rollback_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY rollback_log_readable ON memtx.rollback_log FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = record_id));
SELECT pg_catalog.pg_extension_config_dump('memtx.rollback_log', '');

CREATE TABLE memtx.compensations (
    id          bigint NOT NULL DEFAULT pg_catalog.nextval('memtx.compensation_id_seq'),
    root_id     bigint NOT NULL,
    action_id   bigint NOT NULL,
    tool        text NOT NULL,
    compensator text,
    args        jsonb,
    status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
    created_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    namespace   text NOT NULL,
    PRIMARY KEY (id, namespace)
);
COMMENT ON TABLE memtx.compensations IS 'compensation obligations for reversible tool actions whose inputs were retracted';
REVOKE ALL ON memtx.compensations FROM PUBLIC;
-- Compensations: visible with the action they undo.
GRANT SELECT ON memtx.compensations TO PUBLIC;
ALTER TABLE memtx.compensations ENABLE ROW LEVEL SECURITY;
CREATE POLICY compensations_readable ON memtx.compensations FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = action_id));
SELECT pg_catalog.pg_extension_config_dump('memtx.compensations', '');

CREATE FUNCTION memtx.abort(tx bigint)
    RETURNS SETOF memtx.rollback_log
    AS 'MODULE_PATHNAME', 'memtx_abort'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.abort(bigint) IS 'abort an open transaction: revoke its staging (reason aborted) and repair descendants; returns the log rows written';

CREATE FUNCTION memtx.revoke(record bigint, note text DEFAULT NULL)
    RETURNS SETOF memtx.rollback_log
    AS 'MODULE_PATHNAME', 'memtx_revoke'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
COMMENT ON FUNCTION memtx.revoke(bigint, text) IS 'retract a record and repair every descendant by kind; owner or harness; returns the log rows written';

/* ----------------------------------------------------------------------
 * §8 Invariants and the checker
 */

-- The invariants memtx.check_invariants recomputes, one row each: the code
-- its rows carry in column invariant, the invariant's name, the SPEC
-- section that states it and what it holds.  SPEC §8 names I1, I2 and G3 by
-- code; the others are numbered on from them the same way (a letter and the
-- next number), so every code is short, stable and unique, and a row of
-- check_invariants joins to this view on invariant = code.
CREATE VIEW memtx.invariants (code, name, spec_section, description) AS VALUES
    ('I1', 'action-safety gating', '§5, §8',
     'every allowed irreversible action was allowed under §5 at the moment it was recorded: no record the gate''s snapshot could see was still unsettled in it, and the logged gate saw no blockers'),
    ('I2', 'cascade-repair completeness', '§6, §8',
     'no transitive descendant of a retracted record is active, or tentative since before the retraction; every view quarantined by a cascade is in the registry; every tool_action descendant carries a compensated or leaked entry'),
    ('G3', 'no active record with a retracted ancestor', '§8',
     'no active record has a revoked, or registry-listed, transitive ancestor'),
    ('I4', 'single truth', '§4, §8',
     'no two active records share a slot with overlapping validity and different values'),
    ('I5', 'no commit by a fenced epoch', '§12',
     'no record of a transaction opened under a writer epoch became committed after the fence that ended that epoch'),
    ('I6', 'one receipt per disposition', '§11',
     'every terminal disposition the store records (memtx.dispositions) has exactly one receipt, and no receipt names a disposition the store does not record'),
    ('I7', 'the receipt chain verifies', '§11, §17',
     'each namespace''s chained receipts verify (links, hashes, columns, subjects, digests), and so do the record states they anchor and every erasure, as memtx.verify_receipts judges them'),
    ('I8', 'a proposal id is bound once', '§10, §17',
     'no agent''s proposal id is bound to two records of a namespace');
COMMENT ON VIEW memtx.invariants IS 'the invariants check_invariants recomputes: code (its column invariant), name, SPEC section, description';
GRANT SELECT ON memtx.invariants TO PUBLIC;

-- Given a namespace, that namespace's records, actions, retractions and
-- receipts only (SPEC §17); NULL, every namespace.
CREATE FUNCTION memtx.check_invariants(namespace text DEFAULT NULL)
    RETURNS TABLE (invariant text, record_id bigint, detail text)
    AS 'MODULE_PATHNAME', 'memtx_check_invariants'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.check_invariants(text) IS 'harness: recompute every invariant of memtx.invariants (I1, I2, G3, I4 to I8) from the records, edges, action log and receipts, of one namespace or (NULL) all; one row per violation, its invariant a code of memtx.invariants; no rows when all hold';

/* ----------------------------------------------------------------------
 * §9 Observability
 */

CREATE FUNCTION memtx.lineage(record bigint, direction text DEFAULT 'down')
    RETURNS TABLE (record_id bigint, depth integer, parent_ids bigint[], kind memtx.kind,
                   state memtx.state, entity text, attribute text, value jsonb, via text)
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp SET jit = off
AS $$
BEGIN
    IF record IS NULL THEN
        RAISE EXCEPTION 'record id must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF direction IS NULL OR direction NOT IN ('down', 'up') THEN
        RAISE EXCEPTION 'direction must be ''down'' or ''up'', got %', coalesce(quote_literal(direction), 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = record) THEN
        RAISE EXCEPTION 'record % does not exist', record USING ERRCODE = 'undefined_object';
    END IF;
    -- Two kinds of step (§17): a derivation edge, and restored_from (down: the
    -- copies memtx.restore made of a record; up: the record a copy was made
    -- of).  Both lead to older records going up, so the walk ends.
    RETURN QUERY
    WITH RECURSIVE walk(id, depth, via) AS (
        SELECT record, 0, NULL::text
        UNION
        SELECT n.id, w.depth + 1, n.via
          FROM walk w CROSS JOIN LATERAL (
              SELECT e.child, 'derived_from' FROM memtx.edges e WHERE direction = 'down' AND e.parent = w.id
              UNION ALL
              SELECT e.parent, 'derived_from' FROM memtx.edges e WHERE direction = 'up' AND e.child = w.id
              UNION ALL
              SELECT c.id, 'restored_from' FROM memtx.records c WHERE direction = 'down' AND c.restored_from = w.id
              UNION ALL
              SELECT o.restored_from, 'restored_from' FROM memtx.records o
               WHERE direction = 'up' AND o.id = w.id AND o.restored_from IS NOT NULL) n(id, via)
    ), nodes AS (
        -- each record once, at its shortest depth; derived_from when both steps reach it there
        SELECT DISTINCT ON (w.id) w.id, w.depth, w.via FROM walk w ORDER BY w.id, w.depth, w.via
    )
    SELECT n.id, n.depth,
           ARRAY(SELECT e.parent FROM memtx.edges e WHERE e.child = n.id ORDER BY e.parent),
           r.kind, r.state, r.entity, r.attribute, r.value, n.via
      FROM nodes n JOIN memtx.records r ON r.id = n.id
     ORDER BY n.depth, n.id;
END
$$;
COMMENT ON FUNCTION memtx.lineage(bigint, text) IS 'walk the derived-from DAG and restored copies from a record, down to its descendants and copies or up to its ancestors and originals; each record once, at its shortest depth, with how it was reached (via: derived_from or restored_from)';

CREATE FUNCTION memtx.lineage_dot(record bigint)
    RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp SET jit = off
BEGIN ATOMIC
    WITH nodes AS (
        SELECT l.record_id, l.kind, l.state, l.entity, l.attribute FROM memtx.lineage(record, 'up') l
        UNION
        SELECT l.record_id, l.kind, l.state, l.entity, l.attribute FROM memtx.lineage(record, 'down') l
    )
    SELECT E'digraph lineage {\n  rankdir=LR;\n'
        || coalesce((SELECT string_agg(format(E'  r%s [label=%s%s];\n', n.record_id,
                        to_json(format(E'#%s %s (%s)\n%s.%s', n.record_id, n.kind, n.state, n.entity, n.attribute)),
                        CASE WHEN n.record_id = record THEN ', style=bold' ELSE '' END),
                        '' ORDER BY n.record_id) FROM nodes n), '')
        || coalesce((SELECT string_agg(format(E'  r%s -> r%s;\n', e.parent, e.child), '' ORDER BY e.parent, e.child)
                       FROM memtx.edges e
                      WHERE e.child IN (SELECT record_id FROM nodes)
                        AND e.parent IN (SELECT record_id FROM nodes)), '')
        || coalesce((SELECT string_agg(format(E'  r%s -> r%s [style=dashed, label="restored_from"];\n', c.restored_from, c.id),
                                       '' ORDER BY c.restored_from, c.id)
                       FROM memtx.records c
                      WHERE c.id IN (SELECT record_id FROM nodes)
                        AND c.restored_from IN (SELECT record_id FROM nodes)), '')
        || '}';
END;
COMMENT ON FUNCTION memtx.lineage_dot(bigint) IS 'the lineage of a record (ancestors, descendants, originals and restored copies) as Graphviz DOT; restored copies on dashed edges';

CREATE VIEW memtx.in_flight AS
    SELECT r.id AS record_id, r.tx_id, r.namespace, r.entity, r.attribute, r.created_at AS staged_at
      FROM memtx.records r
     WHERE r.state = 'tentative';
COMMENT ON VIEW memtx.in_flight IS 'tentative records: what the action gate waits for';
REVOKE ALL ON memtx.in_flight FROM PUBLIC;

-- Records quarantined for review with their rivals (the one rival predicate).
CREATE VIEW memtx.review_queue AS
    SELECT c.id AS record_id, c.tx_id, c.namespace, c.entity, c.attribute, c.value,
           ARRAY(SELECT r.id FROM memtx.records r
                  WHERE memtx.is_active(r.state)
                    AND memtx.rivals(c.namespace, c.entity, c.attribute, c.valid, c.value,
                                     r.namespace, r.entity, r.attribute, r.valid, r.value)
                  ORDER BY r.id) AS rival_ids
      FROM memtx.records c
     WHERE c.state = 'quarantined' AND c.reason = 'needs_review';
COMMENT ON VIEW memtx.review_queue IS 'records quarantined for review, with the active rivals they contest';
REVOKE ALL ON memtx.review_queue FROM PUBLIC;
-- Views over records apply the reader's row-level security.
ALTER VIEW memtx.in_flight SET (security_invoker = true);
ALTER VIEW memtx.review_queue SET (security_invoker = true);
GRANT SELECT ON memtx.in_flight, memtx.review_queue TO PUBLIC;

-- Protocol counters; commits counted with the one definition of active.  Each
-- column says what it counts (its comment); columns added later go at the end.
CREATE VIEW memtx.stats AS
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
           (SELECT count(*) FROM memtx.records WHERE state = 'tentative') AS in_flight,
           (SELECT count(*) FROM memtx.records WHERE verdict = 'quarantined') AS commit_quarantines,
           (SELECT count(*) FROM memtx.rollback_log WHERE action = 'quarantined') AS cascade_quarantines,
           (SELECT count(*) FROM memtx.rollback_log
             WHERE action = 'revoked' AND record_id <> root_id) AS cascade_revocations;
COMMENT ON VIEW memtx.stats IS 'protocol counters: commit verdicts, commit quarantines by reason, verifier calls, gate decisions, retractions and what their cascades repaired';
COMMENT ON COLUMN memtx.stats.transactions IS 'memtx transactions begun';
COMMENT ON COLUMN memtx.stats.open_transactions IS 'memtx transactions open now';
COMMENT ON COLUMN memtx.stats.commits IS 'records the commit pipeline committed (verdict committed or action_safe; tool actions not counted), whatever became of them later';
COMMENT ON COLUMN memtx.stats.quarantines IS 'records the commit pipeline quarantined (commit verdicts); the same as commit_quarantines, kept under its first name; a cascade''s quarantines are cascade_quarantines';
COMMENT ON COLUMN memtx.stats.quarantines_by_reason IS 'commit_quarantines by reason code, as a JSON object';
COMMENT ON COLUMN memtx.stats.verifier_calls IS 'records that reached slot adjudication (check 3d) with at least one rival';
COMMENT ON COLUMN memtx.stats.actions_allowed IS 'act calls the gate allowed (effect-key repeats not counted)';
COMMENT ON COLUMN memtx.stats.gate_blocks IS 'act calls the gate or the input checks blocked';
COMMENT ON COLUMN memtx.stats.cascades IS 'retraction roots: records revoked by abort (one per staged record), expiry, fence, revoke, a rejecting resolve or erase, and records quarantined at commit with tool actions below them';
COMMENT ON COLUMN memtx.stats.leaks IS 'irreversible tool actions reported leaked by a repair';
COMMENT ON COLUMN memtx.stats.compensations IS 'compensation obligations recorded for reversible tool actions';
COMMENT ON COLUMN memtx.stats.in_flight IS 'tentative records now';
COMMENT ON COLUMN memtx.stats.commit_quarantines IS 'records the commit pipeline quarantined (commit verdicts, whatever became of them later)';
COMMENT ON COLUMN memtx.stats.cascade_quarantines IS 'views (summary, profile, index_entry, shared_copy) a cascade quarantined for rebuilding';
COMMENT ON COLUMN memtx.stats.cascade_revocations IS 'descendants a cascade revoked (roots not counted)';
REVOKE ALL ON memtx.stats FROM PUBLIC;
-- Counters are global and reveal no record.
GRANT SELECT ON memtx.stats TO PUBLIC;

/* ----------------------------------------------------------------------
 * §10 Proposals: exact head and one disposition per proposal
 */

-- expected_head is the predecessor the proposer saw (0: typed absence, NULL:
-- no expectation); proposal is a client-chosen id, bound forever to the first
-- record its agent (proposer, the staging transaction's agent) staged under
-- it in its namespace (§17: another agent's use of the string is another
-- proposal).  All are content: the lifecycle trigger keeps them fixed after
-- staging like every column it does not list.
CREATE UNIQUE INDEX records_proposal_idx ON memtx.records (namespace, proposer, proposal) WHERE proposal IS NOT NULL;

CREATE FUNCTION memtx.outcome(proposal text, namespace text DEFAULT 'default', agent text DEFAULT NULL)
    RETURNS TABLE (record_id bigint, tx_id bigint, state memtx.state, reason text, tx_status text)
    AS 'MODULE_PATHNAME', 'memtx_outcome'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.outcome(text, text, text) IS 'the disposition of the calling role''s proposal (a harness names the agent): record, transaction, current state and reason, transaction status; no row when the id is unknown or the record not readable by the caller; namespace members only; writes nothing';
REVOKE ALL ON FUNCTION memtx.outcome(text, text, text) FROM PUBLIC;
-- Anyone's read: it answers only about the caller's own proposals (a
-- harness's about any agent's), of records the calling role may read.
GRANT EXECUTE ON FUNCTION memtx.outcome(text, text, text) TO PUBLIC;

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

/* ----------------------------------------------------------------------
 * §11 Receipts
 */

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

/*
 * Receipts anchor states (SPEC §17): a record's state is a function of the
 * receipts that name it, so a receipt lists every record whose state it set
 * (a commit: its record, the rivals it superseded, and the repairs its
 * quarantine made; a retraction: every record it repaired, with the views
 * it quarantined; an act: the tool action it recorded).  Receipts written
 * before 0.3.0 did not list a commit's repairs nor tell a cascade's
 * quarantined views from its revoked records; the upgrade to 0.3.0 keeps
 * here, for each namespace the store had then, the clock position at the
 * upgrade: records staged up to it, and states last settled by such
 * receipts, are checked only as far as those receipts allow.  A namespace
 * without a row (every one of a store created at 0.3.0 or later) is held to
 * the full rule from its first receipt.
 */
CREATE TABLE memtx.receipt_anchoring (
    namespace   text PRIMARY KEY,
    upgrade_pos bigint NOT NULL
);
COMMENT ON TABLE memtx.receipt_anchoring IS 'namespaces whose receipts began before 0.3.0 (SPEC §17): the clock position at the upgrade, up to which records may have changed state without a receipt that lists them';

REVOKE ALL ON memtx.receipts, memtx.receipt_heads, memtx.record_salts, memtx.receipt_anchoring FROM PUBLIC;
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
SELECT pg_catalog.pg_extension_config_dump('memtx.receipt_anchoring', '');
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
-- The record ids of a list in a receipt's body (superseded, repaired,
-- quarantined), defined once for the audits; anything but an array of
-- numbers lists none (receipt_problems reports such a body).
CREATE FUNCTION memtx.receipt_ids(list jsonb) RETURNS SETOF bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT x.v::bigint
      FROM pg_catalog.jsonb_array_elements(CASE WHEN pg_catalog.jsonb_typeof(receipt_ids.list) = 'array'
                                                THEN receipt_ids.list END) x(v)
     WHERE pg_catalog.jsonb_typeof(x.v) = 'number';
END;
COMMENT ON FUNCTION memtx.receipt_ids(jsonb) IS 'the record ids of a list in a receipt body (superseded, repaired, quarantined)';
REVOKE ALL ON FUNCTION memtx.receipt_ids(jsonb) FROM PUBLIC;

CREATE FUNCTION memtx.receipt_columns(namespace text, seq bigint, kind text, subject bigint,
                                      disposition text, reason text, at timestamptz) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    RETURN pg_catalog.jsonb_build_object('namespace', namespace, 'seq', seq, 'kind', kind,
               'subject', subject, 'disposition', disposition, 'reason', reason,
               'at', pg_catalog.to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'));
COMMENT ON FUNCTION memtx.receipt_columns(text, bigint, text, bigint, text, text, timestamptz) IS 'the columns of a receipt as its body repeats them (time in UTC)';
REVOKE ALL ON FUNCTION memtx.receipt_columns(text, bigint, text, bigint, text, text, timestamptz) FROM PUBLIC;

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

/* ----------------------------------------------------------------------
 * §12 Writer fencing
 */

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

/* ----------------------------------------------------------------------
 * §13 History, as-of reads, restore and erasure
 */

/*
 * memtx.history keeps every state change of a record from its staging on:
 * the state and reason it moved to, memtx.now() at the move and a position
 * in the one global order (memtx.clock).  Two statement-level triggers on
 * memtx.records write it, so every path that changes a state — the API's,
 * the worker's, a harness's direct UPDATE — leaves its row, one INSERT per
 * statement however many records a cascade settles.  The position is the
 * record's own when the statement sets it (staged_pos at staging,
 * settled_pos when it leaves tentative), a fresh one otherwise.  A record
 * memtx.propose writes is inserted already settled (SPEC §21): its first
 * row is that settled state, at its staging position.
 * `validated` lives only inside one commit and is not kept.  History holds
 * no values and is never rewritten (erasure leaves it as it is).
 *
 * Rows that arrive by COPY FROM into memtx.records (pg_restore loading a
 * dump) write no history: the dump carries the history rows themselves.
 *
 * A store upgraded from 0.1.0 kept no history; the 0.1.0 -> 0.2.0 step
 * backfilled what can be known, without taking a position from the clock: each
 * record's state at staging (tentative, or committed for a tool action; at
 * its created_at and staged_pos) and, when it has moved on, its current
 * state and reason — at its last rollback log row when a repair put it
 * there (that row's position and time), else at settled_pos and its
 * transaction's end.  A record that passed through states in between
 * (committed, then superseded, then revoked) has only those two rows, so
 * as-of reads of instants before the upgrade see it in its staged state
 * and then directly in its current one.
 */
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

-- An UPDATE's old and new rows are matched by id: transition tables have no
-- index, and the protocol functions that fire this trigger plan with hash
-- joins off, so the join would be a nested loop reading every old row once
-- per new row (a cascade of 3,000 records spent 4.7 s here).  The trigger
-- plans its own statement with a hash join, whatever the caller's settings
-- and however few rows the statement it first planned for had.
CREATE FUNCTION memtx.history_write() RETURNS trigger
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    SET enable_hashjoin = on SET enable_nestloop = off
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
 * decides what it returns, exactly as for a direct SELECT, of a namespace the
 * caller is a member of (§17); it takes no memtx transaction and writes
 * nothing, so it runs on a hot standby.
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
    PERFORM memtx.require_namespace_reader(read_as_of.namespace);
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
COMMENT ON FUNCTION memtx.erase(bigint, text) IS 'harness: legal erasure — revoke the record (reason erased, cascade as for revoke) unless revoked already, then replace its value by JSON null in the record and in every copy memtx keeps, and do the same to every record restored from it (and from those); returns the repair log rows';
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

/* ----------------------------------------------------------------------
 * §14 Retrieval and reads without a transaction
 */

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

-- The active records only, for memtx.search: a search of the present reads
-- and ranks none of the versions a slot's updates superseded.  A new record
-- adds one entry; a superseded one leaves the index.
CREATE INDEX records_recall_active_idx ON memtx.records USING gin (memtx.recall_document(entity, attribute, value))
    WHERE memtx.is_active(state);

CREATE FUNCTION memtx.recall(tx bigint, query text, k integer DEFAULT 8, entity_prefix text DEFAULT NULL,
                             valid_at timestamptz DEFAULT NULL)
    RETURNS TABLE (record_id bigint, entity text, attribute text, value jsonb, rank real)
    AS 'MODULE_PATHNAME', 'memtx_recall'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
COMMENT ON FUNCTION memtx.recall(bigint, text, integer, text, timestamptz) IS 'ranked full-text retrieval: the best k records visible to the transaction that match the query (websearch syntax) and are valid at valid_at when given, best first; adds them to its read set';
REVOKE ALL ON FUNCTION memtx.recall(bigint, text, integer, text, timestamptz) FROM PUBLIC;
-- An agent's API: the function checks the transaction's agent itself.
GRANT EXECUTE ON FUNCTION memtx.recall(bigint, text, integer, text, timestamptz) TO PUBLIC;

CREATE FUNCTION memtx.lookup(entity text, attribute text DEFAULT NULL, namespace text DEFAULT 'default',
                             valid_at timestamptz DEFAULT NULL)
    RETURNS SETOF memtx.records
    AS 'MODULE_PATHNAME', 'memtx_lookup'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.lookup(text, text, text, timestamptz) IS 'the active records on a slot (or entity) that the caller may read, valid at valid_at when given, in id order, without a transaction and without writing anything (runs on a hot standby); namespace members only';
REVOKE ALL ON FUNCTION memtx.lookup(text, text, text, timestamptz) FROM PUBLIC;
-- Anyone's read: it returns only what the calling role may read, of a
-- namespace it is a member of.
GRANT EXECUTE ON FUNCTION memtx.lookup(text, text, text, timestamptz) TO PUBLIC;

-- memtx.recall's ranking over memtx.lookup's records (SPEC is silent: README,
-- "Choices where SPEC.md is silent"): what a store's search reads.
CREATE FUNCTION memtx.search(query text, k integer DEFAULT 8, entity_prefix text DEFAULT NULL,
                             namespace text DEFAULT 'default', valid_at timestamptz DEFAULT NULL)
    RETURNS TABLE (record_id bigint, entity text, attribute text, value jsonb, rank real)
    AS 'MODULE_PATHNAME', 'memtx_search'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
COMMENT ON FUNCTION memtx.search(text, integer, text, text, timestamptz) IS 'ranked full-text search without a transaction: the best k active records the caller may read that match the query (websearch syntax), ranked as memtx.recall ranks, valid at valid_at when given, best first; writes nothing (runs on a hot standby); namespace members only';
REVOKE ALL ON FUNCTION memtx.search(text, integer, text, text, timestamptz) FROM PUBLIC;
-- Anyone's read, as lookup: only what the calling role may read, of a
-- namespace it is a member of.
GRANT EXECUTE ON FUNCTION memtx.search(text, integer, text, text, timestamptz) TO PUBLIC;

/* ----------------------------------------------------------------------
 * §15 Tool definitions for LLM function calling
 */

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
 * isolation level and on a hot standby.  memory_recall has one property
 * that is no argument of memtx.recall: `semantic` (§19), offered while the
 * companion extension memtx_vector is installed (looked up at each call), for
 * runners that embed the query and call memtx.recall_similar instead.
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
            'entity_prefix', nonempty || '{"description": "Only records whose entity starts with this text (a plain prefix, not a pattern), e.g. \"customer:42\"."}',
            'valid_at', '{"type": "string", "format": "date-time", "description": "Only records whose validity contains this instant, an ISO 8601 timestamp with a UTC offset (e.g. now, for a store whose items expire). Omit to ignore validity."}'::jsonb)
         -- §19: with memtx_vector installed, the runner may also search by meaning
         || CASE WHEN EXISTS (SELECT FROM pg_extension WHERE extname = 'memtx_vector')
                 THEN jsonb_build_object('semantic', '{"type": "boolean", "default": false, "description": "Also search by meaning: records whose content is similar to the query count even without its words (the keyword and similarity rankings are fused)."}'::jsonb)
                 ELSE '{}' END,
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

/* ----------------------------------------------------------------------
 * §8, §11 Audits of the receipts (after every table they read: their
 * SQL-standard bodies bind their names when created)
 */

/*
 * The terminal dispositions the store records, each with the receipt it
 * must have (SPEC §11), defined once: check_invariants compares them with
 * the receipts, and the 0.1.0 -> 0.2.0 step wrote the receipts of the
 * dispositions made before 0.2.0 from it.  `subject_is` says what the subject
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

/*
 * What is wrong with a namespace's chain, defined once (verify_receipts
 * reports the lowest seq, check_invariants every row).
 *
 * Of each chained receipt: a seq missing (a deleted receipt, the last
 * included: the head remembers it), a broken link or hash, a column that
 * disagrees with the body, a subject that does not exist, a list of record
 * ids that is not one, a value digest that no longer matches its record
 * (unless the record is erased as erasure requires, below), a receipt in the format of 0.2.0 after
 * receipts of the current one (or in a namespace that never had 0.2.0
 * receipts).
 *
 * Of the records, from every receipt (SPEC §17).  Each receipt says what it
 * made of the records it names: a commit receipt its record's disposition,
 * `superseded` superseded, `repaired` revoked but for the views in
 * `quarantined`; a retract receipt the same of its lists, and its record
 * subject revoked; an allowed act's `action` committed.  Read in chain
 * order (receipts not yet chained last, in append order: a record's
 * changes serialize on its row, so its receipts are appended in the order
 * of its changes), they give each record's history of states, which must be
 * one the calls can write (nothing leaves revoked but an erasure's receipt;
 * a retraction whose repairs do not list its record found it revoked
 * already; superseded leads only to revoked; a commit receipt follows
 * nothing, or a quarantine resolve settles; an act's record is new; only an
 * active record is superseded or quarantined by a cascade), and whose last
 * state is the record's stored state, reported at the receipt that last
 * settled it.  A record no receipt names is tentative while its transaction
 * is open, else reported as a missing receipt (the seq after the last).  And
 * "erased means erased": a record marked erased, or named by a retract
 * receipt of reason erased, must have both, be revoked, hold JSON null and
 * have no salt left.
 *
 * Receipts not yet chained are not judged themselves, and a record whose
 * last receipt is not yet chained is judged by the next run (which chains
 * it first).  In a namespace upgraded from 0.2.0 (memtx.receipt_anchoring),
 * receipts of 0.2.0 did not list every record whose state they set, and
 * those the upgrade to 0.2.0 backfilled for what 0.1.0 did follow the order
 * of their times, not of each record's changes: a state they settled last is
 * only held where they can tell (a record any receipt revoked is revoked,
 * whatever the order; a view they repaired is quarantined or revoked; a
 * superseded record is superseded or revoked), and a record staged before
 * the upgrade that no receipt names is not judged.
 */
CREATE FUNCTION memtx.receipt_problems(namespace text) RETURNS TABLE (seq bigint, record_id bigint, detail text)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    WITH c AS (
        SELECT r.*, pg_catalog.lag(r.hash) OVER w AS before_hash, pg_catalog.row_number() OVER w AS n
          FROM memtx.receipts r
         WHERE r.namespace = receipt_problems.namespace AND r.seq IS NOT NULL
        WINDOW w AS (ORDER BY r.seq)),
    -- every receipt, chained or pending, with what the audit of states reads of it: its place
    -- in chain order (pending ones last, in append order), `old`: in the format of 0.2.0,
    -- `backfilled`: written by the upgrade to 0.2.0 for what 0.1.0 did, in an order of their
    -- times that is not the order of a record's changes
    rc AS (
        SELECT coalesce(r.seq, 9223372036854775807) AS pos, r.appended, r.seq, r.kind, r.subject, r.reason,
               CASE WHEN r.kind = 'commit' THEN r.disposition::memtx.state END AS disposition,
               r.body->>'subject_is' AS subject_is, r.body ? 'repaired' AS lists_repairs,
               (r.kind = 'commit' AND NOT r.body ? 'repaired') OR (r.kind = 'retract' AND NOT r.body ? 'quarantined') AS old,
               coalesce(r.body->'backfilled' = 'true', false) AS backfilled,
               CASE WHEN r.kind = 'commit' THEN r.body->'superseded' END AS superseded,
               CASE WHEN r.kind IN ('commit', 'retract') THEN r.body->'repaired' END AS repaired,
               CASE WHEN r.kind IN ('commit', 'retract') THEN r.body->'quarantined' END AS quarantined,
               CASE WHEN r.kind = 'act' AND r.disposition = 'allowed' AND pg_catalog.jsonb_typeof(r.body->'action') = 'number'
                    THEN (r.body->>'action')::bigint END AS action
          FROM memtx.receipts r
         WHERE r.namespace = receipt_problems.namespace),
    -- the last receipt of the 0.2.0 format and the first of the current one (in chain order),
    -- the seq a missing receipt would have, the position of the upgrade from 0.2.0
    cut AS (
        SELECT o.pos AS old_pos, o.appended AS old_appended, nw.pos AS new_pos, nw.appended AS new_appended,
               (SELECT coalesce(pg_catalog.max(r.seq), 0) + 1 FROM memtx.receipts r
                 WHERE r.namespace = receipt_problems.namespace AND r.seq IS NOT NULL) AS next_seq,
               (SELECT a.upgrade_pos FROM memtx.receipt_anchoring a WHERE a.namespace = receipt_problems.namespace) AS upgrade_pos
          FROM (SELECT) one
          LEFT JOIN LATERAL (SELECT rc.pos, rc.appended FROM rc WHERE rc.old
                              ORDER BY rc.pos DESC, rc.appended DESC LIMIT 1) o ON true
          LEFT JOIN LATERAL (SELECT rc.pos, rc.appended FROM rc WHERE NOT rc.old AND rc.kind IN ('commit', 'retract')
                              ORDER BY rc.pos, rc.appended LIMIT 1) nw ON true),
    -- what each receipt made of each record it names
    ev AS (
        SELECT rc.pos, rc.appended, rc.seq, rc.reason, rc.backfilled, rc.subject AS record, rc.disposition AS state,
               'commit' AS how, 0 AS rank
          FROM rc WHERE rc.kind = 'commit'
        UNION ALL
        SELECT rc.pos, rc.appended, rc.seq, rc.reason, rc.backfilled, rc.action, 'committed', 'act', 0
          FROM rc WHERE rc.action IS NOT NULL
        UNION ALL
        SELECT rc.pos, rc.appended, rc.seq, rc.reason, rc.backfilled, rc.subject, 'revoked',
               CASE WHEN rc.lists_repairs THEN 'revoked already' ELSE 'retracted' END, 0
          FROM rc WHERE rc.kind = 'retract' AND rc.subject_is = 'record'
        UNION ALL
        SELECT rc.pos, rc.appended, rc.seq, rc.reason, rc.backfilled, l.id, l.state, l.how, l.rank
          FROM rc CROSS JOIN LATERAL (
                SELECT i.id, 'superseded'::memtx.state, 'superseded', 1 FROM memtx.receipt_ids(rc.superseded) i(id)
                UNION ALL
                SELECT i.id, 'revoked'::memtx.state, CASE WHEN rc.old THEN 'repaired before 0.3.0' ELSE 'repaired' END, 1
                  FROM memtx.receipt_ids(rc.repaired) i(id)
                UNION ALL
                SELECT i.id, 'quarantined'::memtx.state, 'repaired', 2 FROM memtx.receipt_ids(rc.quarantined) i(id)
              ) l(id, state, how, rank)
         WHERE coalesce(rc.superseded, '[]') <> '[]' OR coalesce(rc.repaired, '[]') <> '[]'
            OR coalesce(rc.quarantined, '[]') <> '[]'),
    -- one statement per record and receipt (a view a repair quarantined is not also revoked; a
    -- retraction's root is among its repairs, a subject they do not list was revoked already),
    -- and whether the receipt is after the last one of the 0.2.0 format
    ev1 AS (
        SELECT DISTINCT ON (ev.record, ev.pos, ev.appended) ev.*,
               cut.old_pos IS NULL OR (ev.pos, ev.appended) > (cut.old_pos, cut.old_appended) AS strict
          FROM ev, cut
         ORDER BY ev.record, ev.pos, ev.appended, ev.rank DESC),
    -- with the statement before it, the receipt that revoked it first (of those not
    -- backfilled, and of all: revoked is terminal, whatever the order), and whether any did
    walk AS (
        SELECT ev1.*, pg_catalog.lag(ev1.state) OVER w AS prev,
               pg_catalog.lag(ev1.strict) OVER w AS prev_strict, pg_catalog.lag(ev1.seq) OVER w AS prev_seq,
               pg_catalog.min(ev1.seq) FILTER (WHERE ev1.state = 'revoked' AND ev1.how <> 'repaired before 0.3.0')
                   OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS revoked_seq,
               pg_catalog.min(ev1.seq) FILTER (WHERE ev1.state = 'revoked' AND ev1.how <> 'repaired before 0.3.0'
                                                 AND NOT ev1.backfilled)
                   OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS revoked_in_order_seq,
               pg_catalog.bool_or(ev1.state = 'revoked' AND ev1.how <> 'repaired before 0.3.0')
                   OVER (PARTITION BY ev1.record) AS revoked_ever,
               pg_catalog.lead(ev1.pos) OVER w IS NULL AS last
          FROM ev1 WINDOW w AS (PARTITION BY ev1.record ORDER BY ev1.pos, ev1.appended)),
    erasures AS (
        SELECT rc.subject AS record, pg_catalog.min(rc.seq) AS seq, pg_catalog.count(*) AS n
          FROM rc WHERE rc.kind = 'retract' AND rc.reason = 'erased' AND rc.subject_is = 'record'
         GROUP BY rc.subject),
    -- each chained receipt's own faults (a commit receipt of an erased record is
    -- excused from its digest by the erasure's receipt, found among the erasures
    -- above rather than by a lookup of receipts by subject, which no index serves)
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
            WHEN c.kind IN ('commit', 'retract')
                 AND EXISTS (SELECT FROM (VALUES ('superseded'), ('repaired'), ('quarantined')) k(list)
                              WHERE c.body ? k.list
                                AND (pg_catalog.jsonb_typeof(c.body -> k.list) <> 'array'
                                     OR pg_catalog.jsonb_path_exists(c.body -> k.list, '$[*] ? (@.type() != "number")')))
                THEN 'has a list of record ids that is not an array of numbers'
            WHEN c.kind = 'commit'
                 AND EXISTS (SELECT FROM memtx.records x LEFT JOIN memtx.record_salts s ON s.record_id = x.id
                              WHERE x.id = c.subject
                                AND (c.body->>'value_digest') IS DISTINCT FROM memtx.value_salted_digest(s.salt, x.value)
                                -- unless erased as erasure requires (SPEC §17): erased_at set
                                -- behind the API does not hide a changed value
                                AND NOT (x.erased_at IS NOT NULL AND x.value = 'null'::jsonb AND x.state = 'revoked'
                                         AND s.record_id IS NULL
                                         AND EXISTS (SELECT FROM erasures e WHERE e.record = x.id)))
                THEN pg_catalog.format('has a value digest that no longer matches record %s', c.subject)
            END AS detail,
               CASE WHEN c.kind = 'commit' OR c.body->>'subject_is' = 'record' THEN c.subject END AS record
          FROM c)
    SELECT j.n, j.record, pg_catalog.format('receipt %s %s', j.n, j.detail) FROM judged j WHERE j.detail IS NOT NULL
    UNION ALL
    SELECT rc.seq, CASE WHEN rc.kind = 'commit' OR rc.subject_is = 'record' THEN rc.subject END,
           pg_catalog.format('receipt %s is a %s receipt in the format of 0.2.0 (it does not list every record whose state it set) %s',
                             rc.seq, rc.kind, CASE WHEN cut.upgrade_pos IS NULL THEN 'in a namespace that began at 0.3.0'
                                                   ELSE 'after receipts of the current format' END)
      FROM rc, cut
     WHERE rc.old AND rc.seq IS NOT NULL
       AND (cut.upgrade_pos IS NULL OR (rc.pos, rc.appended) > (cut.new_pos, cut.new_appended))
    UNION ALL
    -- a history of states no call writes
    SELECT w.seq, w.record,
           CASE WHEN w.revoked_in_order_seq IS NOT NULL OR (w.revoked_seq IS NOT NULL AND NOT w.backfilled)
                THEN pg_catalog.format('receipt %s makes record %s %s after receipt %s revoked it, which no call does',
                                       w.seq, w.record, w.state, coalesce(w.revoked_in_order_seq, w.revoked_seq))
                WHEN w.how = 'revoked already'
                THEN pg_catalog.format('receipt %s retracts record %s as revoked already, but receipt %s made it %s',
                                       w.seq, w.record, w.prev_seq, w.prev)
                ELSE pg_catalog.format('receipt %s makes record %s %s after receipt %s made it %s, which no call does',
                                       w.seq, w.record, w.state, w.prev_seq, w.prev) END
      FROM walk w
     WHERE w.seq IS NOT NULL AND w.prev IS NOT NULL AND CASE
            WHEN w.revoked_in_order_seq IS NOT NULL OR (w.revoked_seq IS NOT NULL AND NOT w.backfilled)
                THEN NOT (w.how = 'revoked already' AND w.reason IS NOT DISTINCT FROM 'erased')
            WHEN NOT w.prev_strict THEN false
            WHEN w.how = 'revoked already' THEN true
            WHEN w.prev = 'superseded' THEN w.state <> 'revoked'
            WHEN w.how = 'commit' THEN w.prev <> 'quarantined'
            WHEN w.how = 'act' THEN true
            WHEN w.how = 'superseded' OR w.state = 'quarantined' THEN NOT memtx.is_active(w.prev)
            ELSE false END
    UNION ALL
    -- each record, in one pass over the namespace's records: the state the chain last gave it is
    -- not its state (or the chain names a record there is not); no receipt names it, and it is
    -- not tentative in an open transaction; it is not erased as erasure requires
    SELECT p.seq, coalesce(x.id, w.record), p.detail
      FROM (SELECT x.id, x.kind, x.state, x.value, x.erased_at, x.staged_pos, x.tx_id
              FROM memtx.records x WHERE x.namespace = receipt_problems.namespace) x
      FULL JOIN (SELECT w.* FROM walk w WHERE w.last) w ON w.record = x.id
      LEFT JOIN erasures e ON e.record = x.id
      CROSS JOIN cut
      CROSS JOIN LATERAL (VALUES
        (w.seq, CASE
            WHEN w.seq IS NULL THEN NULL
            WHEN x.id IS NULL THEN pg_catalog.format('receipt %s names record %s, which does not exist in namespace %s',
                                                     w.seq, w.record, receipt_problems.namespace)
            WHEN x.state IN ('raw', 'tentative', 'validated') OR CASE
                    WHEN w.strict THEN x.state <> w.state
                    WHEN w.revoked_ever THEN x.state <> 'revoked'
                    WHEN w.how = 'repaired before 0.3.0' AND memtx.is_view_kind(x.kind)
                        THEN x.state NOT IN ('quarantined', 'revoked')
                    WHEN w.state = 'superseded' AND NOT w.backfilled THEN x.state NOT IN ('superseded', 'revoked')
                    ELSE false END
                THEN pg_catalog.format('receipt %s last settled record %s as %s, but it is %s', w.seq, w.record, w.state, x.state)
            END),
        (cut.next_seq, CASE
            WHEN w.record IS NULL AND (cut.upgrade_pos IS NULL OR x.staged_pos > cut.upgrade_pos)
                 AND NOT (x.state = 'tentative' AND (SELECT t.status FROM memtx.transactions t WHERE t.id = x.tx_id)
                                                    IS NOT DISTINCT FROM 'open')
                THEN pg_catalog.format('record %s is %s in a transaction that is %s, but no receipt settled it', x.id, x.state,
                                       coalesce((SELECT t.status::text FROM memtx.transactions t WHERE t.id = x.tx_id), 'missing'))
            END),
        (coalesce(e.seq, cut.next_seq), CASE
            WHEN x.id IS NOT NULL AND (x.erased_at IS NOT NULL OR e.record IS NOT NULL)
                 AND NOT (e.record IS NOT NULL AND e.seq IS NULL)
                 AND (x.erased_at IS NULL OR x.value <> 'null'::jsonb OR x.state <> 'revoked' OR e.record IS NULL OR e.n > 1
                      OR EXISTS (SELECT FROM memtx.record_salts s
                                  WHERE s.record_id = x.id AND s.namespace = receipt_problems.namespace))
                THEN pg_catalog.format('record %s is not erased as erasure requires: %s', x.id, pg_catalog.concat_ws(', ',
                    CASE WHEN x.erased_at IS NULL THEN pg_catalog.format('receipt %s records its erasure, but erased_at is not set', e.seq) END,
                    CASE WHEN x.value <> 'null'::jsonb THEN 'its value is not JSON null' END,
                    CASE WHEN EXISTS (SELECT FROM memtx.record_salts s
                                       WHERE s.record_id = x.id AND s.namespace = receipt_problems.namespace)
                         THEN 'its digest salt is kept' END,
                    CASE WHEN x.state <> 'revoked' THEN pg_catalog.format('it is %s, not revoked', x.state) END,
                    CASE WHEN e.record IS NULL THEN 'no retract receipt records its erasure' END,
                    CASE WHEN e.n > 1 THEN pg_catalog.format('%s retract receipts record its erasure', e.n) END))
            END)) p(seq, detail)
     WHERE p.detail IS NOT NULL
       -- (what cannot be wrong goes no further: its state is the last the chain gave it, never
       -- revoked, not erased)
       AND (x.id IS NULL OR w.record IS NULL OR x.state IS DISTINCT FROM w.state OR w.revoked_ever
            OR x.erased_at IS NOT NULL OR e.record IS NOT NULL)
    UNION ALL
    SELECT CASE WHEN k.seq > l.last THEN l.last + 1 ELSE k.seq END, NULL::bigint,
           CASE WHEN k.seq > l.last THEN pg_catalog.format('receipt %s is missing (the chain''s head is receipt %s)', l.last + 1, k.seq)
                       ELSE pg_catalog.format('receipt %s has a hash that is not the chain''s head', k.seq) END
      FROM memtx.receipt_heads k,
           LATERAL (SELECT coalesce(pg_catalog.max(r.seq), 0) AS last FROM memtx.receipts r
                     WHERE r.namespace = k.namespace AND r.seq IS NOT NULL) l
     WHERE k.namespace = receipt_problems.namespace
       AND (k.seq > l.last OR (k.seq > 0 AND k.seq = l.last AND k.hash IS DISTINCT FROM
            (SELECT r.hash FROM memtx.receipts r WHERE r.namespace = k.namespace AND r.seq = k.seq)))
    ORDER BY 1, 2, 3;
END;
COMMENT ON FUNCTION memtx.receipt_problems(text) IS 'harness audit: what is wrong with a namespace''s chained receipts and with the record states they anchor, by seq, with the record concerned (none when the chain holds)';
REVOKE ALL ON FUNCTION memtx.receipt_problems(text) FROM PUBLIC;

/* ----------------------------------------------------------------------
 * §1, §3 References between tables (a parallel pg_restore loads the store)
 */

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
        -- the namespace is compared, not probed: as an index condition it
        -- would let a plan made on an empty store read the namespace's
        -- entries of the slot index instead of one key of the primary key
        PERFORM FROM memtx.records x WHERE x.id = r AND x.namespace IS NOT DISTINCT FROM NEW.namespace
            FOR KEY SHARE;
        IF NOT FOUND AND NOT memtx.copying_into(TG_RELID) THEN
            RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
                MESSAGE = format('a row of %s names record %s, which does not exist in namespace %s',
                                 TG_TABLE_NAME, r, NEW.namespace);
        END IF;
    END LOOP;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION memtx.reference_check() IS 'trigger: the transaction and records a row names must exist (rows loaded by COPY FROM, as pg_restore loads them, excepted)';

-- The referencing side for rows inserted into memtx.records, once per
-- statement: what reference_check checks row by row (the transaction named
-- exists in the row's namespace, locked FOR KEY SHARE), over the statement's
-- new rows at once, so a batch of records (memtx.stage_many) runs one query
-- instead of one trigger call and one query per record.  It runs after the
-- rows are in the table, within the statement: a missing transaction
-- refuses the statement whole, with reference_check's error for the first
-- such row.  The transactions are locked in id order.
CREATE FUNCTION memtx.reference_check_inserted() RETURNS trigger
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    locked  bigint;
    missing record;
BEGIN
    SELECT count(*) INTO locked
      FROM (SELECT FROM memtx.transactions t
             WHERE (t.id, t.namespace) IN (SELECT n.tx_id, n.namespace FROM new_rows n)
             ORDER BY t.id FOR KEY SHARE OF t) l;
    -- as many as the rows name (a batch names one): none is missing
    IF locked = (SELECT count(*) FROM (SELECT DISTINCT n.tx_id, n.namespace FROM new_rows n) d)
       OR memtx.copying_into(TG_RELID) THEN
        RETURN NULL;
    END IF;
    SELECT n.tx_id, n.namespace INTO missing
      FROM new_rows n
     WHERE NOT EXISTS (SELECT FROM memtx.transactions t WHERE t.id = n.tx_id AND t.namespace = n.namespace)
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
            MESSAGE = format('a row of %s names transaction %s, which does not exist in namespace %s',
                             TG_TABLE_NAME, missing.tx_id, missing.namespace);
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION memtx.reference_check_inserted() IS 'trigger: the transactions the rows an INSERT put into memtx.records name must exist, checked once per statement (rows loaded by COPY FROM excepted)';

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
REVOKE ALL ON FUNCTION memtx.reference_check_inserted() FROM PUBLIC;
REVOKE ALL ON FUNCTION memtx.reference_guard() FROM PUBLIC;
REVOKE ALL ON FUNCTION memtx.copying_into(oid) FROM PUBLIC;

CREATE TRIGGER records_references BEFORE UPDATE OF tx_id, namespace ON memtx.records
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER records_references_inserted AFTER INSERT ON memtx.records
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memtx.reference_check_inserted();
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

/* ----------------------------------------------------------------------
 * §20 Distribution across nodes
 *
 * A store split by namespace across N nodes behind a router (the companion
 * extension memtx_router) routes each call by the namespace it names, or
 * by the node number every id carries in the five bits above its low 48
 * (src/node.c).  These functions are what the router and an operator need
 * on a node; node_of and id_node are SQL-standard and identical on the
 * router, so a namespace is placed the same way wherever it is computed.
 */

-- The node number is recorded by the id sequences themselves (their values
-- go into pg_dump with the store); a single server is node 0.  The
-- sequences are the owner's: node() reads one with the owner's rights.
CREATE FUNCTION memtx.node() RETURNS integer
    LANGUAGE sql STABLE SECURITY DEFINER PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT (s.last_value >> 48)::integer FROM memtx.record_id_seq s;
END;
COMMENT ON FUNCTION memtx.node() IS 'this store''s node number (0 for a single server): the bits above the low 48 of every id it allocates';

CREATE FUNCTION memtx.set_node(node integer) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_set_node'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION memtx.set_node(integer) IS 'harness: make this empty store node 0..31 of a distributed store: every id sequence moves into the node''s range (node << 48 upwards)';

-- The node an id was allocated by; NULL for NULL, 0 and negative ids, which
-- no node allocates (the router sends those to node 0 for memtx's own
-- argument error).
CREATE FUNCTION memtx.id_node(id bigint) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN CASE WHEN id > 0 THEN (id >> 48)::integer END;
COMMENT ON FUNCTION memtx.id_node(bigint) IS 'the node number an id carries (id >> 48); NULL for ids no node allocates';

-- A namespace's stable hash: the first four bytes of the SHA-256 of its
-- UTF-8 text, big-endian, as a non-negative 31-bit integer.  The router
-- places a namespace on node node_of(namespace) % N (N a power of two:
-- PL/Proxy masks with N - 1).  Defined by SHA-256 and UTF-8, not by
-- hashtext, so it is the same on every node, platform, encoding and release.
CREATE FUNCTION memtx.node_of(namespace text) RETURNS integer
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    RETURN ('x' || pg_catalog.substr(pg_catalog.encode(pg_catalog.sha256(
               pg_catalog.convert_to(namespace, 'UTF8')), 'hex'), 1, 8))::bit(32)::integer
           & 2147483647;
COMMENT ON FUNCTION memtx.node_of(text) IS 'a namespace''s stable placement hash (first 31 bits of the SHA-256 of its UTF-8 text); its node is node_of(namespace) % N';
