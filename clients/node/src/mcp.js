/**
 * memtx-mcp: memtx's memory tools and the registered domain tools as an MCP
 * server (the official @modelcontextprotocol/sdk), for one agent principal.
 *
 * One server process is one PostgreSQL role (the role it logs in as) in one
 * namespace.  `tools/list` is `memtx.tool_specs('mcp')`, read afresh on every
 * list so a tool registered later appears, followed by the extra tools given
 * to createServer; each memtx tool gets a title, annotations (readOnlyHint,
 * destructiveHint, idempotentHint, openWorldHint) and an outputSchema here,
 * where the host reads them.  `tools/call` runs:
 *
 *   - `memory_<op>` as `memtx.<op>` with the server's current memtx
 *     transaction and namespace supplied (the model never names either);
 *   - an extra tool by its handler;
 *   - a registered domain tool through `memtx.act(tx, name, args,
 *     derived_from, effect_key)`, then, when allowed and an executor was
 *     given for it, the executor (once per action_id);
 *   - any other name -- a tool the server never listed, misspelt or made up
 *     -- not at all: the call is refused as the protocol says (JSON-RPC
 *     -32602, "Tool NAME not found") and nothing is written.  A domain tool
 *     registered since the last read of tool_specs is found by reading it
 *     again.
 *
 * The transaction spans calls: the first call that needs one begins it
 * (lazily, so listing tools or `memory_revoke` writes nothing), every later
 * call uses it, `memory_commit` or `memory_abort` ends it.  After
 * `memory_commit`, domain tool calls act in the committed transaction (SPEC
 * §5: an agent commits its plan, then acts in the same transaction), and a
 * repeated `memory_commit` returns its stored outcome, until a memory tool or
 * an extra tool needs a transaction, which begins a new one;
 * after `memory_abort` the next call that needs one begins a new one.  A
 * call refused because the transaction has ended or its lease expired
 * (SQLSTATE class 25), or because a fence refused it (42501 naming it: no
 * call on it is ever accepted again, SPEC §12), forgets it too, so the
 * agent's next call starts afresh.  When the server closes (the host ends
 * the stdio stream) a transaction still open is aborted: uncommitted staging
 * of a finished session must not hold the action gate until its lease ends.
 *
 * Every result is a tool result with `structuredContent` (and the same JSON
 * as text): `{"ok": true, ...}` on success, a gate refusal included (`"ok":
 * true, "allowed": false, "reason", "blockers"`); `{"ok": false, "error":
 * {"type": "invalid_arguments", "message"}}` when the arguments do not fit
 * the tool's inputSchema, `{"ok": false, "error": {"type": "memtx",
 * "sqlstate", "message", "detail", "hint"}}` when memtx refuses the call,
 * `{"ok": false, "error": {"type": "unavailable", "message"}}` while the
 * database cannot be reached (see src/connection.js); all with `isError:
 * true`.  Unknown tools and bugs become JSON-RPC errors.
 *
 * Extending the registry (e.g. the knowledge-graph tools of src/kg.js):
 *
 *     createServer({ db, namespace, extraTools: [...kgTools], resources: [...kgResources] })
 *
 * where each extra tool is
 *
 *     { spec: { name, description, inputSchema },   // an MCP tool definition
 *       handler: async (args, ctx) => ({ ...result fields }) }
 *
 * `args` has been validated against `spec.inputSchema` (JSON Schema 2020-12);
 * `ctx` is `{ memory, transaction, resourceChanged }`: `memory` is the
 * server's Memory (its `db`, `namespace`, permission block and every method;
 * `memory.tx` is only set once a transaction is open), `await
 * ctx.transaction()` returns the current memtx transaction id, beginning one
 * when none is open, `ctx.resourceChanged(uri)` tells the host's
 * subscription that a resource changed.  The handler returns the result
 * fields (the server adds `"ok": true`); throwing MemtxError (what Memory's
 * methods throw) or InvalidArguments becomes an `"ok": false` result.  A
 * tool that shapes its own MCP result (e.g. to match another server's, as
 * src/kg.js does) gives `call: async (args, ctx) => CallToolResult` instead
 * of `handler`: it gets the arguments unchecked and its result goes out as
 * it is.  A resource is `{ spec: { uri, name, title, description, mimeType },
 * read: async (ctx) => text }`; the server lists it, reads it and keeps the
 * host's subscriptions (resources/subscribe, resources/unsubscribe).
 * bin/memtx-mcp.js serves the tools and resources of every module in its
 * TOOL_MODULES list (each exports `tools` and may export `resources`;
 * src/kg.js is one).  Extra tools come after memtx's in tools/list; their
 * names must not start with `memory_`.
 *
 * @module memtx/mcp
 */

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema, ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema, ReadResourceRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

