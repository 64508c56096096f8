/**
 * memtx-mcp: memtx's memory tools and the registered domain tools as an MCP
 * server (the official @modelcontextprotocol/sdk), for one agent principal.
 *
 * One server process is one PostgreSQL role (the role it logs in as) in one
 * namespace.  `tools/list` is `memtx.tool_specs('mcp')`, read afresh on every
 * list so a tool registered later appears, followed by the extra tools given
 * to createServer.  `tools/call` runs:
 *
 *   - `memory_<op>` as `memtx.<op>` with the server's current memtx
 *     transaction and namespace supplied (the model never names either);
 *   - an extra tool by its handler;
 *   - any other name as a domain tool through `memtx.act(tx, name, args,
 *     derived_from, effect_key)`, then, when allowed and an executor was
 *     given for it, the executor (once per action_id).
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
 * (SQLSTATE class 25) forgets it too, so the agent's next call starts
 * afresh.  When the server closes (the host ends
 * the stdio stream) a transaction still open is aborted: uncommitted staging
 * of a finished session must not hold the action gate until its lease ends.
 *
 * Every result is a tool result with `structuredContent` (and the same JSON
 * as text): `{"ok": true, ...}` on success, a gate refusal included (`"ok":
 * true, "allowed": false, "reason", "blockers"`); `{"ok": false, "error":
 * {"type": "invalid_arguments", "message"}}` when the arguments do not fit
 * the tool's inputSchema, `{"ok": false, "error": {"type": "memtx",
 * "sqlstate", "message", "detail", "hint"}}` when memtx refuses the call;
 * both with `isError: true`.  Only connection failures and bugs become
 * JSON-RPC errors.
 *
 * Extending the registry (e.g. the knowledge-graph tools of src/kg.js):
 *
 *     createServer({ db, namespace, extraTools: [...kgTools] })
 *
 * where each extra tool is
 *
 *     { spec: { name, description, inputSchema },   // an MCP tool definition
 *       handler: async (args, ctx) => ({ ...result fields }) }
 *
 * `args` has been validated against `spec.inputSchema` (JSON Schema 2020-12);
 * `ctx` is `{ memory, transaction }`: `memory` is the server's Memory (its
 * `db`, `namespace`, and every method; `memory.tx` is only set once a
 * transaction is open), `await ctx.transaction()` returns the current memtx
 * transaction id, beginning one when none is open.  The handler returns the
 * result fields (the server adds `"ok": true`); throwing MemtxError (what
 * Memory's methods throw) or InvalidArguments becomes an `"ok": false`
 * result.  A tool that shapes its own MCP result (e.g. to match another
 * server's, as src/kg.js does) gives `call: async (args, ctx) =>
 * CallToolResult` instead of `handler`: it gets the arguments unchecked and
 * its result goes out as it is.  bin/memtx-mcp.js serves the tools of every
 * module in its TOOL_MODULES list (each module exports `tools`, an array of
 * extra tools; src/kg.js is one).  Extra tools come after
 * memtx's in tools/list; their names must not start with `memory_`.
 *
 * @module memtx/mcp
 */

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

import { COLUMNS, Memory, MemtxError, NoTransaction } from './memory.js';

/**
 * @typedef {object} ToolSpec an MCP tool definition
 * @property {string} name
 * @property {string} [description]
 * @property {Record<string, any>} inputSchema
 */

/**
 * @typedef {object} ToolContext what an extra tool's handler gets besides its arguments
 * @property {Memory} memory the server's session (db, namespace, methods)
 * @property {() => Promise<number>} transaction the current memtx transaction, begun when none is open
 */

/**
 * @typedef {object} ExtraTool a tool served besides memtx.tool_specs('mcp')
 * @property {ToolSpec} spec
 * @property {(args: Record<string, any>, ctx: ToolContext) => Promise<Record<string, any>>} [handler]
 * @property {(args: unknown, ctx: ToolContext) => Promise<Record<string, any>>} [call] shapes its own CallToolResult
 */

/**
 * Runs an allowed domain tool call: (args, decision) -> JSON output.
 * @typedef {(args: Record<string, any>, decision: import('./memory.js').ActResult) => any} Executor
 */

/** The arguments do not fit the tool (reported to the model as a result). */
export class InvalidArguments extends Error {}

// memory_<op>: which memtx function, whether it runs in the current
// transaction, and the name of the result field
const MEMORY_TOOLS = {
  memory_recall: { fn: 'recall', tx: true, field: 'records', columns: 'recalled' },
  memory_read: { fn: 'read', tx: true, field: 'records', columns: 'record' },
  memory_stage: { fn: 'stage', tx: true, field: 'record_id' },
  memory_commit: { fn: 'commit', tx: true, field: 'results', columns: 'commit', ends: true },
  memory_abort: { fn: 'abort', tx: true, field: 'repairs', columns: 'repair', ends: true },
  memory_revoke: { fn: 'revoke', tx: false, field: 'repairs', columns: 'repair' },
  memory_outcome: { fn: 'outcome', tx: false, field: 'outcome', columns: 'outcome', namespace: true },
};


/** The arguments of a domain tool registered after the server read tool_specs (SPEC §15). */
const DOMAIN_SCHEMA = {
  type: 'object',
  properties: {
    args: { type: 'object' },
    derived_from: { type: 'array', items: { type: 'integer' } },
    effect_key: { type: 'string' },
  },
  required: ['args'],
};

/**
 * A memtx session serving MCP tool calls: the current transaction, the
 * tool registry, the dispatch.  Independent of the transport (tests and
 * other servers can call `callTool` directly).
 */
