/**
 * The knowledge-graph tools of the reference MCP memory server
 * (@modelcontextprotocol/server-memory) on memtx: create_entities,
 * create_relations, add_observations, delete_entities, delete_observations,
 * delete_relations, read_graph, search_nodes and open_nodes, with the
 * reference's names, input and output schemas, and result shapes (text and
 * structuredContent), so a host can swap the reference for memtx-mcp.
 *
 * The reference keeps the graph in one JSONL file that every call reads,
 * changes and renames over the old one, with no lock: two clients writing at
 * once (two processes on one file, or two overlapping calls of one process)
 * each write back the graph they read, and one loses the other's update.
 * Here the graph is memtx records in the server's namespace, one slot per
 * fact, so writers of different facts never touch the same record:
 *
 *   entity       entity `kg:<name>`, attribute `entityType`, value the type
 *   observation  entity `kg:<name>`, attribute `observation:<sha256 of the
 *                text>`, value the text, derived from the entity record
 *   relation     entity `kg:<from>`, attribute `relation:<sha256 of the JSON
 *                array [relationType, to]>`, value {from, to, relationType},
 *                derived from the entity records of `from` and `to` that exist
 *
 * (digests keep the slot key short and unambiguous whatever the text).  Two
 * agents adding different observations to one entity stage on different
 * slots and both commit; two adding the same text corroborate (same value)
 * and it is listed once.  Two creating one entity with different types race
 * on one slot: the later commit is quarantined (stale_late_write) and reports
 * nothing created, as the reference does for an existing name.
 *
 * Writes.  create_entities, create_relations and add_observations are each
 * one statement, one round trip: a memtx transaction of its own (not the
 * server's current one, so it neither commits nor waits for the agent's own
 * staging) begun, `memtx.read` of the slots the call names, the facts not
 * there yet staged (`memtx.stage_many`), and committed -- a belief commit;
 * what the pipeline admits is what the tool reports as created or added.
 * The statement is one SQL transaction: a call that fails stores nothing
 * at all, and an add to a missing entity aborts its memtx transaction
 * before staging anything.  Deletes read the facts named (one statement),
 * then revoke them in one statement (`memtx.revoke`, all or nothing), so
 * derived facts go with them (an entity's observations and relations
 * cascade); relations whose endpoint had no entity record when they were
 * made (the reference allows that) are revoked by name.
 *
 * Reads.  read_graph, search_nodes and open_nodes are one statement each
 * and write nothing: the active records of the graph as a direct SELECT
 * sees them (row-level security; no memtx transaction, no read set, as
 * `memtx.lookup` reads), not the whole graph unless asked for it.
 * open_nodes reads the named entities' records by the slot index;
 * search_nodes matches as the reference does (a case-insensitive substring
 * of a name, a type or an observation), in two steps: the database finds
 * the candidate entities (ILIKE over each entity and observation record,
 * under its case folding), and the exact match is the reference's
 * (`toLowerCase().includes`) over the candidates' records.  Served by
 * indexes when the database has the optional graph search (`setupSearch`,
 * `memtx-mcp --setup-graph-search`, once, by a superuser): a trigram index
 * (pg_trgm) over those records and an index of relations by their `to`,
 * read through `memtx_kg.node_records`, a function that finds the ids with
 * the caller's read permission and lets row-level security have the last
 * word on the rows; without it, the same statement scans the namespace's
 * graph in the server.  Neither is a read of the whole graph by the client.
 *
 * Order and content follow the reference: entities, their observations and
 * relations in creation order (record id order).  Deliberate differences: a
 * name, relation or observation repeated within one call is created once
 * (the graph is a set; the reference stores the repeat), and a record memtx
 * refuses (e.g. quarantined by a concurrent delete of its entity) is left
 * out of what the call reports.
 *
 * Each call is one statement (two for a delete) outside any SQL
 * transaction block, so calls of one server process may overlap on its one
 * connection: their memtx transactions are as independent as two clients'.
 * A serialization failure or deadlock (SQLSTATE class 40) repeats the call's
 * statement, a few times.
 *
 * @module memtx/kg
 */

import { createHash } from 'node:crypto';
import AjvModule from 'ajv';

import { DatabaseUnavailable } from './connection.js';
import { MemtxError, NotFound, vectorText } from './memory.js';

const PREFIX = 'kg:';
const TYPE = 'entityType';
const OBSERVATION = 'observation:';
const RELATION = 'relation:';
const RETRIES = 5;
/** The reference's resource: the whole graph as JSON. */
export const GRAPH_URI = 'memory://knowledge-graph';

/** @typedef {{ name: string, entityType: string, observations: string[] }} Entity */
/** @typedef {{ from: string, to: string, relationType: string }} Relation */
/** @typedef {{ entities: Entity[], relations: Relation[] }} Graph */
/** @typedef {{ id: number, entity: string, attribute: string, value: any }} GraphRecord */

// ------------------------------------------------------------- schemas
// As the reference lists them (zod through the SDK, JSON Schema draft-07).

const DRAFT = 'http://json-schema.org/draft-07/schema#';

/** @param {string} [description] */
const text = (description) => ({ type: 'string', ...(description && { description }) });
/** @param {string} [description] */
const texts = (description) => ({ type: 'array', items: { type: 'string' }, ...(description && { description }) });

/**
 * An object schema; output schemas are closed (additionalProperties false).
 * @param {Record<string, any>} properties @param {boolean} closed
 */
function object(properties, closed) {
  return {
    type: 'object', properties, required: Object.keys(properties),
    ...(closed && { additionalProperties: false }),
  };
}

/** @param {Record<string, any>} properties @param {boolean} closed */
const top = (properties, closed) => ({ ...object(properties, closed), $schema: DRAFT });

/** @param {boolean} closed */
const entitySchema = (closed) => object({
  name: text('The name of the entity'),
  entityType: text('The type of the entity'),
  observations: texts('An array of observation contents associated with the entity'),
}, closed);

/** @param {boolean} closed */
const relationSchema = (closed) => object({
  from: text('The name of the entity where the relation starts'),
  to: text('The name of the entity where the relation ends'),
  relationType: text('The type of the relation'),
}, closed);

const GRAPH_OUTPUT = top({
  entities: { type: 'array', items: entitySchema(true) },
  relations: { type: 'array', items: relationSchema(true) },
}, true);
const DONE_OUTPUT = top({ success: { type: 'boolean' }, message: { type: 'string' } }, true);

/**
 * @param {boolean} readOnly @param {boolean} destructive
 * @returns {Record<string, boolean>}
 */
const hints = (readOnly, destructive) => ({
  readOnlyHint: readOnly, destructiveHint: destructive, idempotentHint: readOnly || destructive,
  openWorldHint: false,
});
const WRITE = hints(false, false);
const DELETE = hints(false, true);
const READ = hints(true, false);

