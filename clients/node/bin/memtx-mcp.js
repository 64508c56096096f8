#!/usr/bin/env node
/**
 * memtx-mcp: the memtx MCP server on stdio, for one agent principal.
 *
 *   PGHOST=... PGPORT=... PGDATABASE=... PGUSER=agent_role [PGPASSWORD=...] \
 *   MEMTX_NAMESPACE=support [MEMTX_DEFAULT_SCOPE=shared MEMTX_DEFAULT_READERS=a,b] \
 *   node clients/node/bin/memtx-mcp.js
 *
 * Connects with the libpq environment (pg reads PG* itself) as the agent's
 * role, serves memtx.tool_specs('mcp') plus the tools and resources of
 * TOOL_MODULES (below) in the namespace MEMTX_NAMESPACE (default "default"),
 * and aborts the memtx transaction still open when the host closes the
 * stream.  MEMTX_DEFAULT_SCOPE (private, shared or public),
 * MEMTX_DEFAULT_READERS and MEMTX_DEFAULT_WRITERS (comma-separated roles)
 * are the permission block of what its tools stage: without them records
 * are private to the role.
 *
 * With MEMTX_EMBEDDINGS_URL and MEMTX_EMBEDDINGS_MODEL (an OpenAI-compatible
 * /v1/embeddings endpoint; MEMTX_EMBEDDINGS_KEY and the other settings of
 * src/embeddings.js are optional) it embeds what its tools store, under the
 * memtx_vector model MEMTX_VECTOR_MODEL (default: MEMTX_EMBEDDINGS_MODEL),
 * and memory_recall's `semantic` and search_nodes recall by meaning too.  A
 * write whose embedding fails writes nothing and is a tool error.
 *
 * The server stays up whatever the database does: when it cannot connect at
 * start (the database is down, a wrong password) or loses the connection
 * later (a restart), it says why on stderr, answers tool calls with an
 * "unavailable" error result naming the cause, and reconnects with backoff
 * (src/connection.js); once connected again it tells the host its tool list
 * may have changed.  Only a configuration it cannot use (a bad
 * MEMTX_DEFAULT_SCOPE) ends it, with a message.  Logs go to stderr: stdout is
 * the protocol.
 *
 *   PGHOST=... PGDATABASE=... PGUSER=postgres node clients/node/bin/memtx-mcp.js --setup-graph-search
 *
 * sets up, once per database and as a superuser, the optional indexed search
 * of the knowledge-graph tools (src/kg.js, setupSearch: pg_trgm, two indexes
 * on memtx.records, schema memtx_kg) and exits.
 */
import pg from 'pg';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

import { ResilientConnection } from '../src/connection.js';
import { embeddingFromEnv } from '../src/embeddings.js';
import { setupSearch } from '../src/kg.js';
import { createServer } from '../src/mcp.js';
import { embeddingText } from '../src/memory.js';

const log = (/** @type {string} */ line) => console.error(line);

if (process.argv.includes('--setup-graph-search')) {
  const admin = new pg.Client({ application_name: 'memtx-mcp --setup-graph-search' });
  try {
    await admin.connect();
    await setupSearch(admin, (line) => log(`memtx-mcp: ${line}`));
    log('memtx-mcp: the knowledge graph\'s indexed search is set up');
  } catch (err) {
    log(`memtx-mcp: setting up the indexed search failed: ${/** @type {Error} */ (err).message}`);
    process.exitCode = 1;
  } finally {
    await admin.end().catch(() => {});
  }
  process.exit();
}

// modules of extra tools and resources, each exporting `tools` (and
// optionally `resources`; see src/mcp.js), relative to this file
const TOOL_MODULES = ['../src/kg.js'];
const extraTools = [];
const resources = [];
// a module may say what text to embed for the records it writes (an embeddingText that
// answers undefined for records not its own)
/** @type {((entity: string, attribute: string, value: any) => string | undefined)[]} */
const textOf = [];
for (const module of TOOL_MODULES) {
  const loaded = await import(module);
  extraTools.push(...loaded.tools);
  resources.push(...(loaded.resources ?? []));
  if (loaded.embeddingText) textOf.push(loaded.embeddingText);
}

/**
 * The text embedded for a record: the first module's that claims it, else memtx's.
 * @param {string} entity @param {string} attribute @param {any} value
 */
function textOfRecord(entity, attribute, value) {
  for (const text of textOf) {
    const t = text(entity, attribute, value);
    if (t !== undefined) return t;
  }
  return embeddingText(entity, attribute, value);
}

/** A comma-separated list of role names from the environment, or undefined. @param {string} name */
function roles(name) {
  const value = process.env[name];
  if (value === undefined || value.trim() === '') return undefined;
  return value.split(',').map((r) => r.trim()).filter((r) => r !== '');
}

const db = new ResilientConnection({ config: { application_name: 'memtx-mcp' }, log, name: 'memtx-mcp' });
/** @type {import('@modelcontextprotocol/sdk/server/index.js').Server} */
let server;
/** @type {import('../src/mcp.js').McpSession} */
let session;
try {
  const embedding = embeddingFromEnv(process.env);
  if (embedding) log(`memtx-mcp: embedding with ${embedding.description}`);
  ({ server, session } = createServer({
    ...(embedding && {
      embedder: embedding.embedder, embeddingModel: embedding.embeddingModel, embeddingText: textOfRecord,
    }),
    db,
    namespace: process.env.MEMTX_NAMESPACE || 'default',
    extraTools,
    resources,
    scope: /** @type {any} */ (process.env.MEMTX_DEFAULT_SCOPE || undefined),
    readers: roles('MEMTX_DEFAULT_READERS'),
    writers: roles('MEMTX_DEFAULT_WRITERS'),
  }));
} catch (err) {
  log(`memtx-mcp: ${/** @type {Error} */ (err).message.replace(/^scope/, 'MEMTX_DEFAULT_SCOPE')}`);
  process.exit(2);
}

// the host may have listed tools while the database was away: list again
db.onReconnect = () => { server.sendToolListChanged().catch(() => {}); };

let closing = false;
async function shutdown(code = 0) {
  if (closing) return;
  closing = true;
  try {
    if (db.connected) await session.close();
    else if (session.memory.isOpen) log('memtx-mcp: the database is unavailable: the open transaction is left to its lease');
  } catch (err) {
    log(`memtx-mcp: aborting the open transaction failed: ${/** @type {Error} */ (err).message}`);
    code = 1;
  }
  await db.end();
  process.exit(code);
}

server.onclose = () => shutdown(0);
process.stdin.on('end', () => shutdown(0));
process.on('SIGINT', () => shutdown(0));
process.on('SIGTERM', () => shutdown(0));

// the host may talk at once: a call that comes before the first connection attempt ends waits for it
await server.connect(new StdioServerTransport());
await db.start();
