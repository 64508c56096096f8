#!/usr/bin/env node
/**
 * MemtxStore against LangGraph's PostgresStore, the store a LangGraph user
 * would pick instead, in one run on one server: put of a new item, put of a
 * new value of an existing item, get, and a text search, with 1 and 8
 * clients, with synchronous_commit on (durable) and off (CPU-bound); and,
 * through the same client library, one `memtx.propose` against a
 * last-writer-wins upsert of the same row (what a put is underneath, and
 * what it would be without memtx).  Each figure is the median of
 * alternating rounds (PostgresStore, then MemtxStore, round after round), so
 * a busy neighbour hits both alike.  Prints figures; passes or fails on
 * nothing but errors.
 *
 *   node clients/node/bench/store.js [--items 1000] [--seconds 3] [--rounds 3]
 *        [--clients 1,8] [--sync on,off] [--cases get,search] [--rows FILE --scenario 13]
 *
 * Against the server the PG* environment names, as a superuser: database
 * memtx_store_bench is made afresh (memtx installed, an agent role for
 * MemtxStore, so row-level security applies as for any agent) and dropped.
 * --cases keeps the cases whose names contain one of the words given;
 * --rows appends the figures to FILE as rows of bench/run's results table.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import pg from 'pg';
import { PostgresStore } from '@langchain/langgraph-checkpoint-postgres/store';

import { MemtxStore } from '../src/store.js';

const { values: opts } = parseArgs({
  options: {
    items: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    clients: { type: 'string', default: '1,8' },
    sync: { type: 'string', default: 'on,off' },
    rows: { type: 'string' },
    scenario: { type: 'string', default: '12' },
    cases: { type: 'string' },
  },
});
const ITEMS = Number(opts.items);
const SECONDS = Number(opts.seconds);
const ROUNDS = Number(opts.rounds);
const CLIENTS = opts.clients.split(',').map(Number);
const SYNCS = opts.sync.split(',');
const DATABASE = 'memtx_store_bench';
const AGENT = 'memtx_store_bench_agent';
// the words items are found by: 47 of them, so each of the 50 user namespaces holds a mix
const WORDS = ['amber', 'basalt', 'cedar', 'delta', 'ember', 'fjord', 'garnet', 'harbor', 'indigo', 'jasper',
  'kelp', 'lagoon', 'marble', 'nectar', 'onyx', 'pepper', 'quartz', 'raven', 'saffron', 'tundra', 'umber',
  'velvet', 'walnut', 'xenon', 'yarrow', 'zephyr', 'acorn', 'bramble', 'cobalt', 'dune', 'elm', 'flint',
  'glacier', 'hazel', 'iris', 'juniper', 'kiln', 'linen', 'maple', 'nutmeg', 'oak', 'pine', 'quill', 'reed',
  'sage', 'thistle', 'willow'];
const USERS = 50;

/** An item's LangGraph namespace, key and value. @param {number} i */
const ns = (i) => ['users', `u${i % USERS}`, 'notes'];
const key = (/** @type {number} */ i) => `k${i}`;
const value = (/** @type {number} */ i, /** @type {number} */ v) => ({ n: i, v, text: `note ${i} about ${WORDS[i % WORDS.length]}` });

const ident = (/** @type {string} */ name) => `"${name.replaceAll('"', '""')}"`;
const password = randomBytes(16).toString('hex');
const admin = new pg.Client({ database: process.env.PGDATABASE || 'postgres' });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
await admin.query(`DROP ROLE IF EXISTS ${AGENT}`);
await admin.query(`CREATE DATABASE ${DATABASE}`);
await admin.query(`CREATE ROLE ${AGENT} LOGIN PASSWORD '${password}'`);
const setup = new pg.Client({ database: DATABASE });
await setup.connect();
await setup.query('SET client_min_messages = warning');
await setup.query('CREATE EXTENSION memtx CASCADE');
await setup.query(`SELECT memtx.grant_namespace('bench', '${AGENT}'), memtx.grant_namespace('raw', '${AGENT}')`);
// what the upsert baseline writes: scenario 1's last-writer-wins slot table
await setup.query(`CREATE TABLE upsert_slot (
  namespace text NOT NULL, entity text NOT NULL, attribute text NOT NULL, value jsonb NOT NULL,
  source text, confidence double precision NOT NULL, updated_at timestamptz NOT NULL,
  PRIMARY KEY (namespace, entity, attribute))`);