import { DatabaseUnavailable } from './connection.js';
import { COLUMNS, EmbeddingError, ENUMS, fencedTransaction, Memory, MemtxError, NoTransaction } from './memory.js';

/**
 * @typedef {object} ToolSpec an MCP tool definition
 * @property {string} name
 * @property {string} [title]
 * @property {string} [description]
 * @property {Record<string, any>} inputSchema
 * @property {Record<string, any>} [outputSchema]
 * @property {Record<string, boolean>} [annotations]
 */

/**
 * @typedef {object} ToolContext what an extra tool's handler gets besides its arguments
 * @property {Memory} memory the server's session (db, namespace, permission block, methods)
 * @property {() => Promise<number>} transaction the current memtx transaction, begun when none is open
 * @property {(uri: string) => void} resourceChanged tells subscribed hosts that a resource changed
 */

/**
 * @typedef {object} ExtraTool a tool served besides memtx.tool_specs('mcp')
 * @property {ToolSpec} spec
 * @property {(args: Record<string, any>, ctx: ToolContext) => Promise<Record<string, any>>} [handler]
 * @property {(args: unknown, ctx: ToolContext) => Promise<Record<string, any>>} [call] shapes its own CallToolResult
 */

/**
 * @typedef {object} Resource a resource served by memtx-mcp
 * @property {{ uri: string, name: string, title?: string, description?: string, mimeType?: string }} spec
 * @property {(ctx: ToolContext) => Promise<string>} read the resource's text
 */

/**
 * Runs an allowed domain tool call: (args, decision) -> JSON output.
 * @typedef {(args: Record<string, any>, decision: import('./memory.js').ActResult) => any} Executor
 */

/** The arguments do not fit the tool (reported to the model as a result). */
export class InvalidArguments extends Error {}

/**
 * A JSON-RPC error answer: the SDK sends `code` and `message` as they are
 * (its McpError would prefix the message with "MCP error CODE: ", which the
 * host's SDK adds again).
 */
