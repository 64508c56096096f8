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
-- open transactions (expiry scans these); the lease itself is not indexed, so
-- renewing it is a HOT update
CREATE INDEX transactions_open_idx ON memtx.transactions (id) WHERE status = 'open';

/* ----------------------------------------------------------------- records */

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
    -- validity and different values (slots and values compared by the
    -- SHA-256 of their text; the slot's bigint key leads, see value.c)
    CONSTRAINT records_single_truth EXCLUDE USING gist (
        (memtx.slot_key(namespace, entity, attribute)) WITH =,
        (memtx.slot_digest(namespace, entity, attribute)) WITH =,
        valid WITH &&,
        (memtx.value_digest(value)) WITH <>)
        WHERE (state = 'committed' OR state = 'action_safe')
);
COMMENT ON TABLE memtx.records IS 'memory records: governed objects with evidence, permissions, provenance, validity and lifecycle state';
CREATE INDEX records_slot_idx ON memtx.records (namespace, entity, attribute);
CREATE INDEX records_tx_idx ON memtx.records (tx_id, staged_pos);
-- in flight: the gate probes a namespace, causally stable reads a slot
CREATE INDEX records_tentative_idx ON memtx.records (namespace, entity, attribute) WHERE state = 'tentative';
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

-- read_set and rollback_log are written in volume on hot paths (every read,
-- every repaired descendant); records are never deleted, so their record
-- columns carry no foreign keys (check_invariants audits the logs instead).
CREATE TABLE memtx.read_set (
    tx_id     bigint NOT NULL REFERENCES memtx.transactions (id),
    record_id bigint NOT NULL,
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
    root_id   bigint NOT NULL,
    record_id bigint NOT NULL,
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
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.register_source(text, double precision) IS 'harness: register or update a source and its authority (0..1)';

CREATE FUNCTION memtx.register_tool(name text, reversible boolean, compensator text DEFAULT NULL) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_register_tool'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.register_tool(text, boolean, text) IS 'harness: register or update a tool, its reversibility and compensator';

CREATE FUNCTION memtx.set_role_tier(role text, tier memtx.risk_tier) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_set_role_tier'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.set_role_tier(text, memtx.risk_tier) IS 'harness: the risk tier given to transactions begun by a role (NULL tier removes it)';

/* --------------------------------------------------------- the protocol API */

-- Every API function is C, runs as the calling role for permission decisions
-- and as the extension owner for table access, and pins search_path.  JIT is
-- off inside them: their queries are short index probes whose recursive
-- walks the planner overestimates, and compiling them would cost far more
-- than running them.  For the same reason the protocol functions plan with
-- hash and merge joins off: a walk of a record's ancestry or descendants must
-- be index nested loops, whose cost follows the walk, never a join that reads
-- the whole store (check_invariants, an audit, keeps them).  Sequential scans
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

CREATE FUNCTION memtx.stage(tx bigint, entity text, attribute text, value jsonb,
                            kind memtx.kind DEFAULT 'belief', source text DEFAULT NULL,
                            confidence double precision DEFAULT 1.0, derived_from bigint[] DEFAULT '{}',
                            scope memtx.scope DEFAULT 'private', readers text[] DEFAULT NULL,
                            writers text[] DEFAULT NULL, valid tstzrange DEFAULT NULL,
                            observed_at timestamptz DEFAULT NULL)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'memtx_stage'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.stage(bigint, text, text, jsonb, memtx.kind, text, double precision, bigint[], memtx.scope, text[], text[], tstzrange, timestamptz) IS 'stage a tentative record and its derived-from edges in an open transaction';

CREATE FUNCTION memtx.read(tx bigint, entity text DEFAULT NULL, attribute text DEFAULT NULL)
    RETURNS SETOF memtx.records
    AS 'MODULE_PATHNAME', 'memtx_read'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.read(bigint, text, text) IS 'records visible to the transaction at its isolation level (a slot, an entity, or the namespace); adds them to its read set';

CREATE FUNCTION memtx.commit(tx bigint)
    RETURNS TABLE (record_id bigint, state memtx.state, reason text)
    AS 'MODULE_PATHNAME', 'memtx_commit'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.commit(bigint) IS 'admit staged records through the four-check pipeline; idempotent (a repeat returns the stored outcome)';

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

CREATE FUNCTION memtx.resolve(record bigint, accept boolean)
    RETURNS memtx.state
    AS 'MODULE_PATHNAME', 'memtx_resolve'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
COMMENT ON FUNCTION memtx.resolve(bigint, boolean) IS 'harness: settle a needs_review record (accept commits it and supersedes its rivals; reject revokes it with cascade); returns its new state';

CREATE FUNCTION memtx.gate(tx bigint, tool text, OUT allowed boolean, OUT reason text, OUT blockers bigint[])
    AS 'MODULE_PATHNAME', 'memtx_gate'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.gate(bigint, text) IS 'whether the transaction may call the tool now; a probe that records nothing';

CREATE FUNCTION memtx.act(tx bigint, tool text, args jsonb, derived_from bigint[] DEFAULT '{}',
                          effect_key text DEFAULT NULL,
                          OUT allowed boolean, OUT reason text, OUT action_id bigint, OUT blockers bigint[])
    AS 'MODULE_PATHNAME', 'memtx_act'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
    SET enable_bitmapscan = off;
COMMENT ON FUNCTION memtx.act(bigint, text, jsonb, bigint[], text) IS 'gate a tool call with its declared inputs; an allowed call is recorded as a committed tool_action record, every call in the action log';

CREATE FUNCTION memtx.expire_transactions()
    RETURNS SETOF bigint
    AS 'MODULE_PATHNAME', 'memtx_expire_transactions'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
COMMENT ON FUNCTION memtx.expire_transactions() IS 'harness: abort (reason expired) every open transaction whose lease ran out; returns their ids';

CREATE FUNCTION memtx.happened_before(xid xid8, pos bigint, snapshot pg_snapshot, snapshot_xid xid8, snapshot_pos bigint)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'memtx_happened_before'
    LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION memtx.happened_before(xid8, bigint, pg_snapshot, xid8, bigint) IS 'whether an event at (xid, pos) precedes a snapshot taken at (snapshot_xid, snapshot_pos)';

CREATE FUNCTION memtx.check_invariants()
    RETURNS TABLE (invariant text, record_id bigint, detail text)
    AS 'MODULE_PATHNAME', 'memtx_check_invariants'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.check_invariants() IS 'harness: recompute I1, I2, G3 and single truth from the records, edges and action log; no rows when all hold';

CREATE FUNCTION memtx.can_read(owner text, readers text[], scope memtx.scope)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'memtx_can_read'
    LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION memtx.can_read(text, text[], memtx.scope) IS 'whether the current role may read a record with this permission block';

/* ----------------------------------------------------------- observability */

CREATE FUNCTION memtx.lineage(record bigint, direction text DEFAULT 'down')
    RETURNS TABLE (record_id bigint, depth integer, parent_ids bigint[], kind memtx.kind,
                   state memtx.state, entity text, attribute text, value jsonb)
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
    RETURN QUERY
    WITH RECURSIVE walk(id, depth) AS (
        SELECT record, 0
        UNION
        SELECT CASE WHEN direction = 'down' THEN e.child ELSE e.parent END, w.depth + 1
          FROM walk w JOIN memtx.edges e
            ON (direction = 'down' AND e.parent = w.id) OR (direction = 'up' AND e.child = w.id)
    ), nodes AS (
        SELECT w.id, min(w.depth) AS depth FROM walk w GROUP BY w.id
    )
    SELECT n.id, n.depth,
           ARRAY(SELECT e.parent FROM memtx.edges e WHERE e.child = n.id ORDER BY e.parent),
           r.kind, r.state, r.entity, r.attribute, r.value
      FROM nodes n JOIN memtx.records r ON r.id = n.id
     ORDER BY n.depth, n.id;
END
$$;
COMMENT ON FUNCTION memtx.lineage(bigint, text) IS 'walk the derived-from DAG from a record, down to its descendants or up to its ancestors; each record once, at its shortest depth';

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
        || '}';
END;
COMMENT ON FUNCTION memtx.lineage_dot(bigint) IS 'the lineage of a record (ancestors and descendants) as Graphviz DOT';

CREATE VIEW memtx.in_flight AS
    SELECT r.id AS record_id, r.tx_id, r.namespace, r.entity, r.attribute, r.created_at AS staged_at
      FROM memtx.records r
     WHERE r.state = 'tentative';
COMMENT ON VIEW memtx.in_flight IS 'tentative records: what the action gate waits for';

CREATE VIEW memtx.review_queue AS
    SELECT c.id AS record_id, c.tx_id, c.namespace, c.entity, c.attribute, c.value,
           ARRAY(SELECT r.id FROM memtx.records r
                  WHERE r.namespace = c.namespace AND r.entity = c.entity
                    AND r.attribute = c.attribute AND r.valid && c.valid
                    AND r.state IN ('committed', 'action_safe')
                    AND r.value::text <> c.value::text
                  ORDER BY r.id) AS rival_ids
      FROM memtx.records c
     WHERE c.state = 'quarantined' AND c.reason = 'needs_review';
COMMENT ON VIEW memtx.review_queue IS 'records quarantined for review, with the active rivals they contest';

CREATE VIEW memtx.stats AS
    SELECT (SELECT count(*) FROM memtx.transactions) AS transactions,
           (SELECT count(*) FROM memtx.transactions WHERE status = 'open') AS open_transactions,
           (SELECT count(*) FROM memtx.records
             WHERE verdict IN ('committed', 'action_safe') AND kind <> 'tool_action') AS commits,
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
COMMENT ON VIEW memtx.stats IS 'protocol counters: commits, quarantines by reason, verifier calls, gate blocks, cascades, leaks, compensations';

/* -------------------------------------------------------------- privileges */

-- Default deny: nothing of memtx is writable except through the API, whose
-- C functions switch to the extension owner for table access.
REVOKE ALL ON ALL TABLES IN SCHEMA memtx FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA memtx FROM PUBLIC;

-- Agents reach memtx through the API functions (EXECUTE is PUBLIC's by
-- default; the harness-only ones check the caller themselves); the schema
-- must be usable for that.
GRANT USAGE ON SCHEMA memtx TO PUBLIC;

-- Records: anyone may SELECT, row-level security shows each role what it may
-- read (owner, a member of a reader role, or public scope).
GRANT SELECT ON memtx.records TO PUBLIC;
ALTER TABLE memtx.records ENABLE ROW LEVEL SECURITY;
CREATE POLICY records_readable ON memtx.records FOR SELECT
    USING (memtx.can_read(owner, readers, scope));

-- Edges: visible when both ends are (the subqueries are themselves filtered).
GRANT SELECT ON memtx.edges TO PUBLIC;
ALTER TABLE memtx.edges ENABLE ROW LEVEL SECURITY;
CREATE POLICY edges_readable ON memtx.edges FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = child)
           AND EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = parent));