// ------------------------------------------------------- the graph in memtx

/** @param {string} s */
const digest = (s) => createHash('sha256').update(s, 'utf8').digest('hex');
/** @param {string} name */
const entityOf = (name) => PREFIX + name;
/** @param {string} content */
const observationSlot = (content) => OBSERVATION + digest(content);
/** @param {Relation} r */
const relationSlot = (r) => RELATION + digest(JSON.stringify([r.relationType, r.to]));
/** @param {Relation} r */
const relationKey = (r) => JSON.stringify([r.from, r.relationType, r.to]);

/**
 * The graph of a set of records, with the record ids behind each fact
 * (several when concurrent writers corroborated one fact).
 */
class Snapshot {
  /** @param {GraphRecord[]} records */
  constructor(records) {
    /** @type {Map<string, { entityType: string, ids: number[], observations: Map<string, number[]> }>} */
    this.entities = new Map();
    /** @type {Map<string, { relation: Relation, ids: number[] }>} */
    this.relations = new Map();
    const observations = [];
    for (const r of [...records].sort((a, b) => a.id - b.id)) {
      if (!r.entity.startsWith(PREFIX)) continue;
      const name = r.entity.slice(PREFIX.length);
      if (r.attribute === TYPE && typeof r.value === 'string') {
        const entity = this.entities.get(name);
        if (entity) entity.ids.push(r.id);
        else this.entities.set(name, { entityType: r.value, ids: [r.id], observations: new Map() });
      } else if (r.attribute.startsWith(OBSERVATION) && typeof r.value === 'string') {
        observations.push({ name, content: r.value, id: r.id });
      } else if (r.attribute.startsWith(RELATION) && r.value && typeof r.value === 'object') {
        const v = /** @type {any} */ (r.value);
        const relation = { from: String(v.from), to: String(v.to), relationType: String(v.relationType) };
        const key = relationKey(relation);
        const known = this.relations.get(key);
        if (known) known.ids.push(r.id);
        else this.relations.set(key, { relation, ids: [r.id] });
      }
    }
    for (const { name, content, id } of observations) {
      const list = this.entities.get(name)?.observations;
      if (!list) continue;
      list.set(content, [...(list.get(content) ?? []), id]);
    }
  }

  /** @returns {Graph} */
  graph() {
    return {
      entities: [...this.entities].map(([name, e]) => ({
        name, entityType: e.entityType, observations: [...e.observations.keys()],
      })),
      relations: [...this.relations.values()].map((r) => r.relation),
    };
  }
}

/**
 * The entities that pass, and the relations with an endpoint among them
 * (as the reference's search_nodes and open_nodes).
 * @param {Graph} graph @param {(e: Entity) => boolean} keep
 * @returns {Graph}
 */
function subgraph(graph, keep) {
  const entities = graph.entities.filter(keep);
  const names = new Set(entities.map((e) => e.name));
  return { entities, relations: graph.relations.filter((r) => names.has(r.from) || names.has(r.to)) };
}

/** The reference's error for an add to a missing entity (reported as its message). */
class GraphError extends Error {}

// ------------------------------------------------------------ the statements

const RECORD_COLUMNS = 'r.id, r.entity, r.attribute, r.value';

/** The active records of the namespace's graph (row-level security applies). */
const GRAPH_SQL = `SELECT ${RECORD_COLUMNS} FROM memtx.records r
   WHERE r.namespace = $1::text AND pg_catalog.starts_with(r.entity, 'kg:') AND memtx.is_active(r.state)`;

/** The active records of the named entities (entity names in $2), by the slot index. */
const ENTITIES_SQL = `SELECT ${RECORD_COLUMNS} FROM memtx.records r
   WHERE r.namespace = $1::text AND r.entity = ANY ($2::text[]) AND memtx.is_active(r.state)`;

/*
 * Search.  The text an entity record (its name and type) and an
 * observation record (its entity's name and text) are found by, and the
 * records that have one: the trigram index of the optional setup is over
 * exactly this expression and predicate, so the planner can use it.
 */
const SEARCHED = String.raw`pg_catalog.starts_with(entity, 'kg:')
       AND (attribute = 'entityType' OR pg_catalog.starts_with(attribute, 'observation:'))
       AND memtx.is_active(state)`;
const DOCUMENT = String.raw`(pg_catalog.substr(entity, 4) || E'\n' || (value #>> '{}'::text[]))`;
/** The records of relations, which the optional setup indexes by their `to`. */
const RELATIONS = String.raw`pg_catalog.starts_with(entity, 'kg:') AND pg_catalog.starts_with(attribute, 'relation:')
       AND memtx.is_active(state)`;
/** $2, a query, as an ILIKE pattern matching it anywhere (\ % _ taken literally). */
const PATTERN = String.raw`'%' || pg_catalog.replace(pg_catalog.replace(pg_catalog.replace($2, '\', '\\'), '%', '\%'), '_', '\_') || '%'`;

/**
 * The names of the entities with a record (entity or observation) whose
 * DOCUMENT matches `query` as ILIKE judges it, in namespace `ns`; `readable`
 * is the condition on a record row `r` that the reader may read it.
 * @param {string} ns @param {string} query @param {string} readable
 */
const matchingNames = (ns, query, readable) => `
    SELECT DISTINCT pg_catalog.substr(r.entity, 4) AS name FROM memtx.records r
     WHERE r.namespace = ${ns} AND ${SEARCHED.replace(/\b(entity|attribute|state)\b/g, 'r.$1')}
       AND ${DOCUMENT.replace(/\b(entity|value)\b/g, 'r.$1')} ILIKE ${PATTERN.replace('$2', query)}
       AND ${readable}`;

/**
 * The ids of the records of a subgraph, given the names of its entities
 * (rows `h.name` of `names`, an SQL FROM item): each entity's active records,
 * by the slot index, and the active relations to it, by their `to`.
 * @param {string} ns @param {string} names @param {string} readable
 */
const subgraphIds = (ns, names, readable) => `
    SELECT DISTINCT x.id FROM ${names}, LATERAL (
      SELECT r.id FROM memtx.records r
       WHERE r.namespace = ${ns} AND r.entity = 'kg:' || h.name AND memtx.is_active(r.state) AND ${readable}
      UNION ALL
      SELECT r.id FROM memtx.records r
       WHERE r.namespace = ${ns} AND (r.value ->> 'to') = h.name
         AND ${RELATIONS.replace(/\b(entity|attribute|state)\b/g, 'r.$1')} AND ${readable}) x`;

/** A subgraph's records through memtx_kg.node_records (the optional setup's indexes). */
const NODES_INDEXED_SQL = `SELECT ${RECORD_COLUMNS} FROM memtx.records r
   WHERE r.namespace = $1::text AND memtx.is_active(r.state)
     AND r.id = ANY (ARRAY(SELECT memtx_kg.node_records($1::text, $2::text, $3::text[])))`;
