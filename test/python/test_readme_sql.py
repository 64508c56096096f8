"""The README's SQL tour ("A tour") runs as written, and says what it shows.

Its ```sql block runs through psql (it uses \\gset) in a database of its own
(memtx_readme_tour, made fresh with memtx, dropped afterwards), as a
superuser through the PG* environment; every statement must succeed, and the
comments that say what a statement answers must hold: the gate is blocked
(in_flight_tentative), the commit commits, the invariants hold (no rows).
"""
from __future__ import annotations

import pathlib
import re
import subprocess

import psycopg
from psycopg import sql

from test_readme_snippets import extract_section

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATABASE = "memtx_readme_tour"


def test_the_tour_runs_and_answers_as_its_comments_say() -> None:
    text = extract_section((ROOT / "README.md").read_text(encoding="utf-8"), "A tour")
    assert text is not None
    [tour] = re.findall(r"^```sql\n(.*?)^```", text, re.S | re.M)
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    try:
        with psycopg.connect(dbname=DATABASE, autocommit=True) as conn:
            conn.execute("SET client_min_messages = warning")
            conn.execute("CREATE EXTENSION memtx CASCADE")
        run = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", DATABASE],
                             input=tour, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        lines = run.stdout.splitlines()
        assert "f|in_flight_tentative|{1}" in lines, run.stdout           # the gate, blocked
        assert "1|committed|" in lines, run.stdout                        # the commit
        assert any(line.startswith("t||2|{}|f") for line in lines), run.stdout  # the act, allowed
        assert any(line.startswith("digraph") for line in lines), run.stdout    # lineage_dot
        with psycopg.connect(dbname=DATABASE) as conn:
            assert conn.execute("SELECT * FROM memtx.check_invariants()").fetchall() == []
    finally:
        with psycopg.connect(autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
