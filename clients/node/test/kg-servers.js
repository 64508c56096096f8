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

/** A scratch directory for the reference's memory file; remove() when done. */
export function scratch() {
  const dir = mkdtempSync(path.join(tmpdir(), 'memtx-kg-'));
  return { file: path.join(dir, 'memory.jsonl'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The reference server on memory file `file`. @param {string} file */
export const reference = (file) => connect([REFERENCE], { MEMORY_FILE_PATH: file });

/**
 * memtx-mcp logged in as `role` in database `database`, namespace `namespace`.
 * @param {{ database: string, role: string, password: string, namespace: string }} who
 */
export const memtx = ({ database, role, password, namespace }) => connect([MEMTX_MCP], {
  PGHOST: process.env.PGHOST ?? 'localhost',
  PGPORT: process.env.PGPORT ?? '5432',
  PGDATABASE: database,
  PGUSER: role,
  PGPASSWORD: password,
  MEMTX_NAMESPACE: namespace,
});

/**
 * tools/call, keeping what a host sees: content, structuredContent, isError.
 * @param {Client} client @param {string} name @param {Record<string, unknown>} args
 */
export async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  return { content: r.content, structuredContent: r.structuredContent, isError: r.isError ?? false };
}
