/*
 * memtx install script.
 *
 * Everything lives in schema memtx.  Catalog tables hold the store; the
 * protocol runs in C (module memtx).  Clients use the API functions only:
 * tables are owned by the extension owner and not writable by PUBLIC, the
 * C functions switch to the owner for their table access and pin
 * search_path, and row-level security limits direct SELECTs.
 */
\echo Use "CREATE EXTENSION memtx" to load this file. \quit

CREATE SCHEMA memtx;
COMMENT ON SCHEMA memtx IS 'memtx: transactional belief memory for LLM agents';

/* ------------------------------------------------------------------ types */

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

/* --------------------------------------------------------------- sequences */

-- One global order of protocol events (staging, settling, commits, snapshots).
CREATE SEQUENCE memtx.clock AS bigint;
CREATE SEQUENCE memtx.transaction_id_seq AS bigint;
CREATE SEQUENCE memtx.record_id_seq AS bigint;
CREATE SEQUENCE memtx.action_log_id_seq AS bigint;
CREATE SEQUENCE memtx.rollback_log_id_seq AS bigint;
CREATE SEQUENCE memtx.compensation_id_seq AS bigint;

/* -------------------------------------------------------------- registries */

CREATE TABLE memtx.sources (
    name          text PRIMARY KEY CHECK (name <> '' AND octet_length(name) <= 256),
    authority     double precision NOT NULL CHECK (authority >= 0 AND authority <= 1),
    registered_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE memtx.sources IS 'source registry: authority copied onto records staged from each source';

CREATE TABLE memtx.tools (
    name          text PRIMARY KEY CHECK (name <> '' AND octet_length(name) <= 256),
    reversible    boolean NOT NULL,
    compensator   text CHECK (compensator IS NULL OR compensator <> ''),
    registered_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE memtx.tools IS 'tool registry: reversibility and compensator of each tool; unregistered tools are irreversible';

CREATE TABLE memtx.role_tiers (
    role_name text PRIMARY KEY CHECK (role_name <> ''),
    tier      memtx.risk_tier NOT NULL
);
COMMENT ON TABLE memtx.role_tiers IS 'risk tier given to transactions begun by each role';

/* ------------------------------------------------------------ transactions */

CREATE TABLE memtx.transactions (
    id               bigint PRIMARY KEY DEFAULT pg_catalog.nextval('memtx.transaction_id_seq'),
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
    end_reason       text
);
COMMENT ON TABLE memtx.transactions IS 'memtx transactions: one agent turn each, with its snapshot and status';
CREATE INDEX transactions_open_lease_idx ON memtx.transactions (lease_expires_at) WHERE status = 'open';

/* ----------------------------------------------------------------- records */

CREATE FUNCTION memtx.value_digest(jsonb) RETURNS bytea
    AS 'MODULE_PATHNAME', 'memtx_value_digest'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION memtx.value_digest(jsonb) IS 'SHA-256 of a value''s canonical text: equal digests mean the same value';


CREATE TABLE memtx.records (
    id             bigint PRIMARY KEY DEFAULT pg_catalog.nextval('memtx.record_id_seq'),
    tx_id          bigint NOT NULL REFERENCES memtx.transactions (id),
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
    -- single truth: no two active records on one slot with overlapping
    -- validity and different values (values compared by canonical text)
    CONSTRAINT records_single_truth EXCLUDE USING gist (
        namespace WITH =, entity WITH =, attribute WITH =, valid WITH &&,
        (memtx.value_digest(value)) WITH <>)
        WHERE (state = 'committed' OR state = 'action_safe')
);
COMMENT ON TABLE memtx.records IS 'memory records: governed objects with evidence, permissions, provenance, validity and lifecycle state';
CREATE INDEX records_slot_idx ON memtx.records (namespace, entity, attribute);
CREATE INDEX records_tx_idx ON memtx.records (tx_id, staged_pos);
CREATE INDEX records_tentative_idx ON memtx.records (namespace, id) WHERE state = 'tentative';
CREATE INDEX records_action_safe_idx ON memtx.records (namespace, id) WHERE state = 'action_safe';

CREATE TABLE memtx.edges (
    child  bigint NOT NULL REFERENCES memtx.records (id),
    parent bigint NOT NULL REFERENCES memtx.records (id),
    PRIMARY KEY (child, parent),
    -- parents are older than their children, so the graph cannot cycle
    CHECK (parent < child)
);
COMMENT ON TABLE memtx.edges IS 'derived-from DAG: child was derived from parent';
CREATE INDEX edges_parent_idx ON memtx.edges (parent, child);

CREATE TABLE memtx.read_set (
    tx_id     bigint NOT NULL REFERENCES memtx.transactions (id),
    record_id bigint NOT NULL REFERENCES memtx.records (id),
    PRIMARY KEY (tx_id, record_id)
);
COMMENT ON TABLE memtx.read_set IS 'records each transaction has read through memtx.read';

CREATE TABLE memtx.revocation_registry (
    record_id     bigint PRIMARY KEY REFERENCES memtx.records (id),
    root_id       bigint NOT NULL REFERENCES memtx.records (id),
    registered_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE memtx.revocation_registry IS 'views quarantined by a cascade, waiting to be rebuilt';

/* ------------------------------------------------------------ action time */

CREATE TABLE memtx.action_log (
    id            bigint PRIMARY KEY DEFAULT pg_catalog.nextval('memtx.action_log_id_seq'),
    tx_id         bigint NOT NULL REFERENCES memtx.transactions (id),
    namespace     text NOT NULL,
    tool          text NOT NULL,
    reversible    boolean NOT NULL,
    args          jsonb,
    inputs        bigint[] NOT NULL DEFAULT '{}',
    allowed       boolean NOT NULL,
    reason        text,
    blockers      bigint[] NOT NULL DEFAULT '{}',
    action_id     bigint REFERENCES memtx.records (id),
    effect_key    text,
    -- what the gate saw: its snapshot, xid and clock position
    gate_snapshot pg_snapshot NOT NULL,
    gate_xid      xid8 NOT NULL,
    gate_pos      bigint NOT NULL,
    logged_at     timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE memtx.action_log IS 'every gated tool call: allowed or blocked, with reason, blockers and what the gate saw';
CREATE UNIQUE INDEX action_log_effect_key_idx ON memtx.action_log (namespace, effect_key)
    WHERE allowed AND effect_key IS NOT NULL;
CREATE INDEX action_log_tx_idx ON memtx.action_log (tx_id);
CREATE INDEX action_log_action_idx ON memtx.action_log (action_id);

/* ------------------------------------------------------------------ repair */

CREATE TABLE memtx.rollback_log (
    id        bigint PRIMARY KEY DEFAULT pg_catalog.nextval('memtx.rollback_log_id_seq'),
    root_id   bigint NOT NULL REFERENCES memtx.records (id),
    record_id bigint NOT NULL REFERENCES memtx.records (id),
    kind      memtx.kind NOT NULL,
    action    text NOT NULL CHECK (action IN ('revoked', 'quarantined', 'compensated', 'leaked')),
    reason    text NOT NULL,
    note      text,
    pos       bigint NOT NULL,
    logged_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE memtx.rollback_log IS 'one row per retraction root and per repaired descendant';
CREATE INDEX rollback_log_root_idx ON memtx.rollback_log (root_id);
CREATE INDEX rollback_log_record_idx ON memtx.rollback_log (record_id);

CREATE TABLE memtx.compensations (
    id          bigint PRIMARY KEY DEFAULT pg_catalog.nextval('memtx.compensation_id_seq'),
    root_id     bigint NOT NULL REFERENCES memtx.records (id),
    action_id   bigint NOT NULL REFERENCES memtx.records (id),
    tool        text NOT NULL,
    compensator text,
    args        jsonb,
    status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
    created_at  timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE memtx.compensations IS 'compensation obligations for reversible tool actions whose inputs were retracted';

/* ------------------------------------------------------------------- clock */

CREATE FUNCTION memtx.now() RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'memtx_now'
    LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION memtx.now() IS 'memtx clock: memtx.logical_now when set, else transaction_timestamp()';

/* --------------------------------------------------------------- lifecycle */

CREATE FUNCTION memtx.lifecycle_guard() RETURNS trigger
    AS 'MODULE_PATHNAME', 'memtx_lifecycle_guard'
    LANGUAGE C;
COMMENT ON FUNCTION memtx.lifecycle_guard() IS 'trigger: refuses lifecycle moves outside the legal transition relation';

CREATE TRIGGER records_lifecycle BEFORE UPDATE ON memtx.records
    FOR EACH ROW EXECUTE FUNCTION memtx.lifecycle_guard();

CREATE FUNCTION memtx.legal_transition(from_state memtx.state, to_state memtx.state) RETURNS boolean
    AS 'MODULE_PATHNAME', 'memtx_legal_transition'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION memtx.legal_transition(memtx.state, memtx.state) IS 'whether the lifecycle allows moving a record from one state to another';

/* -------------------------------------------------------------- registries */

CREATE FUNCTION memtx.register_source(name text, authority double precision) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_register_source'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION memtx.register_source(text, double precision) IS 'harness: register or update a source and its authority (0..1)';

CREATE FUNCTION memtx.register_tool(name text, reversible boolean, compensator text DEFAULT NULL) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_register_tool'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION memtx.register_tool(text, boolean, text) IS 'harness: register or update a tool, its reversibility and compensator';

CREATE FUNCTION memtx.set_role_tier(role text, tier memtx.risk_tier) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_set_role_tier'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION memtx.set_role_tier(text, memtx.risk_tier) IS 'harness: the risk tier given to transactions begun by a role (NULL tier removes it)';

/* -------------------------------------------------------------- privileges */

-- Agents reach memtx through the API functions (EXECUTE is PUBLIC's by
-- default); the schema must be usable for that.
GRANT USAGE ON SCHEMA memtx TO PUBLIC;
