// The README's section "Using memtx from an MCP host" runs as written: its ```js blocks run in order as one
// module, from the top of the repository, against the server the PG*
// environment names (as a superuser), in a database of its own
// (memtx_node_snippets, made fresh and dropped; the roles the blocks create
// are dropped before and after).  Comment lines right after a console.log
// statement are the output the section shows: each block must print exactly
// those lines.  Its ```json block is a host configuration that starts this
// server.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { ROOT, blocks, expectedOutput, extractSection, findSection, rolesCreated, runSnippets, useDatabase } from './snippets.js';

const SECTION = 'Using memtx from an MCP host';
const DATABASE = 'memtx_node_snippets';

const section = findSection(SECTION, ['README.md']);
const { text } = section;
useDatabase(DATABASE, rolesCreated(text));

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

test('the snippets run and print what they show', () => runSnippets(section, DATABASE));
