// memtx-mcp as an MCP host runs it: a child process on stdio under a role of
// its own, driven by the SDK's client (list tools with their metadata;
// recall, stage, act blocked, commit, act blocked by another agent then
// allowed, revoke; an unknown tool name refused; a fence; the permission
// block from the environment; a wrong password and a database that is down
// at start), a database restart under a running server (on a cluster of the
// test's own, test/cluster.js), and the extra-tool and executor hooks of
// createServer.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';

import { tools as KG_TOOLS } from '../src/kg.js';
import { createServer, InvalidArguments } from '../src/mcp.js';
import { Memory } from '../src/memory.js';
import { ownCluster } from './cluster.js';
import { freshDatabase } from './db.js';

const DATABASE = 'memtx_node_mcp';
const AGENT = 'memtx_node_mcp_agent';
const OTHER = 'memtx_node_mcp_other';
const SERVER = fileURLToPath(new URL('../bin/memtx-mcp.js', import.meta.url));
let fx;

before(async () => {
  fx = await freshDatabase(DATABASE, [AGENT, OTHER]);
  for (const role of [AGENT, OTHER]) await fx.harness.query(`SELECT memtx.grant_namespace('support', '${role}')`);
  await fx.harness.query("SELECT memtx.register_source('order_lookup', 0.8)");
  await fx.harness.query("SELECT memtx.register_tool('issue_refund', reversible => false)");
});
after(async () => fx?.drop());

/** The environment of a memtx-mcp for role `user` (the test database, namespace support). */
const serverEnv = (user = AGENT, extra = {}) => ({
  PATH: process.env.PATH ?? '',
  PGHOST: process.env.PGHOST ?? 'localhost',
  PGPORT: process.env.PGPORT ?? '5432',
  PGDATABASE: DATABASE,
  PGUSER: user,
  PGPASSWORD: fx.password,
  MEMTX_NAMESPACE: 'support',
  ...extra,
});

/**
 * A memtx-mcp child process driven by the SDK's client, its stderr kept.
 * @param {Record<string, string>} env
 */
async function startServer(env) {
  const client = new Client({ name: 'memtx-test-host', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: process.execPath, args: [SERVER], env, stderr: 'pipe' });
  let log = '';
  transport.stderr?.on('data', (chunk) => { log += chunk; });
  await client.connect(transport);
  return { client, transport, log: () => log };
}

/** Counts of what a call could write, read by the harness. */
async function written() {
  const { rows: [row] } = await fx.harness.query(`SELECT (SELECT count(*) FROM memtx.records)::int AS records,
    (SELECT count(*) FROM memtx.transactions)::int AS transactions,
    (SELECT count(*) FROM memtx.action_log)::int AS actions`);
  return row;
}

/** The agent's open memtx transactions, as the harness sees them. */
async function openTransactions() {
  const { rows } = await fx.harness.query(
    "SELECT id::int FROM memtx.transactions WHERE agent = $1 AND status = 'open' ORDER BY id", [AGENT]);
  return rows.map((r) => r.id);
}

