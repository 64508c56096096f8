// The README's section "Using memtx from an MCP host" (docs/mcp.md until the
// README carries it) runs as written: its ```js blocks run in order as one
// module, from the top of the repository, against the server the PG*
// environment names (as a superuser), in a database of its own
// (memtx_node_snippets, made fresh and dropped; the roles the blocks create
// are dropped before and after).  Comment lines right after a console.log
// statement are the output the section shows: each block must print exactly
// those lines.  Its ```json block is a host configuration that starts this
// server.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';

import pg from 'pg';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PACKAGE = join(ROOT, 'clients', 'node');
const SECTION = 'Using memtx from an MCP host';
const SOURCES = ['README.md', 'docs/mcp.md'];
const DATABASE = 'memtx_node_snippets';
const MARK = '--- end of block';

/**
 * The text under the heading `title` up to the next heading of its level or
 * higher (headings inside code fences do not count); null without one.
 * @param {string} markdown @param {string} title
 */
export function extractSection(markdown, title) {
  let level = 0;
  let fenced = false;
  const body = [];
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^(#+)\s+(.*?)\s*$/.exec(line);
    if (!level) {
      if (heading && heading[2] === title) level = heading[1].length;
      continue;
    }
    if (heading && heading[1].length <= level) break;
    body.push(line);
  }
  return level ? body.join('\n') : null;
}

/** The bodies of the fenced blocks of a language. @param {string} text @param {string} lang */
const blocks = (text, lang) => [...text.matchAll(new RegExp(`^\`\`\`${lang}\\n(.*?)^\`\`\``, 'gms'))].map((m) => m[1]);

/** The comment lines right after a console.log statement, '// ' removed. @param {string} block */
export function expectedOutput(block) {
  const out = [];
  let printing = false;
  let afterPrint = false;
  for (const line of block.split('\n')) {
    const t = line.trim();
    if (t.startsWith('//')) {
      if (afterPrint) out.push(t.slice(2).replace(/^ /, ''));
      continue;
    }
    if (t.includes('console.log(')) printing = true;
    afterPrint = printing;
    if (printing && t.endsWith(';')) printing = false;
  }
  return out;
}

function theSection() {
  for (const source of SOURCES) {
    const path = join(ROOT, source);
    if (!existsSync(path)) continue;
    const text = extractSection(readFileSync(path, 'utf8'), SECTION);
    if (text !== null) return { source, text };
  }
  throw new assert.AssertionError({ message: `no section "${SECTION}" in ${SOURCES.join(' or ')}` });
}

const { source, text } = theSection();
const roles = [...text.matchAll(/CREATE ROLE (\w+)/g)].map((m) => m[1]);
const admin = new pg.Client({ database: process.env.PGDATABASE || 'postgres' });

async function dropAll() {
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  for (const role of roles) await admin.query(`DROP ROLE IF EXISTS ${role}`);
}

before(async () => {
  await admin.connect();
  await dropAll();
  await admin.query(`CREATE DATABASE ${DATABASE}`);
});
after(async () => {
  await dropAll();
  await admin.end();
});

test('section reading', () => {
  const doc = '# T\n## Using memtx from an MCP host\ntext\n```js\nconsole.log(1);\n// 1\n## not a heading\n```\n'
    + '### sub\n```js\nlet x = 2; // set\n// not output\nconsole.log(\n  x);\n// 2\n\n// prose\n```\n## Next\n';
  const section = extractSection(doc, SECTION);
  assert.ok(section && !section.includes('## Next') && section.includes('### sub'));
  assert.deepEqual(blocks(section, 'js').map(expectedOutput), [['1'], ['2']]);
  assert.equal(extractSection(doc, 'Missing'), null);
});

test('the section shows each part', () => {
  const code = blocks(text, 'js').join('\n');
  assert.ok(blocks(text, 'js').length >= 3);
  for (const shown of ['StdioClientTransport', 'listTools(', "'memory_stage'", "'memory_commit'",
    "'issue_refund'", "'memory_revoke'", 'new Memory(', '.turn(', '.recall(', '.lookup(', 'sqlstate']) {
    assert.ok(code.includes(shown), `the section shows no ${shown}`);
  }
});

test('the host configuration starts this server', () => {
  const [config] = blocks(text, 'json').map((b) => JSON.parse(b));
  const server = config.mcpServers.memtx;
  assert.equal(server.command, 'node');
  assert.match(server.args[0], /\/clients\/node\/bin\/memtx-mcp\.js$/);
  assert.ok(existsSync(join(ROOT, server.args[0].replace(/^.*\/(clients\/node\/)/, '$1'))));
  for (const key of ['PGHOST', 'PGDATABASE', 'PGUSER', 'MEMTX_NAMESPACE']) assert.ok(key in server.env, key);
});

test('the snippets run and print what they show', async () => {
  const js = blocks(text, 'js');
  // one module (imports resolve from clients/node), a mark after each block
  const module = join(PACKAGE, `.snippets-${process.pid}.mjs`);
  writeFileSync(module, js.map((b) => `${b}\nconsole.log(${JSON.stringify(MARK)});\n`).join('\n'));
  let stdout;
  try {
    ({ stdout } = await promisify(execFile)(process.execPath, [module], {
      cwd: ROOT, env: { ...process.env, PGDATABASE: DATABASE }, timeout: 60_000,
    }));
  } catch (err) {
    assert.fail(`the js blocks of ${source} failed:\n${err.stdout}\n${err.stderr}`);
  } finally {
    rmSync(module, { force: true });
  }
  const printed = stdout.split(`${MARK}\n`);
  assert.equal(printed.length, js.length + 1, 'every block ran');
  js.forEach((block, i) => {
    assert.deepEqual(printed[i].split('\n').filter((l, j, all) => j < all.length - 1 || l !== ''),
      expectedOutput(block), `js block ${i + 1} of ${source} printed other lines than it shows`);
  });
});
