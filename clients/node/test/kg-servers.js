/**
 * Knowledge-graph test fixtures: the reference memory server
 * (@modelcontextprotocol/server-memory, on a JSONL file) and memtx-mcp (as a
 * role of the test's database), each a child process on stdio driven by the
 * SDK's client, as an MCP host runs them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { setupSearch } from '../src/kg.js';
import { freshDatabase } from './db.js';

const MEMTX_MCP = fileURLToPath(new URL('../bin/memtx-mcp.js', import.meta.url));
const REFERENCE = path.join(path.dirname(createRequire(import.meta.url)
  .resolve('@modelcontextprotocol/server-memory/package.json')), 'dist', 'index.js');

/** @param {string[]} args @param {Record<string, string>} env */
async function connect(args, env) {
  const client = new Client({ name: 'memtx-kg-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({
    command: process.execPath, args, env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'ignore',
  }));
  return client;
}

/**
 * A fresh database `database` with memtx and login role `role`, member of
 * namespace `namespace`, and a scratch directory for the reference's memory
 * file.  memtx() starts a memtx-mcp as the role in the namespace,
 * reference() a reference server on the file; drop() removes both stores.
 * With `search`, the database gets the optional indexed graph search.
 * @param {string} database @param {string} role @param {string} [namespace]
 * @param {{ search?: boolean }} [options]
 */
export async function graphStores(database, role, namespace = 'graph', { search = false } = {}) {
  const fx = await freshDatabase(database, [role]);
  await fx.harness.query('SELECT memtx.grant_namespace($1, $2)', [namespace, role]);
  if (search) await setupSearch(fx.harness);
  const dir = mkdtempSync(path.join(tmpdir(), 'memtx-kg-'));
  const file = path.join(dir, 'memory.jsonl');
  return {
    harness: fx.harness,
    memtx: () => connect([MEMTX_MCP], {
      PGHOST: process.env.PGHOST ?? 'localhost',
      PGPORT: process.env.PGPORT ?? '5432',
      PGDATABASE: database,
      PGUSER: role,
      PGPASSWORD: fx.password,
      MEMTX_NAMESPACE: namespace,
    }),
    reference: () => connect([REFERENCE], { MEMORY_FILE_PATH: file }),
    async drop() {
      rmSync(dir, { recursive: true, force: true });
      await fx.drop();
    },
  };
}

/**
 * tools/call, keeping what a host sees: content, structuredContent, isError.
 * @param {Client} client @param {string} name @param {Record<string, unknown>} args
 */
export async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  return { content: r.content, structuredContent: r.structuredContent, isError: r.isError ?? false };
}
