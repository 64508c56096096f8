#!/usr/bin/env node
/**
 * memtx-mcp's knowledge-graph tools against the reference memory server
 * (@modelcontextprotocol/server-memory, its JSONL file read and rewritten per
 * call), each a child process driven over stdio by the official SDK's
 * client, as a host runs them, on graphs of the same size: create_entities
 * (one new entity with two observations), add_observations (one to an
 * existing entity), search_nodes (a word one entity has, in capitals) and
 * open_nodes (one entity), one client, the median of alternating rounds
 * (reference, then memtx-mcp, round after round).  memtx-mcp runs on a
 * database with the optional indexed search (setupSearch), durable
 * (synchronous_commit on, as memtx's default) and with synchronous_commit
 * off (the reference rewrites its file without fsync); with --scanned, its
 * reads are also measured without the setup.  Prints figures; passes or
 * fails on nothing but errors.
 *
 *   node clients/node/bench/kg.js [--entities 300,1000,10000] [--seconds 3] [--rounds 3]
 *        [--sync on,off] [--scanned] [--rows FILE --scenario 13]
 *
 * Against the server the PG* environment names, as a superuser: database
 * memtx_kg_bench is made afresh for each graph size and dropped.  Each graph
 * has N entities (three observations each, one of them a word of its own)
 * and N relations; memtx-mcp's is written through its own tools (in
 * process, 500 entities per call), the reference's file directly.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import pg from 'pg';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import * as kg from '../src/kg.js';
import { createServer } from '../src/mcp.js';

const { values: opts } = parseArgs({
  options: {
    entities: { type: 'string', default: '300,1000,10000' },
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    sync: { type: 'string', default: 'on,off' },
    scanned: { type: 'boolean', default: false },
    rows: { type: 'string' },
    scenario: { type: 'string', default: '12' },
  },
});
const SIZES = opts.entities.split(',').map(Number);
const SECONDS = Number(opts.seconds);
const ROUNDS = Number(opts.rounds);
const SYNCS = opts.sync.split(',');
const DATABASE = 'memtx_kg_bench';
const AGENT = 'memtx_kg_bench_agent';
const NAMESPACE = 'graph';
const MEMTX_MCP = fileURLToPath(new URL('../bin/memtx-mcp.js', import.meta.url));
const REFERENCE = path.join(path.dirname(createRequire(import.meta.url)
  .resolve('@modelcontextprotocol/server-memory/package.json')), 'dist', 'index.js');
const TYPES = ['person', 'company', 'project', 'city', 'product', 'team', 'event', 'document', 'tool', 'topic'];

/** A word of entity i's own: seven letters from its number. @param {number} i */
function word(i) {
  let x = (BigInt(i) * 2654435761n) % 8031810176n; // 26^7
  let w = '';
  for (let k = 0; k < 7; k += 1) { w += String.fromCharCode(97 + Number(x % 26n)); x /= 26n; }
  return w;
}
/** Entity i of a graph. @param {number} i */
const entity = (i) => ({
  name: `entity-${i}`, entityType: TYPES[i % TYPES.length],
  observations: [`joined in year ${1990 + (i % 30)}`, `works with entity-${(i + 1) % 1000}`, `badge ${word(i)}`],
});
/** Relation i of a graph. @param {number} i @param {number} n */
const relation = (i, n) => ({ from: `entity-${i}`, to: `entity-${(i * 7 + 1) % n}`, relationType: 'knows' });

const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const fmt = (/** @type {number} */ x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
/** @param {string[]} cells */
const row = (cells) => { if (opts.rows) appendFileSync(opts.rows, `| ${[opts.scenario, ...cells].join(' | ')} |\n`); };

/** A server on stdio, driven by the SDK's client. @param {string} script @param {Record<string, string>} env */
async function connect(script, env) {
  const client = new Client({ name: 'memtx-kg-bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({
    command: process.execPath, args: [script], env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'ignore',
  }));
  return client;
}

