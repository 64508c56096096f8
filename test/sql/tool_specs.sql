-- memtx.tool_specs(format): tool definitions for LLM function calling
-- (SPEC §15), and the rule register_tool applies to tool names.
\i test/sql/include/prelude.psql

-- the memory tools come first, in a fixed order; no domain tool yet
SELECT ord, t->'function'->>'name' AS name, t->>'type' AS type, t->'function'->>'description' AS description
  FROM jsonb_array_elements(memtx.tool_specs()) WITH ORDINALITY AS x(t, ord);

-- each memory tool's properties (the named arguments of its function, tx
-- and namespace left out), their types, and what is required
SELECT t->'function'->>'name' AS tool, p.key AS property,
       coalesce(p.value->>'type', '(any)') AS type,
       p.value->'items'->>'type' AS items, p.value->>'description' AS description,
       concat_ws(' ', 'min ' || (p.value->>'minimum'), 'max ' || (p.value->>'maximum'),
                 'format ' || (p.value->>'format'), 'enum ' || (p.value->>'enum'),
                 'default ' || (p.value->>'default')) AS constraints,
       t->'function'->'parameters'->'required' ? p.key AS required
  FROM jsonb_array_elements(memtx.tool_specs('openai')) t,
       jsonb_each(t->'function'->'parameters'->'properties') p
 ORDER BY t->'function'->>'name', p.key;

-- the properties are exactly the named arguments of the function behind
-- each tool (tx and namespace excepted, and outcome's harness-only agent:
-- no agent-facing tool has an agent parameter) and required is exactly
-- those without a default
WITH fn(tool, func) AS (VALUES ('memory_recall', 'memtx.recall(bigint,text,integer,text,timestamptz)'::regprocedure),
                               ('memory_read', 'memtx.read(bigint,text,text)'),
                               ('memory_stage', 'memtx.stage(bigint,text,text,jsonb,memtx.kind,text,double precision,bigint[],memtx.scope,text[],text[],tstzrange,timestamptz,bigint,text)'),
                               ('memory_outcome', 'memtx.outcome(text,text,text)'),
                               ('memory_commit', 'memtx.commit(bigint)'),
                               ('memory_abort', 'memtx.abort(bigint)'),
                               ('memory_revoke', 'memtx.revoke(bigint,text)')),
     arg AS (SELECT fn.tool, a.name, a.n > p.pronargs - p.pronargdefaults AS has_default
               FROM fn JOIN pg_proc p ON p.oid = fn.func,
                    unnest(p.proargnames[1:p.pronargs]) WITH ORDINALITY a(name, n)
              WHERE a.name NOT IN ('tx', 'namespace', 'agent')),
     spec AS (SELECT t->'function'->>'name' AS tool, t->'function'->'parameters' AS params
                FROM jsonb_array_elements(memtx.tool_specs()) t)
SELECT fn.tool,
       (SELECT array_agg(name ORDER BY name) FROM arg WHERE arg.tool = fn.tool)
         IS NOT DISTINCT FROM (SELECT array_agg(k ORDER BY k) FROM spec, jsonb_object_keys(spec.params->'properties') k
                                WHERE spec.tool = fn.tool) AS same_properties,
       (SELECT array_agg(name ORDER BY name) FROM arg WHERE arg.tool = fn.tool AND NOT has_default)
         IS NOT DISTINCT FROM (SELECT array_agg(k ORDER BY k) FROM spec, jsonb_array_elements_text(spec.params->'required') k
                                WHERE spec.tool = fn.tool) AS same_required
  FROM fn ORDER BY 1;

-- every parameters object is an object schema that allows nothing else and
-- requires only its own properties
SELECT t->'function'->>'name' AS tool
  FROM jsonb_array_elements(memtx.tool_specs()) t
 WHERE t->'function'->'parameters'->>'type' IS DISTINCT FROM 'object'
    OR t->'function'->'parameters'->'additionalProperties' IS DISTINCT FROM 'false'
    OR EXISTS (SELECT FROM jsonb_array_elements_text(t->'function'->'parameters'->'required') r
                WHERE NOT t->'function'->'parameters'->'properties' ? r);

-- stage offers every kind but tool_action (stage refuses it) and every scope
SELECT memtx.tool_specs()->2->'function'->'parameters'->'properties'->'kind'->'enum' AS kinds,
       memtx.tool_specs()->2->'function'->'parameters'->'properties'->'scope'->'enum' AS scopes;

-- domain tools follow, by name, named as registered, with their
-- reversibility (and compensator) in the description
SELECT memtx.register_tool('issue_refund', false);
SELECT memtx.register_tool('hold_order', true, 'release_order');
SELECT memtx.register_tool('Ping-2', true);
SELECT ord, t->'function'->>'name' AS name, t->'function'->>'description' AS description
  FROM jsonb_array_elements(memtx.tool_specs()) WITH ORDINALITY AS x(t, ord)
 WHERE ord > 7;
SELECT t->'function'->>'name' AS tool, t->'function'->'parameters' AS parameters
  FROM jsonb_array_elements(memtx.tool_specs()) t
 WHERE t->'function'->>'name' = 'issue_refund';