await setup.query(`GRANT ALL ON upsert_slot TO ${AGENT}`);

/** pg's pool options for n clients at a durability. @param {number} n @param {string} sync */
const poolOptions = (n, sync, agent = false) => ({
  database: DATABASE, max: n, options: `-c synchronous_commit=${sync}`,
  ...(agent && { user: AGENT, password }),
});

// the stores, loaded with ITEMS items each
const loading = { reference: new PostgresStore({ connectionOptions: poolOptions(1, 'off'), schema: 'reference' }) };
await loading.reference.setup();
const loadPool = new pg.Pool(poolOptions(1, 'off', true));
const loadMemtx = new MemtxStore({ pool: loadPool, namespace: 'bench' });
for (const store of [loading.reference, loadMemtx]) {
  for (let i = 0; i < ITEMS; i += 1) await store.put(ns(i), key(i), value(i, 0));
}
await loading.reference.stop();
await loadPool.end();
await setup.query('VACUUM ANALYZE');

/**
 * Operations per second and mean latency (ms) of n clients calling fn for
 * SECONDS: each client calls fn(client, i) in a loop, i counting its calls.
 * @param {number} n @param {(client: number, i: number) => Promise<unknown>} fn
 */
async function measure(n, fn) {
  const end = performance.now() + SECONDS * 1000;
  let ops = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: n }, async (_, c) => {
    for (let i = 0; performance.now() < end; i += 1) {
      await fn(c, i);
      ops += 1;
    }
  }));
  const elapsed = (performance.now() - start) / 1000;
  return { tps: ops / elapsed, ms: (n * elapsed * 1000) / ops, ops };
}

const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

/** A random existing item. */
const any = () => Math.floor(Math.random() * ITEMS);
let fresh = 0;

/**
 * The cases, each a (baseline, memtx) pair of call makers over the pair of
 * stores (or pools) of one client count and durability.
 * @type {Record<string, { target: (c: number, sync: string) => string,
 *   make: (side: any) => (client: number, i: number) => Promise<unknown> }>}
 */
const CASES = {
  'put of a new item': {
    target: () => '≤ 1.5',
    make: ({ store }) => () => { fresh += 1; return store.put(ns(fresh), `new${fresh}`, value(fresh, 0)); },
  },
  'put of an existing item (a new value)': {
    target: () => '≤ 1.5',
    make: ({ store }) => (_c, i) => { const j = any(); return store.put(ns(j), key(j), value(j, i + 1)); },
  },
  get: {
    target: () => '≤ 1.2',
    make: ({ store }) => () => { const j = any(); return store.get(ns(j), key(j)); },
  },
  'search with a text query (one user namespace, top 10)': {
    target: () => '≤ 1.2',
    make: ({ store }) => () => { const j = any(); return store.search(ns(j), { query: WORDS[j % WORDS.length], limit: 10 }); },
  },
  'one memtx.propose vs a last-writer-wins upsert of the same row (prepared, random slot of the items)': {
    target: (c, sync) => (c > 1 ? '—' : sync === 'on' ? '≤ 2' : '≤ 5'),
    make: ({ pool, raw }) => () => {
      const j = any();
      return raw
        ? pool.query({ name: 'bench_upsert', text: `INSERT INTO upsert_slot AS p (namespace, entity, attribute, value, source, confidence, updated_at)
            VALUES ('raw', $1, 'a', $2, 'bench', 0.9, now())
            ON CONFLICT (namespace, entity, attribute) DO UPDATE
            SET value = excluded.value, source = excluded.source, confidence = excluded.confidence,
                updated_at = excluded.updated_at`, values: [`e${j}`, JSON.stringify(j)] })
        : pool.query({ name: 'bench_propose', text: `SELECT record_id FROM memtx.propose(entity => $1, attribute => 'a',
            value => $2::jsonb, source => 'bench', confidence => 0.9, namespace => 'raw')`, values: [`e${j}`, JSON.stringify(j)] });
    },
  },
};

if (opts.cases) {
  const words = opts.cases.split(',');
  for (const name of Object.keys(CASES)) if (!words.some((w) => name.includes(w))) delete CASES[name];
}