-- Transactions: each agent sees its own.
GRANT SELECT ON memtx.transactions TO PUBLIC;
ALTER TABLE memtx.transactions ENABLE ROW LEVEL SECURITY;
CREATE POLICY transactions_own ON memtx.transactions FOR SELECT
    USING (memtx.can_read(agent, NULL, NULL));

-- Read sets and the action log: visible with their transaction.
GRANT SELECT ON memtx.read_set TO PUBLIC;
ALTER TABLE memtx.read_set ENABLE ROW LEVEL SECURITY;
CREATE POLICY read_set_own ON memtx.read_set FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.transactions t WHERE t.id = tx_id));
GRANT SELECT ON memtx.action_log TO PUBLIC;
ALTER TABLE memtx.action_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY action_log_own ON memtx.action_log FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.transactions t WHERE t.id = tx_id));

-- Repair records: visible with the record they concern.
GRANT SELECT ON memtx.rollback_log TO PUBLIC;
ALTER TABLE memtx.rollback_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY rollback_log_readable ON memtx.rollback_log FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = record_id));
GRANT SELECT ON memtx.revocation_registry TO PUBLIC;
ALTER TABLE memtx.revocation_registry ENABLE ROW LEVEL SECURITY;
CREATE POLICY revocation_registry_readable ON memtx.revocation_registry FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = record_id));
GRANT SELECT ON memtx.compensations TO PUBLIC;
ALTER TABLE memtx.compensations ENABLE ROW LEVEL SECURITY;
CREATE POLICY compensations_readable ON memtx.compensations FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = action_id));

-- Registries are configuration, readable by all, written by harness functions.
GRANT SELECT ON memtx.sources, memtx.tools, memtx.role_tiers TO PUBLIC;

-- Views over records apply the reader's row-level security.
ALTER VIEW memtx.in_flight SET (security_invoker = true);
ALTER VIEW memtx.review_queue SET (security_invoker = true);
GRANT SELECT ON memtx.in_flight, memtx.review_queue TO PUBLIC;
-- Counters are global and reveal no record.
GRANT SELECT ON memtx.stats TO PUBLIC;

/* ------------------------------------------------------------------- dumps */

-- User data and its sequences go into pg_dump output.
SELECT pg_catalog.pg_extension_config_dump('memtx.sources', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.tools', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.role_tiers', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.transactions', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.records', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.edges', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.read_set', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.revocation_registry', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.action_log', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.rollback_log', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.compensations', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.clock', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.transaction_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.record_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.action_log_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.rollback_log_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('memtx.compensation_id_seq', '');