describe('memtx-mcp over stdio', () => {
  const client = new Client({ name: 'memtx-test-host', version: '1.0.0' });
  /** tools/call, returning the structured result and isError */
  const call = async (name, args) => {
    const result = await client.callTool({ name, arguments: args });
    assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
    return { ...result.structuredContent, isError: result.isError };
  };
  let belief;
  let refund;

  before(async () => {
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER], env: serverEnv() }));
  });

  test('lists the memory tools and the registered domain tool, with JSON Schemas', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['memory_recall', 'memory_read', 'memory_stage',
      'memory_commit', 'memory_abort', 'memory_revoke', 'memory_outcome', 'issue_refund',
      ...KG_TOOLS.map((t) => t.spec.name)]);
    for (const t of tools) assert.equal(t.inputSchema.type, 'object', t.name);
    assert.deepEqual(await openTransactions(), [], 'listing tools begins no transaction');
  });

  test('every memtx tool has a title, annotations a host can tell reads from writes by, and an outputSchema', async () => {
    const { tools } = await client.listTools();
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    const flags = (name) => ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']
      .filter((h) => hints[name][h]).join(' ');
    assert.deepEqual(Object.fromEntries(tools.slice(0, 8).map((t) => [t.name, flags(t.name)])), {
      memory_recall: 'readOnlyHint idempotentHint', memory_read: 'readOnlyHint idempotentHint',
      memory_stage: '', memory_commit: 'idempotentHint', memory_abort: 'destructiveHint idempotentHint',
      memory_revoke: 'destructiveHint idempotentHint', memory_outcome: 'readOnlyHint idempotentHint',
      issue_refund: 'destructiveHint openWorldHint', // irreversible: a retraction can only report it leaked
    });
    for (const t of tools) {
      assert.equal(typeof t.title, 'string', t.name);
      assert.equal(t.outputSchema?.type, 'object', t.name);
    }
    assert.equal(tools.find((t) => t.name === 'issue_refund').title, 'Issue refund');
    // a reversible tool registered later is listed as not destructive
    await fx.harness.query("SELECT memtx.register_tool('hold_order', reversible => true, compensator => 'release_order')");
    const hold = (await client.listTools()).tools.find((t) => t.name === 'hold_order');
    assert.deepEqual([hold.annotations.destructiveHint, hold.annotations.openWorldHint], [false, true]);
  });

  test('an unknown tool name is refused as the protocol says (-32602) and writes nothing', async () => {
    const before = await written();
    for (const name of ['delete_everything', 'issue_refnud', 'memory_forget']) {
      await assert.rejects(client.callTool({ name, arguments: { args: {} } }), (err) => err instanceof McpError
        && err.code === ErrorCode.InvalidParams && err.message.includes(`Tool ${name} not found`));
    }
    assert.deepEqual(await written(), before);
    assert.deepEqual(await openTransactions(), []);
  });

  test('recall begins the transaction lazily', async () => {
    assert.deepEqual(await call('memory_recall', { query: 'refund for order 841' }),
      { ok: true, records: [], isError: false });
    assert.equal((await openTransactions()).length, 1);
  });

  test('stage, then the act gate refuses the refund as a structured result', async () => {
    const staged = await call('memory_stage', { entity: 'order:841', attribute: 'refund_eligible',
      value: { eligible: true }, source: 'order_lookup', confidence: 0.9 });
    assert.equal(staged.ok, true);
    belief = staged.record_id;
    assert.equal(typeof belief, 'number');
    assert.deepEqual(await call('issue_refund', { args: { order: 841 }, derived_from: [belief] }), {
      ok: true, allowed: false, reason: 'in_flight_tentative', action_id: null, blockers: [belief],
      repeated: false, isError: false,
    });
  });

  test('commit ends the transaction; a repeat returns the stored outcome', async () => {
    const committed = {
      ok: true, results: [{ record_id: belief, state: 'committed', reason: null }], isError: false,
    };
    assert.deepEqual(await call('memory_commit', {}), committed);
    assert.deepEqual(await openTransactions(), []);
    assert.deepEqual(await call('memory_commit', {}), committed);
    assert.deepEqual(await openTransactions(), []);
  });

  test("after the commit the refund acts in the committed transaction: blocked by another agent's staging, then allowed", async () => {
    const other = new Memory(await fx.connect(OTHER), { namespace: 'support' });
    await other.begin();
    const pending = await other.stage('order:900', 'note', 'in flight');
    const request = { args: { order: 841 }, derived_from: [belief], effect_key: 'refund-841' };
    assert.deepEqual(await call('issue_refund', request), {
      ok: true, allowed: false, reason: 'in_flight_tentative', action_id: null, blockers: [pending],
      repeated: false, isError: false,
    });
    await other.abort();
    const decision = await call('issue_refund', request);
    assert.equal(decision.ok, true);
    assert.equal(decision.allowed, true);
    assert.equal(typeof decision.action_id, 'number');
    refund = decision.action_id;
    const { rows } = await fx.harness.query(
      'SELECT tx_id::int FROM memtx.records WHERE id = ANY($1) ORDER BY id', [[belief, refund]]);
    assert.equal(rows[0].tx_id, rows[1].tx_id, 'the action belongs to the plan\'s transaction');
    assert.deepEqual(await openTransactions(), [], 'acting began no transaction');
    assert.deepEqual(await call('issue_refund', request), { ...decision, repeated: true }, 'a repeat under the effect key');
  });

  test('a memory tool after the commit begins a new transaction, which sees the committed belief', async () => {
    const { records } = await call('memory_read', { entity: 'order:841' });
    assert.deepEqual(records.map((r) => [r.id, r.state]), [[belief, 'committed']]);
    assert.equal((await openTransactions()).length, 1);
  });

  test('revoking the belief repairs the refund derived from it', async () => {
    const result = await call('memory_revoke', { record: belief, note: 'lamp was fine' });
    assert.equal(result.ok, true);
    assert.deepEqual(result.repairs.map((r) => r.record_id).sort(), [belief, refund].sort());
    const { rows } = await fx.harness.query(
      'SELECT state::text FROM memtx.records WHERE id = ANY($1) ORDER BY id', [[belief, refund]]);
    assert.deepEqual(rows.map((r) => r.state), ['revoked', 'revoked']);
  });

  test('arguments that do not fit and memtx errors are error results, not protocol errors', async () => {
    const missing = await call('memory_stage', { entity: 'order:841', attribute: 'refund_eligible' });
    assert.equal(missing.isError, true);
    assert.equal(missing.error.type, 'invalid_arguments');
    assert.match(missing.error.message, /value/);
    const outOfRange = await call('memory_stage', { entity: 'order:841', attribute: 'refund_eligible',
      value: true, confidence: 1.5 });
    assert.equal(outOfRange.error.type, 'invalid_arguments', 'the inputSchema bounds confidence');
    const refused = await call('memory_stage', { entity: 'order:841', attribute: 'refund_eligible',
      value: true, observed_at: '2999-01-01T00:00:00Z' });
    assert.deepEqual([refused.ok, refused.isError, refused.error.type, refused.error.sqlstate],
      [false, true, 'memtx', '22008']);
    const notFound = await call('memory_revoke', { record: 987654321 });
    assert.equal(notFound.error.sqlstate, '42704');
  });

  test('outcome answers null for an unknown proposal (a memtx error where the server lacks it)', async () => {
    const result = await call('memory_outcome', { proposal: 'no-such-proposal' });
    const { rows: [{ present }] } = await fx.harness.query(
      "SELECT to_regprocedure('memtx.outcome(text, text, text)') IS NOT NULL AS present");
    if (present) assert.deepEqual(result, { ok: true, outcome: null, isError: false });
    else assert.deepEqual([result.isError, result.error.sqlstate], [true, '42883']);
  });

  test('a tool registered after the listing is found and acts', async () => {
    await fx.harness.query("SELECT memtx.register_tool('notify_customer', reversible => true)");
    const sent = await call('notify_customer', { args: { order: 841 } });
    assert.deepEqual([sent.ok, sent.allowed], [true, true]);
    await call('memory_abort', {});
  });

  test('a fence drops the transaction it refused: after unfence the next call begins a new one', async () => {
    const staged = await call('memory_stage', { entity: 'order:843', attribute: 'note', value: 'before the fence' });
    const [fencedTx] = await openTransactions();
    await fx.harness.query('SELECT memtx.fence($1)', [AGENT]);
    try {
      const refused = await call('memory_stage', { entity: 'order:843', attribute: 'note', value: 'during' });
      assert.deepEqual([refused.isError, refused.error.sqlstate], [true, '42501']);
      assert.match(refused.error.message, new RegExp(`memtx transaction ${fencedTx} was fenced`));
    } finally {
      await fx.harness.query('SELECT memtx.unfence($1)', [AGENT]);
    }
    const after = await call('memory_stage', { entity: 'order:843', attribute: 'note', value: 'after the fence' });
    assert.equal(after.ok, true, JSON.stringify(after));
    const { rows } = await fx.harness.query('SELECT id::int, tx_id::int, state::text, reason FROM memtx.records WHERE id = ANY($1) ORDER BY id',
      [[staged.record_id, after.record_id]]);
    assert.deepEqual(rows.map((r) => [r.tx_id === fencedTx, r.state, r.reason]),
      [[true, 'revoked', 'fenced'], [false, 'tentative', null]]);
    assert.equal((await call('memory_commit', {})).ok, true);
  });

  test('abort ends the transaction; closing the host aborts one still open', async () => {
    await call('memory_stage', { entity: 'order:842', attribute: 'note', value: 'to be dropped' });
    const aborted = await call('memory_abort', {});
    assert.equal(aborted.ok, true);
    assert.equal(aborted.repairs[0].reason, 'aborted');
    assert.deepEqual(await openTransactions(), []);
    await call('memory_stage', { entity: 'order:842', attribute: 'note', value: 'left open' });
    const [open] = await openTransactions();
    await client.close();
    for (let i = 0; i < 50 && (await openTransactions()).length; i++) await new Promise((r) => setTimeout(r, 100));
    const { rows } = await fx.harness.query('SELECT status::text FROM memtx.transactions WHERE id = $1', [open]);
    assert.deepEqual(rows, [{ status: 'aborted' }]);
  });
});

