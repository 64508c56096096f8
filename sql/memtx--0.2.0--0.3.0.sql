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

-- §15, §18, §19: memory_recall's properties are recall's arguments, valid_at
-- included, and `semantic` while the companion extension memtx_vector is
-- installed (looked up at each call).
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

-- §9, §11, §13, §17: receipts anchor states, erased means erased, erasure
-- reaches restored copies, lineage walks restored_from.
-- Restored copies of a record are found through restored_from: erase
-- reaches them, lineage walks to them.
CREATE INDEX records_restored_from_idx ON memtx.records (restored_from) WHERE restored_from IS NOT NULL;

-- erase reaches restored copies (src/erase.c); its signature is unchanged.
COMMENT ON FUNCTION memtx.erase(bigint, text) IS 'harness: legal erasure — revoke the record (reason erased, cascade as for revoke) unless revoked already, then replace its value by JSON null in the record and in every copy memtx keeps, and do the same to every record restored from it (and from those); returns the repair log rows';

-- lineage gains its last column, via (its result type changes, and
-- lineage_dot's body depends on it: both are dropped and created again).
DROP FUNCTION memtx.lineage_dot(bigint);
DROP FUNCTION memtx.lineage(bigint, text);
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

-- Receipts of 0.2.0 (those already written, and the backfilled ones of
-- 0.1.0) do not list every record whose state they set: the namespaces the
-- store has now, with the clock position of this upgrade, are checked by the
-- rules those receipts support for what they settled (sql/memtx.sql, §11).
CREATE TABLE memtx.receipt_anchoring (
    namespace   text PRIMARY KEY,
    upgrade_pos bigint NOT NULL
);
COMMENT ON TABLE memtx.receipt_anchoring IS 'namespaces whose receipts began before 0.3.0 (SPEC §17): the clock position at the upgrade, up to which records may have changed state without a receipt that lists them';
REVOKE ALL ON memtx.receipt_anchoring FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('memtx.receipt_anchoring', '');
INSERT INTO memtx.receipt_anchoring (namespace, upgrade_pos)
SELECT n.namespace, (SELECT CASE WHEN c.is_called THEN c.last_value ELSE c.last_value - 1 END FROM memtx.clock c)
  FROM (SELECT t.namespace FROM memtx.transactions t
        UNION SELECT r.namespace FROM memtx.receipts r) n;

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

-- The protocol's predicates (SPEC §6): whether a kind is a view, defined
-- once; receipt_problems, below, and the invariant checker use it.
CREATE FUNCTION memtx.is_view_kind(kind memtx.kind) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN kind = ANY ('{summary,profile,index_entry,shared_copy}'::memtx.kind[]);
COMMENT ON FUNCTION memtx.is_view_kind(memtx.kind) IS 'whether a record of this kind is a view (summary, profile, index_entry, shared_copy), which a cascade quarantines instead of revoking';

-- receipt_problems names the record a problem concerns (a new result column).
DROP FUNCTION memtx.receipt_problems(text);
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

-- §17 Deep DAGs are linear; §8 check_invariants(namespace).  The ancestry
-- predicates gain set-wise forms (one walk for a set of records), through
-- which the one-record forms are now defined; the history trigger matches
-- an UPDATE's old and new rows with a hash join, and the reference trigger
-- probes a record by its id alone, so neither reads a number of rows that
-- grows with the statement or the store; check_invariants takes a namespace.

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
CREATE OR REPLACE FUNCTION memtx.ancestors(record bigint) RETURNS SETOF bigint
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT a.id FROM memtx.ancestors_of(ARRAY[ancestors.record]) a(id);
END;
COMMENT ON FUNCTION memtx.ancestors(bigint) IS 'the transitive ancestors of a record (derived_from, without the record itself), each once';

-- The transitive descendants of one record, without the record itself.
CREATE OR REPLACE FUNCTION memtx.descendants(record bigint) RETURNS SETOF bigint
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT d.id FROM memtx.descendants_of(ARRAY[descendants.record]) d(id);
END;
COMMENT ON FUNCTION memtx.descendants(bigint) IS 'the transitive descendants of a record (without the record itself), each once';

CREATE OR REPLACE FUNCTION memtx.history_write() RETURNS trigger
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

CREATE OR REPLACE FUNCTION memtx.reference_check() RETURNS trigger
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

DROP FUNCTION memtx.check_invariants();
CREATE FUNCTION memtx.check_invariants(namespace text DEFAULT NULL)
    RETURNS TABLE (invariant text, record_id bigint, detail text)
    AS 'MODULE_PATHNAME', 'memtx_check_invariants'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.check_invariants(text) IS 'harness: recompute I1, I2, G3 and single truth from the records, edges and action log, of one namespace or (NULL) all; no rows when all hold';

-- §3 Transactions, snapshots, isolation (the order the §8 checker's I1
-- audit relies on): memtx.happened_before is STRICT.  It answered NULL for
-- a NULL argument before; the marking says so to pg_proc and the planner,
-- as for the other query-free C functions.
ALTER FUNCTION memtx.happened_before(xid8, bigint, pg_snapshot, xid8, bigint) STRICT;

-- §11 Receipts (SPEC §21: what a write costs).  receipts_subject_idx is
-- gone: no call reads receipts by kind and subject, and it cost every receipt
-- an index entry when appended and another when chained (receipt_problems,
-- above, finds the erasure that excuses an erased record's digest among the
-- erasures it gathers anyway instead of by a lookup per receipt).
DROP INDEX memtx.receipts_subject_idx;

-- §8 Invariants and the checker: the invariants as a catalog object,
-- memtx.invariants, whose codes are the only values of check_invariants'
-- column invariant (SPEC §8's I1, I2, G3; I4 to I8 for single truth and the
-- later checks, which 0.2.0 reported as single_truth, fenced_epoch, receipts,
-- receipt_chain and proposal).
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
COMMENT ON FUNCTION memtx.check_invariants(text) IS 'harness: recompute every invariant of memtx.invariants (I1, I2, G3, I4 to I8) from the records, edges, action log and receipts, of one namespace or (NULL) all; one row per violation, its invariant a code of memtx.invariants; no rows when all hold';

-- §10 Exact-head proposals and §4/§8/§16 retraction: the head set and the
-- retracted records, each defined once (the commit pipeline, resolve,
-- propose, restore, the action gate, the visibility rules and the invariant
-- checker all use these).
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

CREATE VIEW memtx.retracted WITH (security_invoker = true) AS
    SELECT r.id, r.namespace FROM memtx.records r WHERE r.state = 'revoked'
    UNION ALL
    SELECT rr.record_id, rr.namespace FROM memtx.revocation_registry rr;
COMMENT ON VIEW memtx.retracted IS 'the retracted records: revoked, or in the revocation registry (a record may appear twice)';
REVOKE ALL ON memtx.retracted FROM PUBLIC;
GRANT SELECT ON memtx.retracted TO PUBLIC;

-- §1, §3 References between tables (issue 31: batches set-wise).  The
-- transaction an inserted record names is checked once per INSERT statement
-- over its new rows (memtx.reference_check_inserted) instead of by a
-- plpgsql call per row; records_references keeps checking updates of
-- tx_id and namespace row by row.
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

REVOKE ALL ON FUNCTION memtx.reference_check_inserted() FROM PUBLIC;
DROP TRIGGER records_references ON memtx.records;
CREATE TRIGGER records_references BEFORE UPDATE OF tx_id, namespace ON memtx.records
    FOR EACH ROW EXECUTE FUNCTION memtx.reference_check();
CREATE TRIGGER records_references_inserted AFTER INSERT ON memtx.records
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION memtx.reference_check_inserted();

-- memtx.search: memtx.recall's ranking over memtx.lookup's records, without a
-- transaction (what a store's search reads).
-- The active records only, for memtx.search: a search of the present reads
-- and ranks none of the versions a slot's updates superseded.  A new record
-- adds one entry; a superseded one leaves the index.
CREATE INDEX records_recall_active_idx ON memtx.records USING gin (memtx.recall_document(entity, attribute, value))
    WHERE memtx.is_active(state);

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

-- The slot index with the entity in byte order (text_pattern_ops) and the id
-- last: a read of the entities under a prefix (starts_with, leakproof, so
-- also under row-level security) is an index range, not a read of the
-- namespace, and the first record of a slot after a given id is one probe;
-- and an index of the revoked records of each slot (a store's deletes).
DROP INDEX memtx.records_slot_idx;
CREATE INDEX records_slot_idx ON memtx.records (namespace, entity text_pattern_ops, attribute, id);
CREATE INDEX records_revoked_idx ON memtx.records (namespace, entity, attribute, id) WHERE state = 'revoked';