/**
 * The same records without the setup: the same queries, through row-level
 * security (which keeps the trigram and `to` indexes out of reach: the
 * matching names and the relations are found by reading the namespace).
 */
const NODES_SCANNED_SQL = `SELECT ${RECORD_COLUMNS} FROM memtx.records r
   WHERE r.namespace = $1::text AND memtx.is_active(r.state) AND r.id IN (${subgraphIds('$1::text',
  `(${matchingNames('$1::text', '$2::text', 'true')} UNION SELECT pg_catalog.unnest($3::text[])) h`, 'true')})`;

/**
 * Whether `role` (an SQL expression naming a role) may read the record row
 * `r`: memtx.can_read's rule (src/permissions.c) for a given role -- scope
 * public, or membership in the record's owner or one of its readers (names
 * of roles that do not exist grant nothing).  test/kg-search.test.js holds it
 * equal to memtx.can_read.
 * @param {string} role @param {string} r
 */
const readableBy = (role, r) => `(${r}.scope = 'public' OR ${r}.owner = ${role}
       OR EXISTS (SELECT FROM pg_catalog.pg_roles g
                   WHERE g.rolname = ${r}.owner AND pg_catalog.pg_has_role(${role}, g.oid, 'MEMBER'))
       OR EXISTS (SELECT FROM pg_catalog.unnest(${r}.readers) x JOIN pg_catalog.pg_roles g ON g.rolname = x
                   WHERE pg_catalog.pg_has_role(${role}, g.oid, 'MEMBER')))`;

/**
 * The optional setup of indexed search (run by setupSearch as a superuser):
 * pg_trgm, a trigram index over the searched records' DOCUMENT, an index of
 * relations by namespace and `to`, and schema memtx_kg with the function
 * that reads them.  Row-level security hides those indexes from an agent's
 * own query (no GIN operator and no `->>` is leakproof, so PostgreSQL
 * evaluates an agent's ILIKE only after the security policy, on every row),
 * so memtx_kg.node_records reads them as its owner and applies the reading
 * rule itself (readableBy), for the role that calls it: the caller's
 * current role (the default is evaluated in the caller's context), or any
 * role the session's user may SET ROLE to, nothing more.  It returns ids
 * only: the caller reads the rows under row-level security, which has the
 * last word.
 */
const SETUP_FUNCTIONS = [
  'CREATE SCHEMA IF NOT EXISTS memtx_kg',
  "COMMENT ON SCHEMA memtx_kg IS 'indexed search of memtx-mcp''s knowledge graph (memtx-mcp --setup-graph-search)'",
  'GRANT USAGE ON SCHEMA memtx_kg TO PUBLIC',
  // PL/pgSQL: its plan is kept for the session
  `CREATE OR REPLACE FUNCTION memtx_kg.can_read(role text, owner text, readers text[], scope memtx.scope)
     RETURNS boolean LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
     AS $$ BEGIN RETURN ${readableBy('can_read.role', 'can_read')}; END $$`,
  "COMMENT ON FUNCTION memtx_kg.can_read(text, text, text[], memtx.scope) IS 'memtx.can_read for the given role'",
  // The names matching a query are found by a statement planned for its pattern (EXECUTE: a plan
  // for the values given; no generic plan can tell the pattern the trigram index serves); the rest
  // is a generic plan, made once per session (index lookups for each name, whatever the names).
  `CREATE OR REPLACE FUNCTION memtx_kg.node_records(namespace text, query text, names text[],
                                                   reader text DEFAULT current_user)
     RETURNS SETOF bigint LANGUAGE plpgsql STABLE SECURITY DEFINER
     SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $fn$
     DECLARE
       hits text[] := coalesce(node_records.names, '{}');
       matched text[];
     BEGIN
       IF reader IS NULL OR NOT pg_catalog.pg_has_role(session_user, reader, 'MEMBER') THEN
         RAISE EXCEPTION 'permission denied to read as role "%"', reader
           USING ERRCODE = '42501', DETAIL = 'The session''s user is not a member of that role.';
       END IF;
       IF node_records.query IS NOT NULL THEN
         EXECUTE $q$SELECT ARRAY(${matchingNames('$1', '$2',
    "(r.scope = 'public' OR r.owner = $3 OR memtx_kg.can_read($3, r.owner, r.readers, r.scope))")})$q$
           INTO STRICT matched USING node_records.namespace, node_records.query, node_records.reader;
         hits := hits || matched;
       END IF;
       RETURN QUERY ${subgraphIds('node_records.namespace', 'pg_catalog.unnest(hits) h(name)',
    readableBy('node_records.reader', 'r'))};
     END
     $fn$`,
  `COMMENT ON FUNCTION memtx_kg.node_records(text, text, text[], text) IS
     'ids of the active records of the knowledge-graph entities matching query (ILIKE) or named, and of the relations to them, that reader (default: the calling role) may read'`,
  'REVOKE ALL ON FUNCTION memtx_kg.node_records(text, text, text[], text) FROM PUBLIC',
  'GRANT EXECUTE ON FUNCTION memtx_kg.node_records(text, text, text[], text) TO PUBLIC',
];

/**
 * Set up indexed search of the knowledge graph in the database `db` is
 * connected to, as a superuser: pg_trgm (created if missing), the two
 * indexes on memtx.records (built CONCURRENTLY, so writes go on; an invalid
 * one left by an interrupted build is built again) and schema memtx_kg.
 * Idempotent: run it again after upgrading memtx-client.
 * @param {{ query: (text: string, values?: unknown[]) => Promise<{ rows: any[] }> }} db
 * @param {(line: string) => void} [log]
 */
export async function setupSearch(db, log = () => {}) {
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  const { rows: [{ schema }] } = await db.query(
    "SELECT e.extnamespace::regnamespace::text AS schema FROM pg_catalog.pg_extension e WHERE e.extname = 'pg_trgm'");
  const indexes = {
    records_kg_search_idx: `USING gin (${DOCUMENT} ${schema}.gin_trgm_ops) WHERE ${SEARCHED}`,
    records_kg_relation_to_idx: `(namespace, (value ->> 'to')) WHERE ${RELATIONS}`,
  };
  for (const [name, definition] of Object.entries(indexes)) {
    const { rows } = await db.query(`SELECT i.indisvalid AS valid FROM pg_catalog.pg_index i
      WHERE i.indexrelid = pg_catalog.to_regclass('memtx.' || $1::text)`, [name]);
    if (rows.length && !rows[0].valid) await db.query(`DROP INDEX CONCURRENTLY memtx.${name}`);
    if (!rows.length || !rows[0].valid) {
      log(`building index memtx.${name}`);
      await db.query(`CREATE INDEX CONCURRENTLY ${name} ON memtx.records ${definition}`);
    }
  }
  for (const statement of SETUP_FUNCTIONS) await db.query(statement);
}