export class ProtocolError extends Error {
  /** @param {number} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

// ------------------------------------------------------------ output schemas

/** @param {Record<string, any>} schema */
const nullable = (schema) => ({ anyOf: [schema, { type: 'null' }] });
const ID = { type: 'integer' };
const TEXT = { type: 'string' };
const NUMBER = { type: 'number' };
const ANY = {};
const ROLES = { type: 'array', items: TEXT };
const STATE = { type: 'string', enum: ENUMS['memtx.state'] };
/** @param {Record<string, any>} properties @param {string[]} [optional] */
const object = (properties, optional = []) => ({
  type: 'object', properties, required: Object.keys(properties).filter((p) => !optional.includes(p)),
});

const RECORD = object({
  id: ID, tx_id: ID, namespace: TEXT, entity: TEXT, attribute: TEXT, value: ANY,
  kind: { type: 'string', enum: ENUMS['memtx.kind'] }, state: STATE, source: nullable(TEXT), authority: NUMBER,
  confidence: NUMBER, owner: TEXT, readers: ROLES, writers: ROLES, scope: { type: 'string', enum: ENUMS['memtx.scope'] },
  valid: TEXT, observed_at: nullable(TEXT), reason: nullable(TEXT),
});
// a semantic recall's rows also have the distance (null for a row only the words found)
const RECALLED = object({ record_id: ID, entity: TEXT, attribute: TEXT, value: ANY, rank: NUMBER, distance: nullable(NUMBER) },
  ['distance']);
const VERDICT = object({ record_id: ID, state: STATE, reason: nullable(TEXT) });
const REPAIR = object({ id: ID, root_id: ID, record_id: ID, kind: TEXT, action: TEXT, reason: TEXT, note: nullable(TEXT) });
const OUTCOME = object({ record_id: ID, tx_id: ID, state: STATE, reason: nullable(TEXT), tx_status: TEXT });
const DECISION = {
  allowed: { type: 'boolean' }, reason: nullable(TEXT), action_id: nullable(ID), blockers: { type: 'array', items: ID },
  repeated: { type: 'boolean' }, output: ANY,
};
const FAILURE = object({
  ok: { const: false },
  error: object({
    type: { type: 'string', enum: ['invalid_arguments', 'memtx', 'unavailable', 'embeddings'] }, message: TEXT,
    sqlstate: nullable(TEXT), detail: nullable(TEXT), hint: nullable(TEXT),
  }, ['sqlstate', 'detail', 'hint']),
});

/**
 * A tool's outputSchema: its success fields or the error shape (the host
 * validates structuredContent, errors included, against it).
 * @param {Record<string, any>} fields @param {string[]} [optional]
 */
const outputSchema = (fields, optional = []) => ({
  type: 'object', anyOf: [object({ ok: { const: true }, ...fields }, optional), FAILURE],
});

/**
 * MCP tool annotations.
 * @param {{ readOnly?: boolean, destructive?: boolean, idempotent?: boolean, openWorld?: boolean }} hints
 */
const annotations = ({ readOnly = false, destructive = false, idempotent = false, openWorld = false }) => ({
  readOnlyHint: readOnly, destructiveHint: destructive, idempotentHint: idempotent, openWorldHint: openWorld,
});

/**
 * @typedef {object} MemoryTool how memtx-mcp runs and describes one memory_* tool
 * @property {string} fn the memtx function
 * @property {boolean} tx whether it runs in the current transaction
 * @property {string} field the result field
 * @property {keyof typeof COLUMNS} [columns]
 * @property {boolean} [ends] whether it ends the transaction
 * @property {boolean} [namespace] whether the server supplies its namespace
 * @property {string} title
 * @property {Record<string, boolean>} annotations
 * @property {Record<string, any>} output the result field's schema
 */

/**
 * memory_<op>: which memtx function, whether it runs in the current
 * transaction, the name of the result field, and what a host is told.
 * Reads, recall and outcome change nothing a model could see (recall and
 * read note what was read, for flow control); revoke and abort retract;
 * commit, revoke, abort and outcome give the same answer when repeated.
 * @type {Record<string, MemoryTool>}
 */
const MEMORY_TOOLS = {
  memory_recall: {
    fn: 'recall', tx: true, field: 'records', columns: 'recalled', title: 'Recall memories',
    annotations: annotations({ readOnly: true, idempotent: true }), output: { type: 'array', items: RECALLED },
  },
  memory_read: {
    fn: 'read', tx: true, field: 'records', columns: 'record', title: 'Read memory',
    annotations: annotations({ readOnly: true, idempotent: true }), output: { type: 'array', items: RECORD },
  },
  memory_stage: {
    fn: 'stage', tx: true, field: 'record_id', title: 'Stage a record',
    annotations: annotations({}), output: ID,
  },
  memory_commit: {
    fn: 'commit', tx: true, field: 'results', columns: 'commit', ends: true, title: 'Commit staged records',
    annotations: annotations({ idempotent: true }), output: { type: 'array', items: VERDICT },
  },
  memory_abort: {
    fn: 'abort', tx: true, field: 'repairs', columns: 'repair', ends: true, title: 'Abort the transaction',
    annotations: annotations({ destructive: true, idempotent: true }), output: { type: 'array', items: REPAIR },
  },
  memory_revoke: {
    fn: 'revoke', tx: false, field: 'repairs', columns: 'repair', title: 'Revoke a record',
    annotations: annotations({ destructive: true, idempotent: true }), output: { type: 'array', items: REPAIR },
  },
  memory_outcome: {
    fn: 'outcome', tx: false, field: 'outcome', columns: 'outcome', namespace: true, title: 'Outcome of a proposal',
    annotations: annotations({ readOnly: true, idempotent: true }), output: nullable(OUTCOME),
  },
};

/** The arguments of a domain tool, if tool_specs has no schema for it (SPEC §15). */
const DOMAIN_SCHEMA = {
  type: 'object',
  properties: {
    args: { type: 'object' },
    derived_from: { type: 'array', items: { type: 'integer' } },
    effect_key: { type: 'string' },
  },
  required: ['args'],
};
const DOMAIN_OUTPUT = outputSchema(DECISION, ['output']);

/** A domain tool's title: its name in words ("issue_refund" -> "Issue refund"). @param {string} name */
const titleOf = (name) => {
  const words = name.replace(/[_-]+/g, ' ').trim();
  return words ? words[0].toUpperCase() + words.slice(1) : name;
};

/**
 * What memtx-mcp adds to a tool_specs('mcp') entry: title, annotations and
 * outputSchema.  A domain tool is destructive when irreversible (a later
 * retraction can only report its effect as leaked) and reaches outside
 * (openWorldHint); none is idempotent (an effect key makes one call so).
 * @param {ToolSpec} spec @param {Map<string, boolean>} reversible
 * @returns {ToolSpec}
 */
function describeTool(spec, reversible) {
  const memoryTool = MEMORY_TOOLS[spec.name];
  if (memoryTool) {
    return { ...spec, title: memoryTool.title, annotations: memoryTool.annotations,
      outputSchema: outputSchema({ [memoryTool.field]: memoryTool.output }) };
  }
  return {
    ...spec, title: titleOf(spec.name),
    annotations: annotations({ destructive: !reversible.get(spec.name), openWorld: true }),
    outputSchema: DOMAIN_OUTPUT,
  };
}

/**
 * A tool definition without memory_recall's `semantic` argument (a server
 * with no embedding model does not offer recall by meaning).
 * @param {ToolSpec} spec
 * @returns {ToolSpec}
 */
function withoutSemantic(spec) {
  if (spec.name !== 'memory_recall' || !spec.inputSchema?.properties?.semantic) return spec;
  const { semantic, ...properties } = spec.inputSchema.properties;
  return { ...spec, inputSchema: { ...spec.inputSchema, properties } };
}

/**
 * A memtx session serving MCP tool calls: the current transaction, the
 * tool registry, the dispatch.  Independent of the transport (tests and
 * other servers can call `callTool` directly).
 */
export class McpSession {
  /**
   * @param {{ memory: Memory, extraTools?: ExtraTool[], executors?: Record<string, Executor>,
   *           resources?: Resource[], notify?: (uri: string) => void }} options
   */
  constructor({ memory, extraTools = [], executors = {}, resources = [], notify = () => {} }) {
    this.memory = memory;
    /** @type {Map<string, ExtraTool>} */
    this.extraTools = new Map();
    for (const tool of extraTools) {
      const name = tool?.spec?.name;
      if (typeof name !== 'string' || (typeof tool.handler !== 'function' && typeof tool.call !== 'function')) {
        throw new TypeError('an extra tool is { spec: { name, inputSchema }, handler or call }');
      }
      // the rule memtx.register_tool applies to domain tool names (SPEC §15)
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(name) || name.startsWith('memory_')) {
        throw new TypeError(`an extra tool name matches ^[A-Za-z0-9_-]{1,64}$ and does not begin memory_: ${name}`);
      }
      if (this.extraTools.has(name)) throw new TypeError(`tool ${name} is defined twice`);
      this.extraTools.set(name, tool);
    }
    /** @type {Map<string, Resource>} */
    this.resources = new Map(resources.map((r) => [r.spec.uri, r]));
    /** @type {Set<string>} the URIs the host subscribed to */
    this.subscriptions = new Set();
    this.notify = notify;
    this.executors = { ...executors };
    /** @type {Map<number, any>} outputs of executed actions, by action_id */
    this.outputs = new Map();
    // ajv and ajv-formats are CommonJS: what they export is the module's default
    this.ajv = addFormatsModule.default(new Ajv2020Module.default({ strict: false }));
    /** @type {Map<string, import('ajv').ValidateFunction>} */
    this.validators = new Map();
    /** @type {Map<string, Record<string, any>> | null} inputSchema by name, from the last tool_specs read */
    this.schemas = null;
    /** @type {Promise<number> | null} */
    this.beginning = null;
    /** @type {number | null} the transaction memory_commit ended, where domain tools act */
    this.committed = null;
  }