-- the three formats: one definition, three envelopes
SELECT (SELECT array_agg(DISTINCT k ORDER BY k) FROM jsonb_array_elements(memtx.tool_specs('openai')) t, jsonb_object_keys(t) k) AS openai,
       (SELECT array_agg(DISTINCT k ORDER BY k) FROM jsonb_array_elements(memtx.tool_specs('openai')) t, jsonb_object_keys(t->'function') k) AS openai_function,
       (SELECT array_agg(DISTINCT k ORDER BY k) FROM jsonb_array_elements(memtx.tool_specs('anthropic')) t, jsonb_object_keys(t) k) AS anthropic,
       (SELECT array_agg(DISTINCT k ORDER BY k) FROM jsonb_array_elements(memtx.tool_specs('mcp')) t, jsonb_object_keys(t) k) AS mcp;
SELECT (SELECT jsonb_agg(jsonb_build_object('name', t->'function'->'name', 'description', t->'function'->'description',
                                            'schema', t->'function'->'parameters'))
          FROM jsonb_array_elements(memtx.tool_specs('openai')) t)
     = (SELECT jsonb_agg(jsonb_build_object('name', t->'name', 'description', t->'description', 'schema', t->'input_schema'))
          FROM jsonb_array_elements(memtx.tool_specs('anthropic')) t) AS anthropic_same,
       (SELECT jsonb_agg(jsonb_build_object('name', t->'function'->'name', 'description', t->'function'->'description',
                                            'schema', t->'function'->'parameters'))
          FROM jsonb_array_elements(memtx.tool_specs('openai')) t)
     = (SELECT jsonb_agg(jsonb_build_object('name', t->'name', 'description', t->'description', 'schema', t->'inputSchema'))
          FROM jsonb_array_elements(memtx.tool_specs('mcp')) t) AS mcp_same,
       memtx.tool_specs() = memtx.tool_specs('openai') AS openai_default;

-- no tool anywhere has a tier, agent or isolation parameter (nor tx or
-- namespace, which the runner supplies): no such key at any depth
SELECT f, jsonb_path_query_array(memtx.tool_specs(f),
                                 'strict $.**.properties.keyvalue() ? (@.key == "tier" || @.key == "agent" || @.key == "isolation" || @.key == "tx" || @.key == "namespace").key') AS forbidden
  FROM unnest(ARRAY['openai', 'anthropic', 'mcp']) f;
-- the path query finds keys where they are (it can fail)
SELECT jsonb_path_query_array(memtx.tool_specs(),
                              'strict $.**.properties.keyvalue() ? (@.key == "entity_prefix").key') AS found;

-- bad format, NULL format
SELECT pg_temp.try('SELECT memtx.tool_specs(''gemini'')');
SELECT pg_temp.try('SELECT memtx.tool_specs(''OpenAI'')');
SELECT pg_temp.try('SELECT memtx.tool_specs(NULL)');

-- the name rule: ^[A-Za-z0-9_-]{1,64}$, not beginning memory_ (a long
-- name is 22023 too, not 54000)
SELECT left(n, 20) AS name, length(n), pg_temp.try(format('SELECT memtx.register_tool(%L, false)', n)) ~ '^22023: invalid tool name' AS refused
  FROM unnest(ARRAY['memory_recall', 'memory_', 'send email', 'tool:x', 'naïve', '', repeat('x', 65), repeat('x', 300),
                    repeat('x', 64), 'Memory_x', 'memoryx']) n;
SELECT pg_temp.try('SELECT memtx.register_tool(''memory_recall'', true)');
SELECT name FROM memtx.tools ORDER BY name COLLATE "C";

-- register_tool and tool_specs apply one rule: a name register_tool
-- accepts is listed, a refused one (here forced into the table as an old
-- 0.1.0 registration could be) is not
CREATE TEMP TABLE candidate(name) AS
    VALUES ('a'), ('A-b_9'), (repeat('y', 64)), (repeat('y', 65)), ('memory_x'), ('memory-x'),
           ('x.y'), ('x y'), ('x/y'), ('émile'), ('memory'), ('MEMORY_x'), ('-'), (E'x\n');
SELECT c.name, pg_temp.try(format('SELECT memtx.register_tool(%L, true)', c.name)) = 'ok' AS accepted
  FROM candidate c ORDER BY c.name COLLATE "C";
INSERT INTO memtx.tools (name, reversible)
    SELECT c.name, true FROM candidate c WHERE NOT EXISTS (SELECT FROM memtx.tools t WHERE t.name = c.name);
SELECT c.name
  FROM candidate c
 WHERE (pg_temp.try(format('SELECT memtx.register_tool(%L, true)', c.name)) = 'ok')
       <> EXISTS (SELECT FROM jsonb_array_elements(memtx.tool_specs()) t WHERE t->'function'->>'name' = c.name);

-- any role may list the tools; it runs without a memtx transaction, under
-- any isolation level, and writes nothing
CREATE ROLE regress_memtx_specs_agent;
SET ROLE regress_memtx_specs_agent;
SELECT jsonb_array_length(memtx.tool_specs('mcp')) AS tools;
RESET ROLE;
BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY;
SELECT jsonb_array_length(memtx.tool_specs('anthropic')) AS tools, pg_current_xact_id_if_assigned() IS NULL AS no_xid;
COMMIT;
DROP ROLE regress_memtx_specs_agent;