/**
 * create_entities in one statement.  $1 namespace, $2 the entities not
 * repeated in the call ([{name, entity, type, observations: [{attribute,
 * content}]}]), $3 the permission block of what it stages.  Returns
 * `admitted` ({record id: whether admitted}), `entities` ([input position,
 * record id] of the entity records staged) and `observations` ([input
 * position, text, record id]).  Commit's argument waits for both stagings.
 */
const CREATE_ENTITIES = `
  WITH tx AS MATERIALIZED (SELECT memtx.begin(namespace => $1::text) AS id),
  want AS MATERIALIZED (
    SELECT w.k, w.e ->> 'name' AS name, w.e ->> 'entity' AS entity, w.e -> 'type' AS type,
           w.e -> 'observations' AS observations, w.e ->> 'vector' AS vector
      FROM pg_catalog.jsonb_array_elements($2::jsonb) WITH ORDINALITY w(e, k)),
  known AS MATERIALIZED (
    SELECT DISTINCT w.k FROM tx, want w, memtx.read(tx.id, w.entity, 'entityType') r
     WHERE pg_catalog.jsonb_typeof(r.value) = 'string'),
  fresh AS MATERIALIZED (
    SELECT w.*, pg_catalog.row_number() OVER (ORDER BY w.k) AS f FROM want w
     WHERE w.k NOT IN (SELECT k FROM known)),
  typed AS MATERIALIZED (
    SELECT s.id, s.f FROM tx, memtx.stage_many(tx.id, (
      SELECT coalesce(pg_catalog.jsonb_agg($3::jsonb || pg_catalog.jsonb_build_object(
               'entity', f.entity, 'attribute', 'entityType', 'value', f.type) ORDER BY f.f), '[]')
        FROM fresh f)) WITH ORDINALITY s(id, f)),
  said AS MATERIALIZED (
    SELECT pg_catalog.row_number() OVER (ORDER BY f.f, o.j) AS o, f.f, f.k, f.entity,
           o.v ->> 'attribute' AS attribute, o.v -> 'content' AS content, o.v ->> 'vector' AS vector
      FROM fresh f, pg_catalog.jsonb_array_elements(f.observations) WITH ORDINALITY o(v, j)),
  noted AS MATERIALIZED (
    SELECT s.id, s.o FROM tx, memtx.stage_many(tx.id, (
      SELECT coalesce(pg_catalog.jsonb_agg($3::jsonb || pg_catalog.jsonb_build_object(
               'entity', d.entity, 'attribute', d.attribute, 'value', d.content,
               'derived_from', pg_catalog.jsonb_build_array(t.id)) ORDER BY d.o), '[]')
        FROM said d JOIN typed t ON t.f = d.f)) WITH ORDINALITY s(id, o)),
  /*embedded:typed t JOIN fresh f ON f.f = t.f:t.id:f.vector:noted n JOIN said d ON d.o = n.o:n.id:d.vector*/
  verdict AS MATERIALIZED (
    SELECT c.record_id, c.state FROM tx,
           LATERAL (SELECT (SELECT count(*) FROM typed) + (SELECT count(*) FROM noted) /*+embedded*/ AS n) staged,
           LATERAL memtx.commit(CASE WHEN staged.n >= 0 THEN tx.id END) c)
  SELECT (SELECT coalesce(pg_catalog.jsonb_object_agg(v.record_id, memtx.is_active(v.state)), '{}')
            FROM verdict v) AS admitted,
         (SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_array(f.k, t.id) ORDER BY t.f), '[]')
            FROM typed t JOIN fresh f ON f.f = t.f) AS entities,
         (SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_array(d.k, d.content, n.id) ORDER BY n.o), '[]')
            FROM noted n JOIN said d ON d.o = n.o) AS observations`;

/**
 * create_relations in one statement.  $2 the relations not repeated in the
 * call ([{entity, attribute, value}], the value {from, to, relationType}),
 * each derived from the entity records of its ends that the transaction
 * sees.  Returns `admitted` and `made` ([input position, record id]).
 */
const CREATE_RELATIONS = `
  WITH tx AS MATERIALIZED (SELECT memtx.begin(namespace => $1::text) AS id),
  rel AS MATERIALIZED (
    SELECT l.k, l.e ->> 'entity' AS entity, l.e ->> 'attribute' AS attribute, l.e -> 'value' AS value,
           l.e ->> 'vector' AS vector, ARRAY[l.e -> 'value' ->> 'from', l.e -> 'value' ->> 'to'] AS ends
      FROM pg_catalog.jsonb_array_elements($2::jsonb) WITH ORDINALITY l(e, k)),
  parent AS MATERIALIZED (
    SELECT n.name, r.id FROM tx, (SELECT DISTINCT pg_catalog.unnest(l.ends) AS name FROM rel l) n,
           memtx.read(tx.id, 'kg:' || n.name, 'entityType') r
     WHERE pg_catalog.jsonb_typeof(r.value) = 'string'),
  known AS MATERIALIZED (
    SELECT DISTINCT l.k FROM tx, rel l, memtx.read(tx.id, l.entity, l.attribute) r WHERE r.value = l.value),
  fresh AS MATERIALIZED (
    SELECT l.*, pg_catalog.row_number() OVER (ORDER BY l.k) AS f FROM rel l WHERE l.k NOT IN (SELECT k FROM known)),
  made AS MATERIALIZED (
    SELECT s.id, s.f FROM tx, memtx.stage_many(tx.id, (
      SELECT coalesce(pg_catalog.jsonb_agg($3::jsonb || pg_catalog.jsonb_build_object(
               'entity', f.entity, 'attribute', f.attribute, 'value', f.value,
               'derived_from', (SELECT coalesce(pg_catalog.jsonb_agg(DISTINCT p.id), '[]') FROM parent p
                                 WHERE p.name = ANY (f.ends))) ORDER BY f.f), '[]')
        FROM fresh f)) WITH ORDINALITY s(id, f)),
  /*embedded:made m JOIN fresh f ON f.f = m.f:m.id:f.vector*/
  verdict AS MATERIALIZED (
    SELECT c.record_id, c.state FROM tx,
           LATERAL (SELECT count(*) /*+embedded*/ AS n FROM made) staged,
           LATERAL memtx.commit(CASE WHEN staged.n >= 0 THEN tx.id END) c)
  SELECT (SELECT coalesce(pg_catalog.jsonb_object_agg(v.record_id, memtx.is_active(v.state)), '{}')
            FROM verdict v) AS admitted,
         (SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_array(f.k, m.id) ORDER BY m.f), '[]')
            FROM made m JOIN fresh f ON f.f = m.f) AS made`;

