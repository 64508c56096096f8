/**
 * A small PostgreSQL cluster of one test's own, which the test may stop and
 * start (a database restart under a running memtx-mcp) without touching the
 * cluster the other suites share.  initdb and pg_ctl refuse to run as root:
 * as root they run as user postgres (runuser), in a directory it owns.  The
 * cluster preloads memtx and, when MEMTX_DESTDIR names a private install
 * tree (test/run's default), loads memtx from it as the shared cluster does
 * (Debian's extension_destdir).  Local trust authentication, TCP on
 * 127.0.0.1 at a free port; superuser postgres.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const PG_CONFIG = process.env.PG_CONFIG || '/usr/lib/postgresql/15/bin/pg_config';

/** A TCP port nobody listens on now. */
async function freePort() {
  const probe = net.createServer();
  await new Promise((resolve) => { probe.listen(0, '127.0.0.1', resolve); });
  const { port } = /** @type {net.AddressInfo} */ (probe.address());
  await new Promise((resolve) => { probe.close(resolve); });
  return port;
}

/**
 * Start a cluster; returns its connection settings (PG* variables), and
 * stop(), start() and remove().
 */
export async function ownCluster() {
  const bindir = execFileSync(PG_CONFIG, ['--bindir']).toString().trim();
  const libdir = execFileSync(PG_CONFIG, ['--pkglibdir']).toString().trim();
  const asPostgres = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
  const dir = mkdtempSync(path.join(tmpdir(), 'memtx-cluster-'));
  chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'log');
  /** @param {string} program @param {string[]} args */
  const run = (program, args) => {
    const [cmd, ...rest] = [...asPostgres, path.join(bindir, program), ...args];
    return execFileSync(cmd, rest, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  };
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const destdir = process.env.MEMTX_DESTDIR;
  const conf = [
    `port = ${port}`, "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${dir}'`,
    "shared_preload_libraries = 'memtx'", 'fsync = off', 'max_connections = 20',
    ...(destdir ? [`extension_destdir = '${destdir}'`, `dynamic_library_path = '${destdir}${libdir}:$libdir'`] : []),
  ];
  appendFileSync(path.join(data, 'postgresql.conf'), `${conf.join('\n')}\n`);
  const cluster = {
    env: { PGHOST: '127.0.0.1', PGPORT: String(port), PGUSER: 'postgres', PGDATABASE: 'postgres' },
    start() { run('pg_ctl', ['-D', data, '-l', logFile, '-w', '-t', '60', 'start']); },
    /** fast shutdown: every session is terminated (57P01), as for a restart */
    stop() { run('pg_ctl', ['-D', data, '-w', '-t', '60', '-m', 'fast', 'stop']); },
    remove() {
      try { run('pg_ctl', ['-D', data, '-w', '-m', 'immediate', 'stop']); } catch { /* not running */ }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  cluster.start();
  return cluster;
}
