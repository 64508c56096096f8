#!/usr/bin/env python3
"""The Python client's hot calls -- ``propose``, ``lookup``, ``recall`` and
``read`` -- on one autocommit connection, against the same memtx function
called as one prepared psycopg statement (what the call is on the wire at
best), in alternating rounds, medians.  With ``--compare PATH``, the
``memtx_client`` package at PATH (another version of the client) runs in the
same rounds too.  Prints figures; passes or fails on nothing but errors.

    /usr/bin/python3 clients/python/bench/calls.py [--seconds 2] [--rounds 5]
        [--synchronous-commit on|off] [--compare DIR]

Against the server the PG* environment names, as a superuser: database
memtx_python_bench is made afresh (memtx, an agent role) and dropped.
"""
from __future__ import annotations

import argparse
import importlib.util
import secrets
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import memtx_client  # noqa: E402  (the client beside this script, unless installed)

DATABASE = "memtx_python_bench"
AGENT = "memtx_python_bench_agent"
SLOTS = 1000


def load_client(path: Path, name: str) -> Any:
    """The memtx_client package at path, imported under another name."""
    spec = importlib.util.spec_from_file_location(
        name, path / "__init__.py", submodule_search_locations=[str(path)])
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def calls(mem: Any, raw: bool) -> Dict[str, Callable[[int], Any]]:
    """Each hot call of session mem (or, raw, its one prepared statement)."""
    conn = mem.conn
    if raw:
        def run(text: str, *args: Any) -> Any:
            return conn.execute(text, args, prepare=True).fetchall()
        return {
            "propose": lambda i: run("SELECT * FROM memtx.propose(entity => %s, attribute => 'status',"
                                     " value => %s::jsonb, source => 'crm', confidence => 0.9,"
                                     " namespace => 'bench')", f"order:{i % SLOTS}", f'"v{i}"'),
            "lookup": lambda i: run("SELECT * FROM memtx.lookup(entity => %s, attribute => 'status',"
                                    " namespace => 'bench')", f"order:{i % SLOTS}"),
            "recall": lambda i: run("SELECT * FROM memtx.recall(tx => %s, query => %s, k => 3)",
                                    mem.tx, f"order {i % SLOTS}"),
            "read": lambda i: run("SELECT * FROM memtx.read(tx => %s, entity => %s, attribute => 'status')",
                                  mem.tx, f"order:{i % SLOTS}"),
        }
    return {
        "propose": lambda i: mem.propose(f"order:{i % SLOTS}", "status", f"v{i}", source="crm",
                                         confidence=0.9),
        "lookup": lambda i: mem.lookup(f"order:{i % SLOTS}", "status"),
        "recall": lambda i: mem.recall(f"order {i % SLOTS}", k=3),
        "read": lambda i: mem.read(f"order:{i % SLOTS}", "status"),
    }


def per_call(fn: Callable[[int], Any], seconds: float) -> float:
    """Milliseconds per call of fn over a round of the given seconds."""
    start = time.perf_counter()
    n = 0
    while n < 3 or time.perf_counter() - start < seconds:
        fn(n)
        n += 1
    return (time.perf_counter() - start) * 1000 / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--synchronous-commit", default="on", choices=("on", "off"))
    parser.add_argument("--compare", type=Path, help="another memtx_client package directory")
    opts = parser.parse_args()

    password = secrets.token_hex(16)
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
        admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(AGENT)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
            sql.Identifier(AGENT), sql.Literal(password)))
    try:
        with psycopg.connect(dbname=DATABASE, autocommit=True) as harness:
            harness.execute("SET client_min_messages = warning")
            harness.execute("CREATE EXTENSION memtx CASCADE")
            harness.execute("SELECT memtx.grant_namespace('bench', %s)", (AGENT,))
        clients = {"this client": memtx_client, "the prepared statement": memtx_client}
        if opts.compare:
            clients["the client at --compare"] = load_client(opts.compare.resolve(), "memtx_client_compared")
        sessions = {}
        connections = []
        for name, module in clients.items():
            conn = psycopg.connect(dbname=DATABASE, user=AGENT, password=password, autocommit=True,
                                   options=f"-c synchronous_commit={opts.synchronous_commit}")
            connections.append(conn)
            mem = module.Memory(conn, namespace="bench")
            for i in range(SLOTS):   # every slot has a value (the first session writes them)
                if not sessions:
                    mem.propose(f"order:{i}", "status", "v0", source="crm", confidence=0.9)
            mem.begin()              # recall and read run in an open transaction
            sessions[name] = calls(mem, raw=name == "the prepared statement")
        print(f"ms per call, one autocommit connection each, synchronous_commit={opts.synchronous_commit},"
              f" {opts.rounds} alternating rounds of {opts.seconds} s (medians)")
        for op in ("propose", "lookup", "recall", "read"):
            times: Dict[str, List[float]] = {name: [] for name in sessions}
            for name, ops in sessions.items():
                for i in range(20):
                    ops[op](i)
            for _ in range(opts.rounds):
                for name, ops in sessions.items():
                    times[name].append(per_call(ops[op], opts.seconds))
            medians = {name: statistics.median(t) for name, t in times.items()}
            raw = medians["the prepared statement"]
            print(f"{op:8} " + "   ".join(f"{name} {ms:.3f} ms ({ms / raw:.2f})" for name, ms in medians.items()))
        for conn in connections:
            conn.close()
    finally:
        with psycopg.connect(autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(AGENT)))


if __name__ == "__main__":
    main()