test('the permission block comes from MEMTX_DEFAULT_SCOPE and MEMTX_DEFAULT_READERS', async () => {
  const { client } = await startServer(serverEnv(AGENT, { MEMTX_DEFAULT_SCOPE: 'shared', MEMTX_DEFAULT_READERS: ` ${OTHER} ,` }));
  try {
    const { structuredContent: staged } = await client.callTool({ name: 'memory_stage',
      arguments: { entity: 'order:850', attribute: 'note', value: 'for the team' } });
    const { structuredContent: own } = await client.callTool({ name: 'memory_stage',
      arguments: { entity: 'order:850', attribute: 'private_note', value: 'mine', scope: 'private', readers: [] } });
    await client.callTool({ name: 'memory_commit', arguments: {} });
    const other = new Memory(await fx.connect(OTHER), { namespace: 'support' });
    const seen = await other.lookup('order:850');
    assert.deepEqual(seen.map((r) => [r.id, r.scope, r.readers]), [[staged.record_id, 'shared', [OTHER]]]);
    assert.equal((await fx.harness.query('SELECT scope::text FROM memtx.records WHERE id = $1', [own.record_id])).rows[0].scope,
      'private', 'a call that gives its own permission block keeps it');
  } finally {
    await client.close();
  }
  const bad = spawnSync(process.execPath, [SERVER], { env: serverEnv(AGENT, { MEMTX_DEFAULT_SCOPE: 'team' }), input: '', timeout: 30_000 });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr.toString(), /MEMTX_DEFAULT_SCOPE must be one of private, shared, public; got "team"/);
});