  /** The current memtx transaction, begun when none is open. */
  async transaction() {
    if (this.memory.isOpen) return this.memory.tx;
    this.committed = null;
    // concurrent calls share one begin
    this.beginning ??= this.memory.begin().finally(() => { this.beginning = null; });
    return this.beginning;
  }

  /** @returns {ToolContext} */
  context() {
    return {
      memory: this.memory,
      transaction: () => this.transaction(),
      resourceChanged: (uri) => { if (this.subscriptions.has(uri)) this.notify(uri); },
    };
  }

  /** memtx.tool_specs('mcp'), remembered for the calls that follow. */
  async readSpecs() {
    const specs = /** @type {ToolSpec[]} */ (await this.memory.toolSpecs('mcp'));
    this.schemas = new Map(specs.map((s) => [s.name, s.inputSchema]));
    return specs;
  }

  /**
   * The MCP tool definitions: memtx.tool_specs('mcp') with titles,
   * annotations and output schemas, then the extra tools (an extra tool
   * replaces a domain tool of the same name).
   * @returns {Promise<ToolSpec[]>}
   */
  async listTools() {
    const specs = (await this.readSpecs()).map((s) => (this.memory.embedder ? s : withoutSemantic(s)));
    const rows = await this.memory._query('SELECT name, reversible FROM memtx.tools', []);
    const reversible = new Map(rows.map((r) => [r.name, r.reversible]));
    return [
      ...specs.filter((s) => !this.extraTools.has(s.name)).map((s) => describeTool(s, reversible)),
      ...[...this.extraTools.values()].map((t) => t.spec),
    ];
  }

