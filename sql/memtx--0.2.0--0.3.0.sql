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
