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
 * Every write tool is one memtx transaction of its own (not the server's
 * current one, so it neither commits nor waits for the agent's own staging):
 * begin, read what the transaction sees, stage, commit -- a belief commit;
 * what the pipeline admits is what the tool reports as created or added; a
 * call that fails midway aborts it, so nothing of the call is stored.
 * Deletes are `memtx.revoke` of the visible records, so derived facts go
 * with them (an entity's observations and relations cascade); relations
 * whose endpoint had no entity record when they were made (the reference
 * allows that) are revoked by name.  Each revoke is atomic with its cascade;
 * a delete interrupted midway is finished by repeating it (the deletes are
 * idempotent).  Reads (read_graph, search_nodes, open_nodes) are a memtx
 * transaction that reads and commits nothing.
 *
 * Order and content follow the reference: entities, their observations and
 * relations in creation order (record id order).  Deliberate differences: a
 * name, relation or observation repeated within one call is created once
 * (the graph is a set; the reference stores the repeat), and a record memtx
 * refuses (e.g. quarantined by a concurrent delete of its entity) is left
 * out of what the call reports.
 *
 * Each memtx call is a statement of its own (no SQL transaction block), so
 * calls of one server process may overlap on its one connection: their
 * memtx transactions are as independent as two clients'.  A serialization
 * failure or deadlock (SQLSTATE class 40) aborts the memtx transaction and
 * repeats the call, a few times.
 *
 * @module memtx/kg
 */

import { createHash } from 'node:crypto';
import AjvModule from 'ajv';

import { DatabaseUnavailable } from './connection.js';
import { MemtxError } from './memory.js';

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
 * The graph as one memtx transaction sees it, with the record ids behind
 * each fact (several when concurrent writers corroborated one fact).
 */
class Snapshot {
  /** @param {import('./memory.js').MemoryRecord[]} records */
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

/**
 * One tool call as one memtx transaction: begin, read, fn(memory, snapshot),
 * then commit; abort when fn throws; repeated on a serialization failure or
 * deadlock.  The read is of the named entities' records (an index lookup
 * each), or of the whole namespace when `names` is null.  Returns fn's value
 * and the ids the commit admitted.
 * @template T
 * @param {import('./mcp.js').ToolContext} ctx
 * @param {string[] | null} names
 * @param {(memory: import('./memory.js').Memory, snapshot: Snapshot) => Promise<T>} fn
 * @returns {Promise<{ value: T, admitted: Set<number> }>}
 */
async function inTransaction(ctx, names, fn) {
  for (let attempt = 1; ; attempt++) {
    // the server's connection, namespace and permission block, a transaction of its own
    const memory = ctx.memory.sibling();
    try {
      const value = await memory.turn(async (m) => {
        const records = [];
        if (names === null) records.push(...await m.read());
        else for (const name of new Set(names)) records.push(...await m.read(entityOf(name)));
        return fn(m, new Snapshot(records));
      });
      const admitted = new Set(memory.lastCommit
        .filter((c) => c.state === 'committed' || c.state === 'action_safe').map((c) => c.record_id));
      return { value, admitted };
    } catch (err) {
      if (!(err instanceof MemtxError && err.retryable) || attempt >= RETRIES) throw err;
      await new Promise((resolve) => setTimeout(resolve, 10 * attempt * Math.random()));
    }
  }
}

/**
 * Revoke every record of each fact (its cascade takes what derives from it).
 * @param {import('./memory.js').Memory} m @param {Iterable<number[] | undefined>} facts @param {string} note
 */
async function revokeAll(m, facts, note) {
  for (const ids of facts) {
    for (const id of ids ?? []) await m.revoke(id, note);
  }
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
      const names = /** @type {Entity[]} */ (entities).map((e) => e.name);
      const { value: staged, admitted } = await inTransaction(ctx, names, async (m, snap) => {
        /** @type {{ name: string, entityType: string, id: number, observations: { content: string, id: number }[] }[]} */
        const out = [];
        for (const e of /** @type {Entity[]} */ (entities)) {
          if (snap.entities.has(e.name) || out.some((s) => s.name === e.name)) continue;
          const id = await m.stage(entityOf(e.name), TYPE, e.entityType);
          const observations = [];
          for (const content of new Set(e.observations)) {
            const obs = await m.stage(entityOf(e.name), observationSlot(content), content, { derived_from: [id] });
            observations.push({ content, id: obs });
          }
          out.push({ name: e.name, entityType: e.entityType, id, observations });
        }
        return out;
      });
      const created = staged.filter((s) => admitted.has(s.id)).map((s) => ({
        name: s.name, entityType: s.entityType,
        observations: s.observations.filter((o) => admitted.has(o.id)).map((o) => o.content),
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
      const names = /** @type {Relation[]} */ (relations).flatMap((r) => [r.from, r.to]);
      const { value: staged, admitted } = await inTransaction(ctx, names, async (m, snap) => {
        const out = [];
        const keys = new Set();
        for (const r of /** @type {Relation[]} */ (relations)) {
          const relation = { from: r.from, to: r.to, relationType: r.relationType };
          const key = relationKey(relation);
          if (snap.relations.has(key) || keys.has(key)) continue;
          keys.add(key);
          const parents = new Set([r.from, r.to].flatMap((name) => snap.entities.get(name)?.ids ?? []));
          const id = await m.stage(entityOf(r.from), relationSlot(relation), relation, { derived_from: [...parents] });
          out.push({ relation, id });
        }
        return out;
      });
      const created = staged.filter((s) => admitted.has(s.id)).map((s) => s.relation);
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
      const names = /** @type {{ entityName: string }[]} */ (observations).map((o) => o.entityName);
      const { value: staged, admitted } = await inTransaction(ctx, names, async (m, snap) => {
        const out = [];
        /** @type {Map<string, Set<string>>} what each entity has, this call's staging included */
        const has = new Map();
        for (const o of /** @type {{ entityName: string, contents: string[] }[]} */ (observations)) {
          const entity = snap.entities.get(o.entityName);
          if (!entity) throw new GraphError(`Entity with name ${o.entityName} not found`);
          if (!has.has(o.entityName)) has.set(o.entityName, new Set(entity.observations.keys()));
          const known = /** @type {Set<string>} */ (has.get(o.entityName));
          const added = [];
          for (const content of o.contents) {
            if (known.has(content)) continue;
            known.add(content);
            const id = await m.stage(entityOf(o.entityName), observationSlot(content), content,
              { derived_from: entity.ids });
            added.push({ content, id });
          }
          out.push({ entityName: o.entityName, added });
        }
        return out;
      });
      const results = staged.map((s) => ({
        entityName: s.entityName,
        addedObservations: s.added.filter((a) => admitted.has(a.id)).map((a) => a.content),
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
      const names = new Set(/** @type {string[]} */ (entityNames));
      await inTransaction(ctx, null, async (m, snap) => {
        const entities = [...names].map((name) => snap.entities.get(name));
        // the entity records first: their cascades take observations and most relations
        await revokeAll(m, entities.map((e) => e?.ids), 'delete_entities');
        await revokeAll(m, entities.flatMap((e) => [...(e?.observations.values() ?? [])]), 'delete_entities');
        await revokeAll(m, [...snap.relations.values()]
          .filter((r) => names.has(r.relation.from) || names.has(r.relation.to)).map((r) => r.ids), 'delete_entities');
      });
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
      const names = /** @type {{ entityName: string }[]} */ (deletions).map((d) => d.entityName);
      await inTransaction(ctx, names, async (m, snap) => {
        for (const d of /** @type {{ entityName: string, observations: string[] }[]} */ (deletions)) {
          const has = snap.entities.get(d.entityName)?.observations;
          if (has) await revokeAll(m, d.observations.map((content) => has.get(content)), 'delete_observations');
        }
      });
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
      await inTransaction(ctx, /** @type {Relation[]} */ (relations).map((r) => r.from), async (m, snap) => {
        await revokeAll(m, /** @type {Relation[]} */ (relations)
          .map((r) => snap.relations.get(relationKey(r))?.ids), 'delete_relations');
      });
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
      const { value: graph } = await inTransaction(ctx, null, async (_m, snap) => snap.graph());
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
      const q = String(query).toLowerCase();
      const { value: graph } = await inTransaction(ctx, null, async (m, snap) => {
        const near = await nearEntities(m, String(query));
        return subgraph(snap.graph(),
          (e) => near.has(e.name) || [e.name, e.entityType, ...e.observations].some((s) => s.toLowerCase().includes(q)));
      });
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
      const { value: graph } = await inTransaction(ctx, null, async (_m, snap) => subgraph(snap.graph(),
        (e) => wanted.has(e.name)));
      return result(graph, { ...graph });
    },
  },
];

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
    const { value: graph } = await inTransaction(ctx, null, async (_m, snap) => snap.graph());
    return JSON.stringify(graph, null, 2);
  },
}];

// ------------------------------------------------------------ by meaning

/** How many records nearest to a search_nodes query bring their entities in. */
const NEAREST = 10;

/**
 * With an embedder (memtx-mcp's MEMTX_EMBEDDINGS_URL), search_nodes also
 * finds by meaning: the entities of the NEAREST graph records (entity
 * types, observations, relations: every fact is embedded as it is staged)
 * nearest to the query, as the transaction sees them (memtx.recall_similar,
 * SPEC §19).  Without one, none.
 * @param {import('./memory.js').Memory} m @param {string} query
 * @returns {Promise<Set<string>>}
 */
async function nearEntities(m, query) {
  if (!m.embedder || query.trim() === '') return new Set();
  const rows = await m.recallSimilar(query, { k: NEAREST, entity_prefix: PREFIX, hybrid: false });
  return new Set(rows.map((r) => r.entity.slice(PREFIX.length)));
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
