/**
 * Running a documentation section as written: its ```js blocks run in
 * order as one module, from the top of the repository, against the server
 * the PG* environment names (as a superuser), in a database of the
 * caller's.  Comment lines right after a console.log statement are the
 * output the section shows: each block must print exactly those lines.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before } from 'node:test';

import pg from 'pg';

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PACKAGE = join(ROOT, 'clients', 'node');
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
export const blocks = (text, lang) => [...text.matchAll(new RegExp(`^\`\`\`${lang}\\n(.*?)^\`\`\``, 'gms'))].map((m) => m[1]);

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

/**
 * The section `title` from the first of `sources` (paths from the top of
 * the repository) that has it: { source, text }.
 * @param {string} title @param {string[]} sources
 */
export function findSection(title, sources) {
  for (const source of sources) {
    const path = join(ROOT, source);
    if (!existsSync(path)) continue;
    const text = extractSection(readFileSync(path, 'utf8'), title);
    if (text !== null) return { source, text };
  }
  throw new assert.AssertionError({ message: `no section "${title}" in ${sources.join(' or ')}` });
}

/** The roles a section's blocks create (its CREATE ROLE statements). @param {string} text */
export const rolesCreated = (text) => [...text.matchAll(/CREATE ROLE (\w+)/g)].map((m) => m[1]);

/**
 * Runs the js blocks of a section in database `database` and asserts that
 * each prints the lines it shows.
 * @param {{ source: string, text: string }} section @param {string} database
 */
export async function runSnippets({ source, text }, database) {
  const js = blocks(text, 'js');
  // one module (imports resolve from clients/node), a mark after each block
  const module = join(PACKAGE, `.snippets-${process.pid}.mjs`);
  writeFileSync(module, js.map((b) => `${b}\nconsole.log(${JSON.stringify(MARK)});\n`).join('\n'));
  let stdout;
  try {
    ({ stdout } = await promisify(execFile)(process.execPath, [module], {
      cwd: ROOT, env: { ...process.env, PGDATABASE: database }, timeout: 60_000,
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
}

/**
 * Makes `database` afresh before the file's tests and drops it, and the
 * `roles` a section creates, before and after them.
 * @param {string} database @param {string[]} roles
 */
export function useDatabase(database, roles) {
  const admin = new pg.Client({ database: process.env.PGDATABASE || 'postgres' });
  async function dropAll() {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    for (const role of roles) await admin.query(`DROP ROLE IF EXISTS ${role}`);
  }
  before(async () => {
    await admin.connect();
    await dropAll();
    await admin.query(`CREATE DATABASE ${database}`);
  });
  after(async () => {
    await dropAll();
    await admin.end();
  });
}