/**
 * add_observations in one statement.  $2 the calls's items ([{name, entity,
 * adds: [{attribute, content}]}], a text repeated for one entity in the call
 * left out), each text not on its entity yet staged, derived from the
 * entity's records.  When an item's entity does not exist (the first such
 * is `missing`), nothing is staged and the memtx transaction is aborted;
 * else it commits.  Returns `missing`, `admitted` and `added` ([input
 * position, text, record id]).
 */
const ADD_OBSERVATIONS = `
  WITH tx AS MATERIALIZED (SELECT memtx.begin(namespace => $1::text) AS id),
  item AS MATERIALIZED (
    SELECT i.k, i.e ->> 'name' AS name, i.e ->> 'entity' AS entity, i.e -> 'adds' AS adds
      FROM pg_catalog.jsonb_array_elements($2::jsonb) WITH ORDINALITY i(e, k)),
  seen AS MATERIALIZED (
    SELECT r.id, r.entity, r.attribute, r.value
      FROM tx, (SELECT DISTINCT i.entity FROM item i) e, memtx.read(tx.id, e.entity) r),
  parents AS MATERIALIZED (
    SELECT s.entity, pg_catalog.jsonb_agg(s.id ORDER BY s.id) AS ids FROM seen s
     WHERE s.attribute = 'entityType' AND pg_catalog.jsonb_typeof(s.value) = 'string' GROUP BY s.entity),
  missing AS MATERIALIZED (
    SELECT i.name FROM item i WHERE i.entity NOT IN (SELECT p.entity FROM parents p) ORDER BY i.k LIMIT 1),
  said AS MATERIALIZED (
    SELECT pg_catalog.row_number() OVER (ORDER BY i.k, a.j) AS o, i.k, i.entity,
           a.v ->> 'attribute' AS attribute, a.v -> 'content' AS content, a.v ->> 'vector' AS vector
      FROM item i, pg_catalog.jsonb_array_elements(i.adds) WITH ORDINALITY a(v, j)
     WHERE NOT EXISTS (SELECT FROM seen s WHERE s.entity = i.entity
                          AND pg_catalog.starts_with(s.attribute, 'observation:') AND s.value = a.v -> 'content')),
  noted AS MATERIALIZED (
    SELECT s.id, s.o FROM tx, memtx.stage_many(tx.id, (
      SELECT coalesce(pg_catalog.jsonb_agg($3::jsonb || pg_catalog.jsonb_build_object(
               'entity', d.entity, 'attribute', d.attribute, 'value', d.content, 'derived_from', p.ids)
               ORDER BY d.o), '[]')
        FROM said d JOIN parents p ON p.entity = d.entity
       WHERE NOT EXISTS (SELECT FROM missing))) WITH ORDINALITY s(id, o)),
  /*embedded:noted n JOIN said d ON d.o = n.o:n.id:d.vector*/
  verdict AS MATERIALIZED (
    SELECT CASE WHEN (SELECT count(*) FROM noted) /*+embedded*/ >= 0 AND NOT EXISTS (SELECT FROM missing)
                THEN (SELECT coalesce(pg_catalog.jsonb_object_agg(c.record_id, memtx.is_active(c.state)), '{}')
                        FROM memtx.commit(tx.id) c)
                ELSE (SELECT '{}'::jsonb FROM (SELECT count(*) FROM memtx.abort(tx.id)) a) END AS admitted
      FROM tx)
  SELECT (SELECT m.name FROM missing m) AS missing, (SELECT v.admitted FROM verdict v) AS admitted,
         (SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_array(d.k, d.content, n.id) ORDER BY n.o), '[]')
            FROM noted n JOIN said d ON d.o = n.o) AS added`;

/** Revoke the records, in the order given (each with its cascade), all in one statement. */
const REVOKE_ALL = `SELECT count(*) AS n FROM pg_catalog.unnest($1::bigint[]) WITH ORDINALITY u(id, k),
  memtx.revoke(u.id, $2::text) l`;

/**
 * Run one statement of a tool; a serialization failure or deadlock runs it
 * again (it changed nothing: it was its own SQL transaction).
 * @param {import('./mcp.js').ToolContext} ctx @param {string} text @param {unknown[]} values
 */
async function statement(ctx, text, values) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ctx.memory._query(text, values);
    } catch (err) {
      if (!(err instanceof MemtxError && err.retryable) || attempt >= RETRIES) throw err;
      await new Promise((resolve) => { setTimeout(resolve, 10 * attempt * Math.random()); });
    }
  }
}

/** The permission block of what the server stages, as stage_many's keys. @param {import('./mcp.js').ToolContext} ctx */
const block = (ctx) => JSON.stringify(Object.fromEntries(
  Object.entries(ctx.memory.defaults).filter(([, v]) => v !== undefined)));

/** Whether a database has the optional indexed search, by connection (asked once). */
const searchServed = new WeakMap();

/**
 * The records of a subgraph (entities matching query, or named, with the
 * relations to them), through the optional setup's indexes when the
 * database has it, else by the same query under row-level security.
 * @param {import('./mcp.js').ToolContext} ctx @param {{ query?: string, names?: string[] }} which
 * @returns {Promise<GraphRecord[]>}
 */
async function nodeRecords(ctx, { query, names }) {
  const { db, namespace } = ctx.memory;
  const values = [namespace, query ?? null, names ?? null];
  if (!searchServed.has(db)) {
    searchServed.set(db, statement(ctx, "SELECT pg_catalog.to_regprocedure('memtx_kg.node_records(text,text,text[],text)')"
      + ' IS NOT NULL AS served', []).then(([row]) => row.served, (err) => { searchServed.delete(db); throw err; }));
  }
  if (!(await searchServed.get(db))) return /** @type {any} */ (statement(ctx, NODES_SCANNED_SQL, values));
  try {
    return /** @type {any} */ (await statement(ctx, NODES_INDEXED_SQL, values));
  } catch (err) {
    // the setup was undone since: ask again, and read without it
    if (!(err instanceof MemtxError && (err.sqlstate === '42883' || err.sqlstate === '3F000'))) throw err;
    searchServed.delete(db);
    return nodeRecords(ctx, { query, names });
  }
}

/**
 * Revoke every record of each fact, in order (a record a cascade revoked
 * already is skipped), in one statement.
 * @param {import('./mcp.js').ToolContext} ctx @param {Iterable<number[] | undefined>} facts @param {string} note
 */
async function revokeAll(ctx, facts, note) {
  const ids = [...facts].flatMap((f) => f ?? []);
  if (ids.length) await statement(ctx, REVOKE_ALL, [ids, note]);
}

