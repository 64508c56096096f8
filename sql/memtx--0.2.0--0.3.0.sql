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

-- §15, §19: memtx.tool_specs offers memory_recall's `semantic` property
-- while the companion extension memtx_vector is installed (looked up at
-- each call); the rest of the function is unchanged.
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
            'entity_prefix', nonempty || '{"description": "Only records whose entity starts with this text (a plain prefix, not a pattern), e.g. \"customer:42\"."}')
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