/** A tools/call that must succeed. @param {Client} client @param {string} name @param {any} args */
async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  return /** @type {any} */ (r.structuredContent);
}

/** Milliseconds per call of fn over a round of SECONDS (at least 3 calls). @param {(i: number) => Promise<unknown>} fn */
async function round(fn) {
  const start = performance.now();
  let n = 0;
  while (n < 3 || performance.now() - start < SECONDS * 1000) { await fn(n); n += 1; }
  return (performance.now() - start) / n;
}

const admin = new pg.Client({ database: process.env.PGDATABASE || 'postgres' });
await admin.connect();
const password = randomBytes(16).toString('hex');
/** @type {Map<string, number>} ms per call by tool, size and side */
const figures = new Map();
let fresh = 0;

console.log(`${SECONDS} s rounds, ${ROUNDS} alternating rounds (medians), 1 client; ms per call`);
for (const n of SIZES) {
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await admin.query(`DROP ROLE IF EXISTS ${AGENT}`);
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  await admin.query(`CREATE ROLE ${AGENT} LOGIN PASSWORD '${password}'`);
  const harness = new pg.Client({ database: DATABASE });
  await harness.connect();
  await harness.query('SET client_min_messages = warning');
  await harness.query('CREATE EXTENSION memtx CASCADE');
  await harness.query('SELECT memtx.grant_namespace($1, $2)', [NAMESPACE, AGENT]);
  // (a client from before the indexed search has no setupSearch)
  if ('setupSearch' in kg) await kg.setupSearch(harness);

  // the graphs: memtx's through its own tools, in process; the reference's file as it writes it
  const t0 = performance.now();
  const loader = new pg.Client({ database: DATABASE, user: AGENT, password, options: '-c synchronous_commit=off' });
  await loader.connect();
  const { session } = createServer({ db: loader, namespace: NAMESPACE, extraTools: kg.tools, resources: kg.resources });
  for (let b = 0; b < n; b += 500) {
    const batch = Array.from({ length: Math.min(500, n - b) }, (_, k) => entity(b + k));
    const made = await session.callTool('create_entities', { entities: batch });
    if (made.isError || made.structuredContent.entities.length !== batch.length) throw new Error(`loading: ${JSON.stringify(made.content)}`);
    const related = await session.callTool('create_relations', { relations: batch.map((_, k) => relation(b + k, n)) });
    if (related.isError) throw new Error(`loading: ${JSON.stringify(related.content)}`);
  }
  await loader.end();
  await harness.query('VACUUM ANALYZE memtx.records, memtx.edges, memtx.transactions');
  const dir = mkdtempSync(path.join(tmpdir(), 'memtx-kg-bench-'));
  const file = path.join(dir, 'memory.jsonl');
  const graph = Array.from({ length: n }, (_, i) => entity(i));
  writeFileSync(file, [...graph.map((e) => JSON.stringify({ type: 'entity', ...e })),
    ...graph.map((_, i) => JSON.stringify({ type: 'relation', ...relation(i, n) }))].join('\n'));
  console.log(`${n} entities: loaded in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

  const env = (/** @type {string} */ sync) => ({
    PGHOST: process.env.PGHOST ?? 'localhost', PGPORT: process.env.PGPORT ?? '5432', PGDATABASE: DATABASE,
    PGUSER: AGENT, PGPASSWORD: password, MEMTX_NAMESPACE: NAMESPACE, PGOPTIONS: `-c synchronous_commit=${sync}`,
  });
  const reference = await connect(REFERENCE, { MEMORY_FILE_PATH: file });
  /** the calls, each of a fresh entity, observation or random entity */
  const any = () => Math.floor(Math.random() * n);
  const CALLS = {
    create_entities: (/** @type {Client} */ c) => {
      fresh += 1;
      return call(c, 'create_entities', { entities: [{ name: `new-${fresh}`, entityType: 'person',
        observations: [`created in round ${fresh}`, `badge ${word(10_000_000 + fresh)}`] }] });
    },
    add_observations: (/** @type {Client} */ c) => {
      fresh += 1;
      return call(c, 'add_observations', { observations: [{ entityName: `entity-${any()}`, contents: [`note ${fresh}`] }] });
    },
    search_nodes: async (/** @type {Client} */ c) => {
      const i = any();
      const found = await call(c, 'search_nodes', { query: word(i).toUpperCase() });
      if (!found.entities.some((/** @type {any} */ e) => e.name === `entity-${i}`)) throw new Error(`search_nodes missed entity-${i}`);
    },
    open_nodes: (/** @type {Client} */ c) => call(c, 'open_nodes', { names: [`entity-${any()}`] }),
  };
  for (const [mode, syncs] of /** @type {[string, string[]][]} */ ([['indexed', SYNCS], ...(opts.scanned ? [['scanned', ['on']]] : [])])) {
    if (mode === 'scanned') await harness.query('DROP SCHEMA IF EXISTS memtx_kg CASCADE');
    for (const sync of syncs) {
      const memtx = await connect(MEMTX_MCP, env(sync));
      for (const [tool, fn] of Object.entries(CALLS)) {
        if (mode === 'scanned' && !['search_nodes', 'open_nodes'].includes(tool)) continue;
        for (const c of [reference, memtx]) for (let i = 0; i < 3; i += 1) await fn(c);
        const ms = { reference: /** @type {number[]} */ ([]), memtx: /** @type {number[]} */ ([]) };
        for (let r = 0; r < ROUNDS; r += 1) {
          ms.reference.push(await round(() => fn(reference)));
          ms.memtx.push(await round(() => fn(memtx)));
        }
        const [a, b] = [median(ms.memtx), median(ms.reference)];
        const label = mode === 'scanned' ? `${tool}, ${n} entities, without the optional indexed search`
          : `${tool}, ${n} entities, synchronous_commit=${sync}`;
        figures.set(`${tool}|${n}|${mode}|${sync}`, a);
        figures.set(`${tool}|${n}|reference`, b);
        console.log(`${label}: memtx-mcp ${fmt(a)} ms, reference ${fmt(b)} ms, ratio ${(a / b).toFixed(2)}`);
        row([`memtx-mcp vs the reference memory server over stdio: ${label}`, `${fmt(a)} ms`, `${fmt(b)} ms (reference)`,
          (a / b).toFixed(2), mode === 'scanned' ? '—' : '≤ 1.5']);
      }
      await memtx.close();
    }
  }
  await reference.close();
  rmSync(dir, { recursive: true, force: true });
  await harness.end();
}
// flat from the smallest graph of at least 1000 entities to the largest (the reference, rewriting its file, is not)
const sized = SIZES.filter((s) => s >= 1000);
if (sized.length > 1) {
  const [lo, hi] = [Math.min(...sized), Math.max(...sized)];
  for (const tool of ['create_entities', 'add_observations', 'search_nodes', 'open_nodes']) {
    for (const sync of SYNCS) {
      const growth = /** @type {number} */ (figures.get(`${tool}|${hi}|indexed|${sync}`)) / /** @type {number} */ (figures.get(`${tool}|${lo}|indexed|${sync}`));
      const theirs = /** @type {number} */ (figures.get(`${tool}|${hi}|reference`)) / /** @type {number} */ (figures.get(`${tool}|${lo}|reference`));
      const label = `${tool}, synchronous_commit=${sync}: ${hi} entities / ${lo} entities (the reference: ${theirs.toFixed(2)})`;
      console.log(`${label}: ${growth.toFixed(2)}`);
      row([`memtx-mcp: ${label}`, '', '', growth.toFixed(2), 'flat']);
    }
  }
}
await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
await admin.query(`DROP ROLE IF EXISTS ${AGENT}`);
await admin.end();