/**
 * A result as the reference shapes it: the JSON (indented) as text, the
 * same as structuredContent.
 * @param {unknown} shown @param {Record<string, unknown>} structured
 */
const result = (shown, structured) => ({
  content: [{ type: 'text', text: JSON.stringify(shown, null, 2) }], structuredContent: structured,
});
/** @param {string} message */
const done = (message) => ({
  content: [{ type: 'text', text: message }], structuredContent: { success: true, message },
});

/**
 * @typedef {object} GraphTool
 * @property {import('./mcp.js').ToolSpec & { annotations: Record<string, boolean> }} spec the MCP tool definition
 * @property {(args: any, ctx: import('./mcp.js').ToolContext) => Promise<Record<string, any>>} run
 *   what a call does, its arguments validated
 */

/**
 * The first of each item by key, in order.
 * @template T @param {T[]} items @param {(item: T) => string} key
 */
function firstOf(items, key) {
  const seen = new Set();
  return items.filter((item) => { const k = key(item); if (seen.has(k)) return false; seen.add(k); return true; });
}

/** The nine tools. @type {GraphTool[]} */
const TOOLS = [
  {
    spec: {
      name: 'create_entities', title: 'Create Entities',
      description: 'Create multiple new entities in the knowledge graph',
      inputSchema: top({ entities: { type: 'array', items: entitySchema(false) } }, false),
      outputSchema: top({ entities: { type: 'array', items: entitySchema(true) } }, true),
      annotations: WRITE,
    },
    async run({ entities }, ctx) {
      const want = firstOf(/** @type {Entity[]} */ (entities), (e) => e.name).map((e) => ({
        name: e.name, entity: entityOf(e.name), type: e.entityType,
        observations: [...new Set(e.observations)].map((content) => ({ attribute: observationSlot(content), content })),
      }));
      const [row] = await graphWrite(ctx, CREATE_ENTITIES, want, (items) => items.flatMap((e) => [
        [e, embeddingText(e.entity, TYPE, e.type)],
        ...e.observations.map((/** @type {any} */ o) => [o, embeddingText(e.entity, o.attribute, o.content)])]));
      const admitted = (/** @type {number} */ id) => row.admitted[id] === true;
      const created = /** @type {[number, number][]} */ (row.entities).filter(([, id]) => admitted(id)).map(([k]) => ({
        name: want[k - 1].name, entityType: want[k - 1].type,
        observations: /** @type {[number, string, number][]} */ (row.observations)
          .filter(([of, , id]) => of === k && admitted(id)).map(([, content]) => content),
      }));
      return result(created, { entities: created });
    },
  },
  {
    spec: {
      name: 'create_relations', title: 'Create Relations',
      description: 'Create multiple new relations between entities in the knowledge graph. '
        + 'Relations should be in active voice',
      inputSchema: top({ relations: { type: 'array', items: relationSchema(false) } }, false),
      outputSchema: top({ relations: { type: 'array', items: relationSchema(true) } }, true),
      annotations: WRITE,
    },
    async run({ relations }, ctx) {
      const want = firstOf(/** @type {Relation[]} */ (relations)
        .map((r) => ({ from: r.from, to: r.to, relationType: r.relationType })), relationKey);
      const input = want.map((r) => ({ entity: entityOf(r.from), attribute: relationSlot(r), value: r }));
      const [row] = await graphWrite(ctx, CREATE_RELATIONS, input,
        (items) => items.map((r) => [r, embeddingText(r.entity, r.attribute, r.value)]));
      const created = /** @type {[number, number][]} */ (row.made)
        .filter(([, id]) => row.admitted[id] === true).map(([k]) => want[k - 1]);
      return result(created, { relations: created });
    },
  },
  {
    spec: {
      name: 'add_observations', title: 'Add Observations',
      description: 'Add new observations to existing entities in the knowledge graph',
      inputSchema: top({
        observations: {
          type: 'array',
          items: object({
            entityName: text('The name of the entity to add the observations to'),
            contents: texts('An array of observation contents to add'),
          }, false),
        },
      }, false),
      outputSchema: top({
        results: {
          type: 'array',
          items: object({ entityName: text(), addedObservations: texts() }, true),
        },
      }, true),
      annotations: WRITE,
    },
    async run({ observations }, ctx) {
      const items = /** @type {{ entityName: string, contents: string[] }[]} */ (observations);
      // a text asked for an entity earlier in the call is not asked again
      const asked = new Set();
      const input = items.map((o) => ({
        name: o.entityName, entity: entityOf(o.entityName),
        adds: o.contents.filter((content) => {
          const key = JSON.stringify([o.entityName, content]);
          if (asked.has(key)) return false;
          asked.add(key);
          return true;
        }).map((content) => ({ attribute: observationSlot(content), content })),
      }));
      const [row] = await graphWrite(ctx, ADD_OBSERVATIONS, input, (items) => items.flatMap((o) => o.adds
        .map((/** @type {any} */ a) => [a, embeddingText(o.entity, a.attribute, a.content)])));
      if (row.missing !== null) throw new GraphError(`Entity with name ${row.missing} not found`);
      const added = /** @type {[number, string, number][]} */ (row.added).filter(([, , id]) => row.admitted[id] === true);
      const results = items.map((o, i) => ({
        entityName: o.entityName,
        addedObservations: added.filter(([k]) => k === i + 1).map(([, content]) => content),
      }));
      return result(results, { results });
    },
  },
  {
    spec: {
      name: 'delete_entities', title: 'Delete Entities',
      description: 'Delete multiple entities and their associated relations from the knowledge graph',
      inputSchema: top({ entityNames: texts('An array of entity names to delete') }, false),
      outputSchema: DONE_OUTPUT,
      annotations: DELETE,
    },
    async run({ entityNames }, ctx) {
      const names = [...new Set(/** @type {string[]} */ (entityNames))];
      const snap = new Snapshot(await nodeRecords(ctx, { names }));
      const entities = names.map((name) => snap.entities.get(name));
      const doomed = new Set(names);
      // the entity records first: their cascades take observations and most relations
      await revokeAll(ctx, [
        ...entities.map((e) => e?.ids),
        ...entities.flatMap((e) => [...(e?.observations.values() ?? [])]),
        ...[...snap.relations.values()].filter((r) => doomed.has(r.relation.from) || doomed.has(r.relation.to))
          .map((r) => r.ids),
      ], 'delete_entities');
      return done('Entities deleted successfully');
    },
  },
  {
    spec: {
      name: 'delete_observations', title: 'Delete Observations',
      description: 'Delete specific observations from entities in the knowledge graph',
      inputSchema: top({
        deletions: {
          type: 'array',
          items: object({
            entityName: text('The name of the entity containing the observations'),
            observations: texts('An array of observations to delete'),
          }, false),
        },
      }, false),
      outputSchema: DONE_OUTPUT,
      annotations: DELETE,
    },
    async run({ deletions }, ctx) {
      const asked = /** @type {{ entityName: string, observations: string[] }[]} */ (deletions);
      const snap = new Snapshot(/** @type {any} */ (await statement(ctx, ENTITIES_SQL,
        [ctx.memory.namespace, [...new Set(asked.map((d) => entityOf(d.entityName)))]])));
      await revokeAll(ctx, asked.flatMap((d) => {
        const has = snap.entities.get(d.entityName)?.observations;
        return has ? d.observations.map((content) => has.get(content)) : [];
      }), 'delete_observations');
      return done('Observations deleted successfully');
    },
  },
  {
    spec: {
      name: 'delete_relations', title: 'Delete Relations',
      description: 'Delete multiple relations from the knowledge graph',
      inputSchema: top({
        relations: { type: 'array', items: relationSchema(false), description: 'An array of relations to delete' },
      }, false),
      outputSchema: DONE_OUTPUT,
      annotations: DELETE,
    },
    async run({ relations }, ctx) {
      const asked = /** @type {Relation[]} */ (relations);
      const snap = new Snapshot(/** @type {any} */ (await statement(ctx, ENTITIES_SQL,
        [ctx.memory.namespace, [...new Set(asked.map((r) => entityOf(r.from)))]])));
      await revokeAll(ctx, asked.map((r) => snap.relations.get(relationKey(r))?.ids), 'delete_relations');
      return done('Relations deleted successfully');
    },
  },
  {
    spec: {
      name: 'read_graph', title: 'Read Graph', description: 'Read the entire knowledge graph',
      inputSchema: { type: 'object', properties: {}, $schema: DRAFT },
      outputSchema: GRAPH_OUTPUT,
      annotations: READ,
    },
    async run(_args, ctx) {
      const graph = await readGraph(ctx);
      return result(graph, { ...graph });
    },
  },
  {
    spec: {
      name: 'search_nodes', title: 'Search Nodes',
      description: 'Search for nodes in the knowledge graph based on a query',
      inputSchema: top({
        query: text('The search query to match against entity names, types, and observation content'),
      }, false),
      outputSchema: GRAPH_OUTPUT,
      annotations: READ,
    },
    async run({ query }, ctx) {
      // the database finds the candidates; the match is the reference's own
      const q = String(query).toLowerCase();
      const near = await nearEntities(ctx, String(query));
      const snap = new Snapshot(await nodeRecords(ctx, { query: String(query), ...(near.size && { names: [...near] }) }));
      const graph = subgraph(snap.graph(),
        (e) => near.has(e.name) || [e.name, e.entityType, ...e.observations].some((s) => s.toLowerCase().includes(q)));
      return result(graph, { ...graph });
    },
  },
  {
    spec: {
      name: 'open_nodes', title: 'Open Nodes', description: 'Open specific nodes in the knowledge graph by their names',
      inputSchema: top({ names: texts('An array of entity names to retrieve') }, false),
      outputSchema: GRAPH_OUTPUT,
      annotations: READ,
    },
    async run({ names }, ctx) {
      const wanted = new Set(/** @type {string[]} */ (names));
      const snap = new Snapshot(await nodeRecords(ctx, { names: [...wanted] }));
      const graph = subgraph(snap.graph(), (e) => wanted.has(e.name));
      return result(graph, { ...graph });
    },
  },
];