  /**
   * Whether a tool of this name is served: an extra tool, a memory tool, or a
   * domain tool in tool_specs (read again when the name is not among those
   * read last, so a tool registered since appears).
   * @param {string} name
   */
  async serves(name) {
    if (this.extraTools.has(name) || name in MEMORY_TOOLS) return true;
    if (this.schemas?.has(name)) return true;
    if (name.startsWith('memory_')) return false;
    await this.readSpecs();
    return /** @type {Map<string, any>} */ (this.schemas).has(name);
  }

  /**
   * Execute one tools/call; returns an MCP CallToolResult.  A name the
   * server does not serve is a JSON-RPC error (-32602) and writes nothing.
   * @param {string} name
   * @param {unknown} args
   */
  async callTool(name, args) {
    let content;
    try {
      if (!(await this.serves(name))) throw new ProtocolError(ErrorCode.InvalidParams, `Tool ${name} not found`);
      const own = this.extraTools.get(name)?.call;
      if (own) return await own(args ?? {}, this.context());
      content = { ok: true, ...(await this.dispatch(name, args ?? {})) };
    } catch (err) {
      if (err instanceof InvalidArguments) {
        content = { ok: false, error: { type: 'invalid_arguments', message: err.message } };
      } else if (err instanceof EmbeddingError) {
        content = { ok: false, error: { type: 'embeddings', message: err.message } };
      } else if (err instanceof MemtxError && !(err instanceof NoTransaction)) {
        content = { ok: false, error: { type: 'memtx', ...err.toJSON() } };
      } else if (err instanceof DatabaseUnavailable) {
        content = { ok: false, error: { type: 'unavailable', message: err.message } };
      } else {
        throw err;
      }
    }
    return {
      content: [{ type: 'text', text: JSON.stringify(content) }],
      structuredContent: content,
      isError: !content.ok,
    };
  }

  /**
   * @param {string} name
   * @param {any} args
   * @returns {Promise<Record<string, any>>}
   */
  async dispatch(name, args) {
    const extra = this.extraTools.get(name);
    if (extra?.handler) {
      this.check(name, extra.spec.inputSchema, args);
      return extra.handler(args, this.context());
    }
    const memoryTool = MEMORY_TOOLS[name];
    if (!this.schemas) await this.readSpecs();
    this.check(name, this.schemas?.get(name) ?? DOMAIN_SCHEMA, args);
    return memoryTool ? this.runMemoryTool(memoryTool, args) : this.act(name, args);
  }