for (const [what, env, cause] of [
  ['a wrong password', () => serverEnv(AGENT, { PGPASSWORD: 'wrong' }), /password authentication failed/],
  ['a database that is down', () => serverEnv(AGENT, { PGHOST: '127.0.0.1', PGPORT: '1' }), /ECONNREFUSED/],
]) {
  test(`with ${what} at start memtx-mcp stays up, logs the cause, and answers with it`, async () => {
    const before = await written();
    const { client, log } = await startServer(env());
    try {
      await assert.rejects(client.listTools(), (err) => err instanceof McpError
        && err.code === ErrorCode.InternalError && cause.test(err.message));
      const result = await client.callTool({ name: 'memory_read', arguments: {} });
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent.error.type, 'unavailable');
      assert.match(result.structuredContent.error.message, cause);
      assert.match(log(), /memtx-mcp: cannot connect to PostgreSQL: /);
      assert.match(log(), cause);
      assert.doesNotMatch(log(), /\n.*cannot connect[^]*cannot connect/, 'one line per cause, not per attempt');
    } finally {
      await client.close();
    }
    assert.deepEqual(await written(), before);
  });
}

describe('memtx-mcp across a database restart', () => {
  let cluster;
  let server;
  before(async () => {
    cluster = await ownCluster();
    const admin = new pg.Client({ ...clusterConfig(cluster.env) });
    await admin.connect();
    await admin.query('SET client_min_messages = warning');
    await admin.query('CREATE EXTENSION memtx CASCADE');
    await admin.query(`CREATE ROLE ${AGENT} LOGIN`);
    await admin.end();
    server = await startServer({ PATH: process.env.PATH ?? '', ...cluster.env, PGUSER: AGENT });
  });
  after(async () => {
    await server?.client.close();
    cluster?.remove();
  });
  const clusterConfig = (env) => ({ host: env.PGHOST, port: Number(env.PGPORT), user: env.PGUSER, database: env.PGDATABASE });
  const call = async (name, args) => (await server.client.callTool({ name, arguments: args })).structuredContent;

  test('the server stays up, answers "unavailable" while the database is away, reconnects, and the transaction goes on', async () => {
    const staged = await call('memory_stage', { entity: 'order:1', attribute: 'status', value: 'open' });
    assert.equal(staged.ok, true);
    cluster.stop();
    const away = await call('memory_stage', { entity: 'order:1', attribute: 'note', value: 'while away' });
    assert.deepEqual([away.ok, away.error.type], [false, 'unavailable']);
    assert.match(away.error.message, /database is unavailable|connection to the database was lost/);
    cluster.start();
    let committed;
    for (let i = 0; i < 300; i += 1) {
      committed = await call('memory_commit', {});
      if (committed.ok || committed.error.type !== 'unavailable') break;
      await new Promise((resolve) => { setTimeout(resolve, 100); });
    }
    // the memtx transaction outlived the connection: its staging commits
    assert.deepEqual(committed, { ok: true, results: [{ record_id: staged.record_id, state: 'committed', reason: null }] });
    assert.match(server.log(), /memtx-mcp: lost the connection to PostgreSQL: .*; reconnecting/);
    assert.match(server.log(), /memtx-mcp: connected to PostgreSQL again/);
    const { tools } = await server.client.listTools();
    assert.ok(tools.some((t) => t.name === 'memory_stage'));
  });
});