/** The whole graph, as read_graph and the resource give it. @param {import('./mcp.js').ToolContext} ctx */
async function readGraph(ctx) {
  return new Snapshot(/** @type {any} */ (await statement(ctx, GRAPH_SQL, [ctx.memory.namespace]))).graph();
}

// ajv is CommonJS: its class is the module's default export
const ajv = new AjvModule.default({ strict: false, allErrors: false });

/** An error result, as the reference gives one: the message as text. @param {string} message */
const failure = (message) => ({ content: [{ type: 'text', text: message }], isError: true });

/**
 * The nine tools as extra tools of memtx-mcp (src/mcp.js): each shapes its
 * own CallToolResult, as the reference does.
 * @type {import('./mcp.js').ExtraTool[]}
 */
export const tools = TOOLS.map(({ spec, run }) => {
  const validate = ajv.compile(spec.inputSchema);
  // as the reference: a write tool that succeeds tells subscribers the graph changed
  const writes = !spec.annotations.readOnlyHint;
  return {
    // the reference's SDK (McpServer) lists every tool with task support forbidden
    spec: { ...spec, execution: { taskSupport: 'forbidden' } },
    /** @param {unknown} args @param {import('./mcp.js').ToolContext} ctx */
    async call(args, ctx) {
      if (!validate(args)) {
        return failure(`Invalid arguments for tool ${spec.name}: ${ajv.errorsText(validate.errors)}`);
      }
      try {
        const answer = await run(args, ctx);
        if (writes) ctx.resourceChanged(GRAPH_URI);
        return answer;
      } catch (err) {
        if (err instanceof GraphError || err instanceof MemtxError || err instanceof DatabaseUnavailable) {
          return failure(err.message);
        }
        throw err;
      }
    },
  };
});

/**
 * The reference's resource, memory://knowledge-graph: the whole graph as
 * read_graph gives it, as indented JSON.  Subscribers hear of the changes
 * this server's write tools make (as in the reference), not of other
 * processes' writes.
 * @type {import('./mcp.js').Resource[]}
 */
export const resources = [{
  spec: {
    uri: GRAPH_URI, name: 'knowledge-graph', title: 'Knowledge Graph',
    description: 'The full knowledge graph with all entities and relations', mimeType: 'application/json',
  },
  async read(ctx) {
    return JSON.stringify(await readGraph(ctx), null, 2);
  },
}];

// ------------------------------------------------------------ by meaning

/** How many records nearest to a search_nodes query may bring their entities in... */
const NEAREST = 10;
/**
 * ...those within this distance of it under the model's metric: for cosine
 * (the distance memtx-mcp's models are meant to have), a similarity of at
 * least 0.5.  Nearest alone would bring in every entity of a small graph.
 */
const NEAR_DISTANCE = 0.5;

/**
 * The names of the entities of the $4 graph records nearest to $2 (a
 * vector, as text) under model $3 that are within distance $5 of it, in one
 * statement: a memtx transaction of its own begun, memtx.recall_similar
 * (only what it may see), committed empty (commit's argument waits for the
 * recalled rows).
 */