  /**
   * InvalidArguments unless args fit the schema.
   * @param {string} name @param {Record<string, any>} schema @param {unknown} args
   */
  check(name, schema, args) {
    const validate = this.validators.get(name) ?? this.ajv.compile(schema);
    this.validators.set(name, validate);
    if (!validate(args)) {
      const [e] = validate.errors ?? [];
      const where = e?.instancePath ? `argument ${e.instancePath.slice(1)}` : 'arguments';
      throw new InvalidArguments(`${where} ${e?.message ?? 'do not fit the tool'}`);
    }
  }

  /**
   * Forget the session's transaction when err ends it for good: class 25
   * (ended, lease expired) or the fence's 42501 naming it.
   * @param {unknown} err @param {number} tx @param {boolean} committed whether tx is the committed one
   */
  forgetOn(err, tx, committed) {
    const gone = (err instanceof MemtxError && err.sqlstate?.startsWith('25')) || fencedTransaction(err) === tx;
    if (!gone) return;
    if (committed) this.committed = null;
    else this.memory.detach();
  }

  /**
   * @param {MemoryTool} tool
   * @param {Record<string, any>} args
   */
  async runMemoryTool(tool, args) {
    /** @type {Record<string, any>} */
    const call = { ...args };
    // a repeated memory_commit returns the stored outcome (commit is idempotent)
    const recommit = tool.fn === 'commit' && !this.memory.isOpen && this.committed !== null;
    if (tool.tx) call.tx = recommit ? this.committed : await this.transaction();
    if (tool.namespace) call.namespace = this.memory.namespace;
    if (tool.fn === 'stage') Object.assign(call, this.memory._withDefaults(call));
    let rows;
    try {
      rows = await this.runCall(tool, call);
    } catch (err) {
      if (tool.tx) this.forgetOn(err, call.tx, recommit);
      throw err;
    }
    if (tool.ends) this.memory.detach();
    if (tool.fn === 'commit') this.committed = call.tx;
    if (tool.fn === 'commit') this.memory.lastCommit = /** @type {any} */ (rows);
    if (!tool.columns) return { [tool.field]: Number(Object.values(rows[0])[0]) };
    if (tool.fn === 'outcome') return { [tool.field]: rows[0] ?? null };
    return { [tool.field]: rows };
  }

  /**
   * The memtx call of a memory tool.  With an embedder, memory_stage embeds
   * the record in the same statement (Memory.stage) and memory_recall with
   * `semantic` recalls by meaning and words (Memory.recallSimilar, SPEC
   * §19); `semantic` without an embedder is refused, as the tool list of
   * such a server does not offer it.
   * @param {MemoryTool} tool @param {Record<string, any>} call
   * @returns {Promise<Record<string, any>[]>}
   */
  async runCall(tool, call) {
    if (tool.fn === 'recall') {
      const { semantic, ...args } = call;
      if (!semantic) return this.memory.call('recall', args, COLUMNS.recalled);
      if (!this.memory.embedder) {
        throw new InvalidArguments('argument semantic: this server has no embedding model (memtx-mcp embeds '
          + 'through MEMTX_EMBEDDINGS_URL and MEMTX_EMBEDDINGS_MODEL); recall without it');
      }
      const { tx, query, ...options } = args;
      return this.memory.recallSimilar(query, options);
    }
    if (tool.fn === 'stage' && this.memory.embedder) {
      const { tx, entity, attribute, value, ...options } = call;
      return [{ stage: await this.memory.stage(entity, attribute, value, options) }];
    }
    return this.memory.call(tool.fn, call, tool.columns ? COLUMNS[tool.columns] : null);
  }

