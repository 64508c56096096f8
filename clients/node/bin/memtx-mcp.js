#!/usr/bin/env node
/**
 * memtx-mcp: the memtx MCP server on stdio, for one agent principal.
 *
 *   PGHOST=... PGPORT=... PGDATABASE=... PGUSER=agent_role [PGPASSWORD=...] \
 *   MEMTX_NAMESPACE=support node clients/node/bin/memtx-mcp.js
 *
 * Connects with the libpq environment (pg reads PG* itself) as the agent's
 * role, serves memtx.tool_specs('mcp') plus the tools of TOOL_MODULES
 * (below) in the namespace MEMTX_NAMESPACE (default "default"), and aborts
 * the memtx transaction still open when the host closes the stream.  Logs go to
 * stderr: stdout is the protocol.
 */
import pg from 'pg';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

import { createServer } from '../src/mcp.js';

// modules of extra tools, each exporting `tools` (see src/mcp.js), relative
// to this file
const TOOL_MODULES = ['../src/kg.js'];
const extraTools = [];
for (const module of TOOL_MODULES) extraTools.push(...(await import(module)).tools);

const db = new pg.Client({ application_name: 'memtx-mcp' });
try {
  await db.connect();
} catch (err) {
  console.error(`memtx-mcp: cannot connect to PostgreSQL: ${err.message}`);
  process.exit(1);
}
const { server, session } = createServer({
  db,
  namespace: process.env.MEMTX_NAMESPACE || 'default',
  extraTools,
});

let closing = false;
async function shutdown(code = 0) {
  if (closing) return;
  closing = true;
  try {
    await session.close();
  } catch (err) {
    console.error(`memtx-mcp: aborting the open transaction failed: ${err.message}`);
    code = 1;
  }
  await db.end().catch(() => {});
  process.exit(code);
}

db.on('error', (err) => {
  console.error(`memtx-mcp: connection lost: ${err.message}`);
  closing = true;
  process.exit(1);
});
server.onclose = () => shutdown(0);
process.stdin.on('end', () => shutdown(0));
process.on('SIGINT', () => shutdown(0));
process.on('SIGTERM', () => shutdown(0));

await server.connect(new StdioServerTransport());
