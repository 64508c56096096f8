#!/usr/bin/env node
/**
 * MemtxStore against LangGraph's PostgresStore, the store a LangGraph user
 * would pick instead, in the same run on the same server: the time of one
 * get, one put of a new value of an existing item, and one search without a
 * query, each as the median of several rounds, one client, and the ratio.
 * Prints figures; passes or fails on nothing but errors.
 *
 *   node clients/node/bench/store.js [--items 1000] [--ops 2000] [--rounds 5]
 *
 * Against the server the PG* environment names, as a superuser: database
 * memtx_store_bench is made afresh (memtx installed) and dropped.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { PostgresStore } from '@langchain/langgraph-checkpoint-postgres/store';

import { MemtxStore } from '../src/store.js';

const { values: opts } = parseArgs({
  options: { items: { type: 'string', default: '1000' }, ops: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '5' } },
});
const ITEMS = Number(opts.items);
const OPS = Number(opts.ops);
const ROUNDS = Number(opts.rounds);
const DATABASE = 'memtx_store_bench';

const admin = new pg.Client({ database: process.env.PGDATABASE || 'postgres' });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
await admin.query(`CREATE DATABASE ${DATABASE}`);
const setup = new pg.Client({ database: DATABASE });
await setup.connect();
await setup.query('SET client_min_messages = warning');
await setup.query('CREATE EXTENSION memtx CASCADE');

const reference = new PostgresStore({ connectionOptions: { database: DATABASE, max: 1 }, schema: 'reference' });
await reference.setup();
const pool = new pg.Pool({ database: DATABASE, max: 1 });
const memtx = new MemtxStore({ pool, namespace: 'bench' });
const ns = (i) => ['users', `u${i % 50}`];
for (const store of [reference, memtx]) {
  for (let i = 0; i < ITEMS; i += 1) await store.put(ns(i), `k${i}`, { n: i, text: `item ${i}` });
}
await setup.query('ANALYZE');

/** Median microseconds per call of fn over ROUNDS rounds of OPS calls. */
async function time(fn) {
  for (let i = 0; i < Math.min(OPS, 200); i += 1) await fn(i);
  const rounds = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < OPS; i += 1) await fn(i);
    rounds.push(Number(process.hrtime.bigint() - start) / 1000 / OPS);
  }
  return rounds.sort((a, b) => a - b)[Math.floor(rounds.length / 2)];
}

const cases = {
  get: (store) => (i) => store.get(ns(i), `k${i % ITEMS}`),
  put: (store) => (i) => store.put(ns(i), `k${i % ITEMS}`, { n: i, text: `item ${i}, again` }),
  'search (no query)': (store) => (i) => store.search(ns(i), { limit: 10 }),
};
console.log(`${ITEMS} items, ${OPS} calls x ${ROUNDS} rounds, 1 client (median round)`);
console.log('operation            PostgresStore   MemtxStore   ratio');
for (const [name, make] of Object.entries(cases)) {
  const ref = await time(make(reference));
  const ours = await time(make(memtx));
  console.log(`${name.padEnd(20)} ${ref.toFixed(0).padStart(10)} µs ${ours.toFixed(0).padStart(9)} µs ${(ours / ref).toFixed(2).padStart(7)}`);
}

await reference.stop();
await pool.end();
await setup.end();
await admin.query(`DROP DATABASE ${DATABASE} WITH (FORCE)`);
await admin.end();