describe('createServer({ extraTools, executors })', () => {
  test('runs an executor once per allowed action; serves an extra tool after the memtx tools, validated by its schema, in the current transaction', async () => {
    const db = await fx.connect(AGENT);
    const txOf = {
      spec: { name: 'current_tx', description: 'the current memtx transaction',
        inputSchema: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] } },
      handler: async ({ label }, ctx) => {
        if (label === '') throw new InvalidArguments('label must not be empty');
        return { label, tx: await ctx.transaction(), namespace: ctx.memory.namespace };
      },
    };
    const refunds = [];
    const executors = { issue_refund: (args, decision) => { refunds.push(args.order); return { refund: decision.action_id }; } };
    const { server, session } = createServer({ db, namespace: 'support', extraTools: [txOf], executors });
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'memtx-test-host', version: '1.0.0' });
    await client.connect(clientSide);

    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.equal(names.at(-1), 'current_tx');
    assert.ok(names.indexOf('issue_refund') < names.indexOf('current_tx'));
    const refund = { name: 'issue_refund', arguments: { args: { order: 843 }, effect_key: 'refund-843' } };
    const ran = (await client.callTool(refund)).structuredContent;
    assert.equal(ran.allowed, true);
    assert.deepEqual(ran.output, { refund: ran.action_id });
    assert.deepEqual((await client.callTool(refund)).structuredContent, { ...ran, repeated: true });
    assert.deepEqual(refunds, [843], 'the executor runs once per action');

    const first = (await client.callTool({ name: 'current_tx', arguments: { label: 'a' } })).structuredContent;
    assert.equal(first.ok, true);
    assert.equal(first.namespace, 'support');
    const staged = (await client.callTool({ name: 'memory_stage',
      arguments: { entity: 'order:843', attribute: 'note', value: 1 } })).structuredContent;
    const [rec] = (await fx.harness.query('SELECT tx_id::int FROM memtx.records WHERE id = $1', [staged.record_id])).rows;
    assert.equal(rec.tx_id, first.tx, 'the extra tool and memory_stage share the transaction');
    const bad = await client.callTool({ name: 'current_tx', arguments: { label: 7 } });
    assert.equal(bad.isError, true);
    assert.equal(bad.structuredContent.error.type, 'invalid_arguments');
    const empty = await client.callTool({ name: 'current_tx', arguments: { label: '' } });
    assert.equal(empty.structuredContent.error.message, 'label must not be empty');

    await client.close();
    await session.close();
    assert.deepEqual(await openTransactions(), []);
    assert.throws(() => createServer({ db, extraTools: [txOf, txOf] }), /defined twice/);
    assert.throws(() => createServer({ db, extraTools: [{ ...txOf, spec: { ...txOf.spec, name: 'memory_forget' } }] }),
      /does not begin memory_/);
  });
});