  /**
   * A domain tool call through memtx.act, then its executor when allowed.
   * It acts in the open transaction or, when memory_commit has just ended
   * one, in that committed transaction (SPEC §5: an agent commits its plan,
   * then acts in the same transaction); with neither, in a new one.
   */
  async act(/** @type {string} */ tool, /** @type {Record<string, any>} */ args) {
    // after a commit the session's tx is still the committed transaction
    const committed = !this.memory.isOpen && this.committed !== null;
    if (!committed) await this.transaction();
    let decision;
    try {
      // the tool is listed, hence registered: no warning to give
      decision = await this.memory.act(tool, args.args, args.derived_from ?? [], args.effect_key,
        { allowUnregistered: true });
    } catch (err) {
      this.forgetOn(err, this.memory.tx, committed);
      throw err;
    }
    /** @type {Record<string, any>} */
    const content = { ...decision };
    const executor = this.executors[tool];
    if (decision.allowed && executor && decision.action_id !== null) {
      if (!this.outputs.has(decision.action_id)) {
        this.outputs.set(decision.action_id, await executor(args.args, decision));
      }
      content.output = this.outputs.get(decision.action_id);
    }
    return content;
  }

  /** The resources served, as resources/list gives them. */
  listResources() {
    return [...this.resources.values()].map((r) => ({ ...r.spec }));
  }

  /**
   * resources/read of one resource; -32602 for a URI not served.
   * @param {string} uri
   */
  async readResource(uri) {
    const resource = this.resources.get(uri);
    if (!resource) throw new ProtocolError(ErrorCode.InvalidParams, `Resource ${uri} not found`);
    let text;
    try {
      text = await resource.read(this.context());
    } catch (err) {
      if (err instanceof DatabaseUnavailable || err instanceof MemtxError) {
        throw new ProtocolError(ErrorCode.InternalError, err.message);
      }
      throw err;
    }
    return { contents: [{ uri, mimeType: resource.spec.mimeType, text }] };
  }

  /** Abort the transaction still open, if any (the session is over). */
  async close() {
    if (this.beginning) await this.beginning.catch(() => {});
    if (this.memory.isOpen) await this.memory.abort();
  }
}

/**
 * An MCP server (not yet connected to a transport) serving memtx for the
 * role `db` is connected as.  `scope`, `readers` and `writers` are the
 * permission block of what its tools stage (Memory's options).  With an
 * `embedder` (and the memtx_vector `embeddingModel` it stores under), what
 * the tools stage is embedded and memory_recall offers `semantic`.
 * @param {{ db: import('./memory.js').Queryable, namespace?: string, extraTools?: ExtraTool[],
 *           resources?: Resource[], executors?: Record<string, Executor>, name?: string, version?: string,
 *           scope?: 'private' | 'shared' | 'public', readers?: string[], writers?: string[],
 *           embedder?: import('./memory.js').Embedder, embeddingModel?: string,
 *           embeddingText?: (entity: string, attribute: string, value: any) => string }} options
 * @returns {{ server: Server, session: McpSession }}
 */
export function createServer({ db, namespace = 'default', extraTools = [], resources = [], executors = {},
  name = 'memtx', version = '0.3.0', scope, readers, writers, embedder, embeddingModel, embeddingText }) {
  // tools/call answers only listed tools, so act on them without the unregistered-tool warning
  const memory = new Memory(db, { namespace, scope, readers, writers, allowUnregisteredTools: true, embedder,
    embeddingModel, ...(embeddingText && { embeddingText }) });
  /** @type {Server} */
  let server;
  const notify = (/** @type {string} */ uri) => { server.sendResourceUpdated({ uri }).catch(() => {}); };
  const session = new McpSession({ memory, extraTools, executors, resources, notify });
  server = new Server({ name, version }, {
    capabilities: {
      tools: { listChanged: true },
      ...(resources.length && { resources: { subscribe: true, listChanged: true } }),
    },
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    try {
      return { tools: await session.listTools() };
    } catch (err) {
      if (err instanceof DatabaseUnavailable || err instanceof MemtxError) {
        throw new ProtocolError(ErrorCode.InternalError, `cannot list tools: ${err.message}`);
      }
      throw err;
    }
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    session.callTool(request.params.name, request.params.arguments));
  if (resources.length) {
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: session.listResources() }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [] }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => session.readResource(request.params.uri));
    server.setRequestHandler(SubscribeRequestSchema, async (request) => {
      session.subscriptions.add(request.params.uri);
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
      session.subscriptions.delete(request.params.uri);
      return {};
    });
  }
  return { server, session };
}