const NEAR_SQL = `
  WITH tx AS MATERIALIZED (SELECT memtx.begin(namespace => $1::text) AS id),
  near AS MATERIALIZED (
    SELECT v.entity, v.distance FROM tx, memtx.recall_similar(tx => tx.id, embedding => $2, model => $3::text, k => $4::integer,
                                                   entity_prefix => 'kg:', valid_at => memtx.now()) v),
  closed AS MATERIALIZED (
    SELECT count(*) AS n FROM tx, LATERAL (SELECT count(*) AS n FROM near) seen,
           LATERAL memtx.commit(CASE WHEN seen.n >= 0 THEN tx.id END) c)
  SELECT coalesce((SELECT pg_catalog.array_agg(DISTINCT pg_catalog.substr(n.entity, 4)) FROM near n
                     WHERE n.distance <= $5::real), '{}') AS names
    FROM closed`;

/**
 * With an embedder (memtx-mcp's MEMTX_EMBEDDINGS_URL), search_nodes also
 * finds by meaning: the entities of the NEAREST graph records (entity
 * types, observations, relations: every fact is embedded as it is staged)
 * nearest to the query and within NEAR_DISTANCE of it, as a memtx
 * transaction of its own sees them (memtx.recall_similar, SPEC §19): one
 * request to the endpoint and one statement.  Without an embedder, none.
 * @param {import('./mcp.js').ToolContext} ctx @param {string} query
 * @returns {Promise<Set<string>>}
 */
async function nearEntities(ctx, query) {
  const m = ctx.memory;
  if (!m.embedder || query.trim() === '') return new Set();
  const [vector] = await m.embedTexts([query]);
  await vectorType(ctx);
  const [row] = await statement(ctx, NEAR_SQL, [m.namespace, vectorText('embedding', vector), m.embeddingModel, NEAREST, NEAR_DISTANCE])
    .catch((err) => { throw modelMissing(err, m.embeddingModel); });
  return new Set(/** @type {string[]} */ (row.names));
}

/**
 * memtx_vector's "embedding model does not exist" (42704) with the call that
 * registers it in the message: the graph tools report messages only.
 * @param {unknown} err @param {string | null} model
 */
function modelMissing(err, model) {
  if (!(err instanceof MemtxError && err.sqlstate === '42704' && /embedding model/.test(err.message))) return err;
  return new NotFound(`${err.message}: a harness registers it once with `
    + `SELECT memtx.register_embedding_model('${model}', <its dimensions>)`, { sqlstate: '42704', cause: err });
}

/** pgvector's type as memtx.embed names it (qualified unless on the search path), by connection (asked once). */
const vectorTypes = new WeakMap();

/**
 * The name of pgvector's type to cast a vector's text to; NotFound when
 * memtx_vector is not installed.
 * @param {import('./mcp.js').ToolContext} ctx
 * @returns {Promise<string>}
 */
async function vectorType(ctx) {
  const { db } = ctx.memory;
  if (!vectorTypes.has(db)) {
    vectorTypes.set(db, statement(ctx, `SELECT pg_catalog.format_type(p.proargtypes[2], NULL) AS type
      FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = 'memtx' AND p.proname = 'embed' AND p.pronargs = 3`, []).then(([row]) => row?.type ?? null, (err) => { vectorTypes.delete(db); throw err; }));
  }
  const type = await vectorTypes.get(db);
  if (!type) {
    vectorTypes.delete(db);
    throw new NotFound('memtx_vector is not installed in this database: memtx-mcp embeds the graph with it',
      { sqlstate: '42883', hint: 'A superuser runs CREATE EXTENSION memtx_vector CASCADE (pgvector 0.8.0 or later).' });
  }
  return type;
}

/**
 * A graph write's statement as run: without an embedder, `text` itself;
 * with one, its marker `/*embedded:FROM:ID:VECTOR...*\/` (one or more
 * triples: the staged rows, the record id, the vector's text) becomes the
 * CTE `embedded`, memtx.embed of each staged record that has a vector under
 * the model ($4), and `/*+embedded*\/` adds its count to what commit waits
 * for: the records and their embeddings are written together or not at all.
 * @param {string} text @param {string | null} type pgvector's type (null: no embedder)
 */
function embeddedSql(text, type) {
  if (!type) return text;
  return text.replace(/\/\*embedded:(.*?)\*\//, (_, spec) => {
    const parts = spec.split(':');
    const selects = [];
    for (let i = 0; i < parts.length; i += 3) {
      const [from, id, vector] = parts.slice(i, i + 3);
      selects.push(`SELECT 1 FROM ${from}, LATERAL memtx.embed(${id}, $4::text, ${vector}::${type}) e WHERE ${vector} IS NOT NULL`);
    }
    return `embedded AS MATERIALIZED (${selects.join(' UNION ALL ')}),`;
  }).replace('/*+embedded*/', '+ (SELECT count(*) FROM embedded)');
}

/**
 * Runs a graph write (CREATE_ENTITIES, CREATE_RELATIONS, ADD_OBSERVATIONS)
 * on its input; with an embedder, each item `texts` names (the text of what
 * it stages) gets its `vector` first -- one request to the endpoint, before
 * anything is written: a failure writes nothing -- and the statement embeds
 * what it stages.
 * @param {import('./mcp.js').ToolContext} ctx @param {string} text
 * @param {Record<string, any>[]} input
 * @param {(input: Record<string, any>[]) => [Record<string, any>, string | undefined][]} texts
 */
async function graphWrite(ctx, text, input, texts) {
  const m = ctx.memory;
  if (!m.embedder) return statement(ctx, text, [m.namespace, JSON.stringify(input), block(ctx)]);
  const type = await vectorType(ctx);
  const wanted = /** @type {[Record<string, any>, string][]} */ (texts(input).filter(([, t]) => t !== undefined));
  const vectors = wanted.length ? await m.embedTexts(wanted.map(([, t]) => t)) : [];
  wanted.forEach(([item], i) => { item.vector = vectorText('embedding', vectors[i]); });
  return statement(ctx, embeddedSql(text, type), [m.namespace, JSON.stringify(input), block(ctx), m.embeddingModel])
    .catch((err) => { throw modelMissing(err, m.embeddingModel); });
}

/**
 * The text memtx-mcp embeds for a record of the graph (undefined for any
 * other record): an entity as "name (type)", an observation as "name:
 * content", a relation as "from relationType to" -- the words of the fact,
 * not the digests of its slot.
 * @param {string} entity @param {string} attribute @param {unknown} value
 * @returns {string | undefined}
 */
export function embeddingText(entity, attribute, value) {
  if (!entity.startsWith(PREFIX)) return undefined;
  const name = entity.slice(PREFIX.length);
  if (attribute === TYPE) return `${name} (${String(value)})`;
  if (attribute.startsWith(OBSERVATION)) return `${name}: ${String(value)}`;
  if (attribute.startsWith(RELATION) && value && typeof value === 'object') {
    const r = /** @type {Record<string, unknown>} */ (value);
    return `${String(r.from)} ${String(r.relationType)} ${String(r.to)}`;
  }
  return undefined;
}
