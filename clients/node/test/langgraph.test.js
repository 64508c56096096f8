// The README's section "Using memtx as a LangGraph store" runs as written (see snippets.js), in a
// database of its own (memtx_node_langgraph_doc, made fresh and dropped; the
// roles the blocks create are dropped before and after).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { blocks, findSection, rolesCreated, runSnippets, useDatabase } from './snippets.js';

const DATABASE = 'memtx_node_langgraph_doc';
const section = findSection('Using memtx as a LangGraph store', ['README.md']);
useDatabase(DATABASE, rolesCreated(section.text));

test('the section shows each part', () => {
  const code = blocks(section.text, 'js').join('\n');
  for (const shown of ["from 'memtx-client/store'", 'new MemtxStore(', '.put(', '.get(', '.search(', 'filter:',
    'query:', '.listNamespaces(', '.delete(', 'PutRefused', 'source:']) {
    assert.ok(code.includes(shown), `the section shows no ${shown}`);
  }
});

test('the snippets run and print what they show', () => runSnippets(section, DATABASE));