const fmt = (/** @type {number} */ x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
/** @type {Map<string, number>} ratio by case, clients and durability */
const ratios = new Map();
/** @param {string[]} cells */
const row = (cells) => { if (opts.rows) appendFileSync(opts.rows, `| ${[opts.scenario, ...cells].join(' | ')} |\n`); };

console.log(`${ITEMS} items per store, ${SECONDS} s per measurement, ${ROUNDS} alternating rounds (medians)`);
for (const sync of SYNCS) {
  for (const n of CLIENTS) {
    const sides = {
      base: {
        store: new PostgresStore({ connectionOptions: poolOptions(n, sync), schema: 'reference', ensureTables: false }),
        pool: new pg.Pool(poolOptions(n, sync, true)), raw: true,
      },
      memtx: { pool: new pg.Pool(poolOptions(n, sync, true)), raw: false },
    };
    /** @type {any} */ (sides.memtx).store = new MemtxStore({ pool: new pg.Pool(poolOptions(n, sync, true)), namespace: 'bench' });
    for (const [name, { target, make }] of Object.entries(CASES)) {
      const calls = { base: make(sides.base), memtx: make(sides.memtx) };
      // warm both (connections, prepared statements, caches), then alternate
      for (const side of /** @type {const} */ (['base', 'memtx'])) {
        for (let i = 0; i < 20 * n; i += 1) await calls[side](i % n, i);
      }
      /** @type {{ base: { tps: number, ms: number }[], memtx: { tps: number, ms: number }[] }} */
      const figures = { base: [], memtx: [] };
      for (let r = 0; r < ROUNDS; r += 1) {
        for (const side of /** @type {const} */ (['base', 'memtx'])) figures[side].push(await measure(n, calls[side]));
      }
      const [b, m] = [figures.base, figures.memtx].map((f) => ({ tps: median(f.map((x) => x.tps)), ms: median(f.map((x) => x.ms)) }));
      const ratio = b.tps / m.tps;
      ratios.set(`${name}|${n}|${sync}`, ratio);
      const raw = name.startsWith('one memtx.propose');
      const label = raw ? `${name}, ${n} client(s), synchronous_commit=${sync}`
        : `MemtxStore vs PostgresStore: ${name}, ${n} client(s), synchronous_commit=${sync}`;
      console.log(`${label}: ${fmt(m.tps)} ops/s, ${fmt(m.ms)} ms vs ${fmt(b.tps)} ops/s, ${fmt(b.ms)} ms; ratio ${ratio.toFixed(2)}`);
      row([label, `${fmt(m.tps)} ops/s, ${fmt(m.ms)} ms`,
        `${fmt(b.tps)} ops/s, ${fmt(b.ms)} ms (${raw ? 'upsert' : 'PostgresStore'})`, ratio.toFixed(2), target(n, sync)]);
    }
    await sides.base.store.stop();
    await sides.base.pool.end();
    await sides.memtx.pool.end();
    await /** @type {any} */ (sides.memtx).store.pool.end();
  }
}
// how the ratios hold up under concurrency (target: no worse than twice the 1-client ones)
const [one, many] = [Math.min(...CLIENTS), Math.max(...CLIENTS)];
if (one !== many) {
  for (const sync of SYNCS) {
    for (const name of Object.keys(CASES)) {
      const growth = /** @type {number} */ (ratios.get(`${name}|${many}|${sync}`)) / /** @type {number} */ (ratios.get(`${name}|${one}|${sync}`));
      const label = `${name}, synchronous_commit=${sync}: the ${many}-client ratio / the ${one}-client ratio`;
      console.log(`${label}: ${growth.toFixed(2)}`);
      row([label, '', '', growth.toFixed(2), '≤ 2']);
    }
  }
}

// a pool's end() resolves before its connections are gone: wait for them, so the drop ends none
for (let i = 0; i < 100; i += 1) {
  const { rows: [{ n }] } = await setup.query(`SELECT count(*)::int AS n FROM pg_catalog.pg_stat_activity
    WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_catalog.pg_backend_pid()`);
  if (n === 0) break;
  await new Promise((resolve) => { setTimeout(resolve, 100); });
}
await setup.end();
await admin.query(`DROP DATABASE ${DATABASE} WITH (FORCE)`);
await admin.query(`DROP ROLE ${AGENT}`);
await admin.end();
