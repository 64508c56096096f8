#!/usr/bin/python3
"""Runs sqlsmith (random SQL) against the fuzzed store, as an agent and as a superuser.

sqlsmith's own errors are expected (it writes random SQL); what counts is
that no backend crashed: a sentinel connection held open for the whole run
must survive (a crashed backend makes the postmaster end every other one),
pg_postmaster_start_time() must not change, and no error of class XX (an
internal error) raised in a memtx source file may come from a query that
calls a memtx function: such a query is replayed (rolled back) and the
source file of its error read from the error report.
sqlsmith logs every error with its SQLSTATE into a database of its own
(--log-to), which is how errors are attributed.

    test/fuzz/smith.py [--seconds N] [--seed N] [--database NAME]

after test/fuzz/fuzz.py made and populated the database (it reuses its
roles: DATABASE_a is the agent).  CI: --seconds 60 (half as the agent,
half as a superuser); the long run is --seconds 1200.  Prints one line per
role and "N passed, N failed" last.
"""

import argparse
import collections
import glob
import os
import re
import secrets
import shutil
import subprocess
import sys

import psycopg
from psycopg import sql

LOG_SUFFIX = "_smithlog"
# a query that calls a memtx function (tables are never followed by "(");
# internal errors of PostgreSQL itself in queries that only read memtx tables
# are reported, not counted
CALLS_MEMTX = r"memtx\.[a-z_]+\("
# the source files of memtx: an internal error raised in one of them is ours
# (a core file of the same name, such as guc.c, errs on the side of counting)
MEMTX_SOURCES = {os.path.basename(f) for f in glob.glob(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "*.c"))}
# the tables sqlsmith's --log-to writes to (its documented log schema)
LOG_SCHEMA = """
CREATE TABLE instance (id bigserial PRIMARY KEY, rev text, target text, hostname text,
                       version text, seed text);
CREATE TABLE error (id bigint REFERENCES instance (id), msg text, query text, target text,
                    sqlstate text);
CREATE TABLE stat (id bigint REFERENCES instance (id), generated bigint, level float8,
                   nodes float8, retries float8, updated timestamptz, impedance jsonb);
"""


def replay(database, query):
    """Where an internal error comes from: replays its query (rolled back) and
    reads the source file of the error: ("memtx" | "core" | "gone", file:line)."""
    with psycopg.connect(dbname=database) as conn:
        try:
            conn.execute("SET statement_timeout = '10s'")
            conn.execute(query).fetchall()
        except psycopg.Error as e:
            where = "%s:%s" % (e.diag.source_file, e.diag.source_line)
            if e.sqlstate is None or not e.sqlstate.startswith("XX"):
                return "gone", where
            return ("memtx" if e.diag.source_file in MEMTX_SOURCES else "core"), where
        finally:
            conn.rollback()
    return "gone", "no error"


def conninfo(**kw):
    return " ".join("%s=%s" % (k, _q(v)) for k, v in kw.items())


def _q(value):
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--database", default="memtx_fuzz")
    opts = ap.parse_args()
    agent, log_db = opts.database + "_a", opts.database + LOG_SUFFIX
    if not shutil.which("sqlsmith"):
        print("not ok sqlsmith is not installed (Debian package sqlsmith)")
        print("0 passed, 1 failed")
        return 1

    password = secrets.token_hex(16)
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(agent),
                                                                 sql.Literal(password)))
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(log_db)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(log_db)))
    with psycopg.connect(dbname=log_db, autocommit=True) as log:
        log.execute(LOG_SCHEMA)

    env = {k: os.environ.get(k) for k in ("PGHOST", "PGPORT", "PGUSER", "PGPASSWORD")}
    host = dict(host=env["PGHOST"] or "localhost", port=env["PGPORT"] or "5432")
    targets = [
        (agent, conninfo(dbname=opts.database, user=agent, password=password, **host)),
        ("superuser", conninfo(dbname=opts.database, user=env["PGUSER"] or "postgres",
                               password=env["PGPASSWORD"] or "", **host)),
    ]
    logto = conninfo(dbname=log_db, user=env["PGUSER"] or "postgres",
                     password=env["PGPASSWORD"] or "", **host)

    passed = failed = 0
    totals = collections.Counter()
    for n, (who, target) in enumerate(targets):
        seconds = max(1, opts.seconds // len(targets))
        sentinel = psycopg.connect(dbname=opts.database, autocommit=True)
        boot = sentinel.execute("SELECT pg_postmaster_start_time()").fetchone()[0]
        run = subprocess.run(["timeout", str(seconds), "sqlsmith", "--verbose",
                              "--target=" + target, "--log-to=" + logto,
                              "--seed=%d" % (opts.seed + n)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             errors="replace")
        progress = "".join(line for line in run.stdout.splitlines()
                           if re.fullmatch(r"[.eCSt]+", line))
        queries = len(progress)
        try:
            same = sentinel.execute("SELECT pg_postmaster_start_time()").fetchone()[0] == boot
            sentinel.close()
        except psycopg.Error:
            same = False
        with psycopg.connect(dbname=log_db, autocommit=True) as log:
            inst = log.execute("SELECT max(id) FROM instance").fetchone()[0]
            states = dict(log.execute("SELECT sqlstate, count(*) FROM error WHERE id = %s "
                                      "GROUP BY 1", (inst,)).fetchall())
            internal = log.execute(
                "SELECT sqlstate, msg, query FROM error WHERE id = %s AND sqlstate LIKE 'XX%%' "
                "AND query ~ %s LIMIT 20", (inst, CALLS_MEMTX)).fetchall()
            in_memtx = log.execute("SELECT count(*) FROM error WHERE id = %s "
                                   "AND query ~ %s", (inst, CALLS_MEMTX)).fetchone()[0]
            other_xx = log.execute(
                "SELECT count(*) FROM error WHERE id = %s AND sqlstate LIKE 'XX%%' "
                "AND query !~ %s", (inst, CALLS_MEMTX)).fetchone()[0]
        totals["queries"] += queries
        totals["errors"] += sum(states.values())
        crashed = not same or "C" in progress
        totals["crashes"] += crashed
        started = run.returncode == 124 and queries > 0
        origins = [(state, msg, query, replay(opts.database, query))
                   for state, msg, query in internal]
        ours = [o for o in origins if o[3][0] == "memtx"]
        status = "ok" if started and not crashed and not ours else "not ok"
        print("%s sqlsmith as %s: %d queries in %d s, %d errors (%d calling memtx; sqlstates: %s), %s" % (
            status, who, queries, seconds, sum(states.values()), in_memtx,
            ", ".join("%s %d" % kv for kv in sorted(states.items(), key=lambda kv: -kv[1])[:8]),
            "the server restarted or a backend crashed" if crashed else "no crash"))
        if not started:
            print("    sqlsmith ended with status %d:\n%s" % (run.returncode, run.stdout[-2000:]))
        for state, msg, query, (origin, where) in origins:
            print("    %s in a query calling memtx (%s, %s): %s" % (
                state, {"memtx": "raised by memtx, counted",
                        "core": "raised by PostgreSQL itself, not counted",
                        "gone": "not reproduced on replay, not counted"}[origin],
                where, msg.strip()))
            if origin == "memtx":
                print("      " + query[:4000])
        if other_xx:
            print("    (%d internal errors of queries that call no memtx function, not counted)"
                  % other_xx)
        if status == "ok":
            passed += 1
        else:
            failed += 1
    print("sqlsmith figures: %d queries, %d errors, crashes: %d" % (
        totals["queries"], totals["errors"], totals["crashes"]))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
