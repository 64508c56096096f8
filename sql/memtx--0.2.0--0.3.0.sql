/*
 * memtx 0.2.0 -> 0.3.0.
 *
 * A step brings a store installed at 0.2.0 to the catalog of sql/memtx.sql
 * (what CREATE EXTENSION memtx runs); test/sql/upgrade.sql compares the two.
 * Sections are labelled with the SPEC section they serve, like
 * sql/memtx.sql.
 */
\echo Use "ALTER EXTENSION memtx UPDATE TO '0.3.0'" to load this file. \quit

-- §7, §9: the 0.1.0 -> 0.2.0 step redefined memtx.review_queue with CREATE
-- OR REPLACE VIEW, which dropped its security_invoker option: the view read
-- memtx.records with its owner's rights, so any role saw every record
-- quarantined for review, values included.  It applies the reader's
-- row-level security again, as memtx.in_flight does.
ALTER VIEW memtx.review_queue SET (security_invoker = true);

-- §17, §18: the reads without a transaction answer namespace members only;
-- lookup and recall read at a validity instant (valid_at); act says whether
-- it returned an effect key's stored decision (repeated).
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

DROP FUNCTION memtx.lookup(text, text, text);
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

DROP FUNCTION memtx.recall(bigint, text, integer, text);
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

DROP FUNCTION memtx.act(bigint, text, jsonb, bigint[], text);
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

CREATE OR REPLACE FUNCTION memtx.read_as_of(at timestamptz, entity text DEFAULT NULL, attribute text DEFAULT NULL,
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

-- §15, §18: memory_recall's properties are recall's arguments, valid_at
-- included.
CREATE OR REPLACE FUNCTION memtx.tool_specs(format text DEFAULT 'openai') RETURNS jsonb
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
            'valid_at', '{"type": "string", "format": "date-time", "description": "Only records whose validity contains this instant, an ISO 8601 timestamp with a UTC offset (e.g. now, for a store whose items expire). Omit to ignore validity."}'::jsonb),
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

-- §17: the durable read set survives restarts.
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

-- §17: proposal ids belong to their agent.  A record's proposer is the agent
-- of the transaction that staged it; an id is unique per (namespace,
-- proposer), so another agent's use of the same string is another proposal.
-- The proposals of a 0.2.0 store keep their ids, re-keyed per agent.
ALTER TABLE memtx.records ADD COLUMN proposer text;
ALTER TABLE memtx.records DISABLE TRIGGER records_lifecycle, DISABLE TRIGGER records_history_update;
UPDATE memtx.records r SET proposer = t.agent
  FROM memtx.transactions t WHERE t.id = r.tx_id AND r.proposal IS NOT NULL;
ALTER TABLE memtx.records ENABLE TRIGGER records_lifecycle, ENABLE TRIGGER records_history_update;
ALTER TABLE memtx.records ADD CONSTRAINT records_proposer_check CHECK ((proposal IS NULL) = (proposer IS NULL));
DROP INDEX memtx.records_proposal_idx;
CREATE UNIQUE INDEX records_proposal_idx ON memtx.records (namespace, proposer, proposal) WHERE proposal IS NOT NULL;

DROP FUNCTION memtx.outcome(text, text);
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

-- §9 Observability: memtx.stats names what it counts.  A cascade's
-- quarantine is not a commit's: three columns are added at the end
-- (commit_quarantines, the same count as quarantines under a name that says
-- so; cascade_quarantines; cascade_revocations) and every column gets a
-- comment.  CREATE OR REPLACE VIEW keeps the grants; the view has no
-- reloptions to lose.
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

-- §20 Distribution across nodes: the node number (set_node, node), the id
-- and namespace placement functions the router routes by.  An existing
-- store is node 0: its sequences stay as they are.
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