export class McpSession {
  /**
   * @param {{ memory: Memory, extraTools?: ExtraTool[], executors?: Record<string, Executor> }} options
   */
  constructor({ memory, extraTools = [], executors = {} }) {
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
    this.executors = { ...executors };
    /** @type {Map<number, any>} outputs of executed actions, by action_id */
    this.outputs = new Map();
    this.ajv = addFormats(new Ajv2020({ strict: false }));
    /** @type {Map<string, import('ajv').ValidateFunction>} */
    this.validators = new Map();
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

  /**
   * The MCP tool definitions: memtx.tool_specs('mcp'), then the extra tools
   * (an extra tool replaces a domain tool of the same name).
   * @returns {Promise<ToolSpec[]>}
   */
  async listTools() {
    const specs = /** @type {ToolSpec[]} */ (await this.memory.toolSpecs('mcp'));
    return [
      ...specs.filter((s) => !this.extraTools.has(s.name)),
      ...[...this.extraTools.values()].map((t) => t.spec),
    ];
  }

  /**
   * Execute one tools/call; returns an MCP CallToolResult.
   * @param {string} name
   * @param {unknown} args
   */
  async callTool(name, args) {
    const own = this.extraTools.get(name)?.call;
    if (own) return own(args ?? {}, { memory: this.memory, transaction: () => this.transaction() });
    let content;
    try {
      content = { ok: true, ...(await this.dispatch(name, args ?? {})) };
    } catch (err) {
      if (err instanceof InvalidArguments) {
        content = { ok: false, error: { type: 'invalid_arguments', message: err.message } };
      } else if (err instanceof MemtxError && !(err instanceof NoTransaction)) {
        content = { ok: false, error: { type: 'memtx', ...err.toJSON() } };
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
    if (extra) {
      this.check(name, extra.spec.inputSchema, args);
      return extra.handler(args, { memory: this.memory, transaction: () => this.transaction() });
    }
    const memoryTool = MEMORY_TOOLS[name];
    if (!memoryTool && name.startsWith('memory_')) {
      throw new InvalidArguments(`unknown memory tool ${name}; known: ${Object.keys(MEMORY_TOOLS).join(', ')}`);
    }
    this.check(name, await this.schemaOf(name), args);
    return memoryTool ? this.runMemoryTool(memoryTool, args) : this.act(name, args);
  }

  /**
   * The inputSchema tool_specs('mcp') gives a tool (read when first needed);
   * a domain tool registered since then has the schema every domain tool has.
   * @param {string} name
   */
  async schemaOf(name) {
    if (!this.schemas) {
      const specs = /** @type {ToolSpec[]} */ (await this.memory.toolSpecs('mcp'));
      this.schemas = new Map(specs.map((s) => [s.name, s.inputSchema]));
    }
    return this.schemas.get(name) ?? DOMAIN_SCHEMA;
  }

  /**
   * InvalidArguments unless args fit the schema.
   * @param {string} name @param {Record<string, any>} schema @param {unknown} args
   */
  check(name, schema, args) {
    let validate = this.validators.get(name);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(name, validate);
    }
    if (!validate(args)) {
      const [e] = validate.errors ?? [];
      const where = e?.instancePath ? `argument ${e.instancePath.slice(1)}` : 'arguments';
      throw new InvalidArguments(`${where} ${e?.message ?? 'do not fit the tool'}`);
    }
  }

  /**
   * @param {{ fn: string, tx: boolean, field: string, columns?: keyof COLUMNS, ends?: boolean, namespace?: boolean }} tool
   * @param {Record<string, any>} args
   */
  async runMemoryTool(tool, args) {
    const call = { ...args };
    // a repeated memory_commit returns the stored outcome (commit is idempotent)
    const recommit = tool.fn === 'commit' && !this.memory.isOpen && this.committed !== null;
    if (tool.tx) call.tx = recommit ? this.committed : await this.transaction();
    if (tool.namespace) call.namespace = this.memory.namespace;
    let rows;
    try {
      rows = await this.memory.call(tool.fn, call, tool.columns ? COLUMNS[tool.columns] : null);
    } catch (err) {
      if (tool.tx && err instanceof MemtxError && err.sqlstate?.startsWith('25')) this.memory.detach();
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
      decision = await this.memory.act(tool, args.args, args.derived_from ?? [], args.effect_key);
    } catch (err) {
      if (err instanceof MemtxError && err.sqlstate?.startsWith('25')) {
        if (committed) this.committed = null;
        else this.memory.detach();
      }
      throw err;
    }
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

  /** Abort the transaction still open, if any (the session is over). */
  async close() {
    if (this.beginning) await this.beginning.catch(() => {});
    if (this.memory.isOpen) await this.memory.abort();
  }
}

/**
 * An MCP server (not yet connected to a transport) serving memtx for the
 * role `db` is connected as.
 * @param {{ db: import('./memory.js').Queryable, namespace?: string, extraTools?: ExtraTool[],
 *           executors?: Record<string, Executor>, name?: string, version?: string }} options
 * @returns {{ server: Server, session: McpSession }}
 */
export function createServer({ db, namespace = 'default', extraTools = [], executors = {},
  name = 'memtx', version = '0.2.0' }) {
  const session = new McpSession({ memory: new Memory(db, { namespace }), extraTools, executors });
  const server = new Server({ name, version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await session.listTools() }));
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    session.callTool(request.params.name, request.params.arguments));
  return { server, session };
}
