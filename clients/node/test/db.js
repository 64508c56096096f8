/**
 * Test fixtures: each test file gets a database of its own (created fresh,
 * dropped at the end) with memtx installed, and login roles for its agents,
 * on the server the PG* environment names (as a superuser: the harness).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const ident = (name) => `"${name.replaceAll('"', '""')}"`;

/**
 * Make database `name` with memtx and the login roles `roles`; returns the
 * harness's client on it, a connect(role) for the agents, and drop().
 * @param {string} name
 * @param {string[]} [roles]
 */
export async function freshDatabase(name, roles = []) {
  const password = randomBytes(16).toString('hex');
  const admin = new pg.Client({ database: process.env.PGDATABASE || 'postgres' });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${ident(name)} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${ident(name)}`);
  for (const role of roles) {
    await admin.query(`DROP ROLE IF EXISTS ${ident(role)}`);
    await admin.query(`CREATE ROLE ${ident(role)} LOGIN PASSWORD '${password}'`);
  }
  const harness = new pg.Client({ database: name });
  await harness.connect();
  await harness.query('SET client_min_messages = warning');
  await harness.query('CREATE EXTENSION memtx CASCADE');
  /** @type {pg.Client[]} */
  const clients = [];
  return {
    harness,
    password,
    /** A client logged in as role (a principal). @param {string} role */
    async connect(role) {
      const client = new pg.Client({ database: name, user: role, password });
      await client.connect();
      clients.push(client);
      return client;
    },
    async drop() {
      for (const c of [...clients, harness]) await c.end().catch(() => {});
      await admin.query(`DROP DATABASE ${ident(name)} WITH (FORCE)`);
      for (const role of roles) await admin.query(`DROP ROLE ${ident(role)}`);
      await admin.end();
    },
  };
}
