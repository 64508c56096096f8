"""Fixtures for the memtx_client tests.

They run against the server the PG* environment names, connecting as a
superuser (the harness).  The session makes database memtx_python with a
fresh memtx and three login roles, the agents alice, bob and carol (the one
the fencing tests fence, so a fence never reaches another test's
transactions); every test gets a namespace of its own that the agents are
members of, so tests do not see each other's records.
"""

from __future__ import annotations

import itertools
import re
import secrets
from typing import Any, Dict, Iterator

import psycopg
import pytest
from psycopg import sql

from memtx_client import Memory

DATABASE = "memtx_python"
AGENTS = {"alice": "memtx_py_alice", "bob": "memtx_py_bob", "carol": "memtx_py_carol"}
_serial = itertools.count(1)


@pytest.fixture(scope="session")
def database() -> Iterator[Dict[str, Any]]:
    """Database memtx_python with memtx installed, and the agents' login roles."""
    password = secrets.token_hex(16)
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
        for role in AGENTS.values():
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
            admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(password)))
    with psycopg.connect(dbname=DATABASE, autocommit=True) as conn:
        conn.execute("SET client_min_messages = warning")
        conn.execute("CREATE EXTENSION memtx CASCADE")
    yield {"dbname": DATABASE, "password": password}
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
        for role in AGENTS.values():
            admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def _connect(database: Dict[str, Any], role: str | None = None) -> "psycopg.Connection[Any]":
    if role is None:
        return psycopg.connect(dbname=database["dbname"], autocommit=True)
    return psycopg.connect(dbname=database["dbname"], user=role,
                           password=database["password"], autocommit=True)


@pytest.fixture(scope="session")
def admin_conn(database: Dict[str, Any]) -> Iterator["psycopg.Connection[Any]"]:
    """The harness: a superuser connection to the test database."""
    with _connect(database) as conn:
        yield conn


@pytest.fixture(scope="session")
def alice_conn(database: Dict[str, Any]) -> Iterator["psycopg.Connection[Any]"]:
    with _connect(database, AGENTS["alice"]) as conn:
        yield conn


@pytest.fixture(scope="session")
def bob_conn(database: Dict[str, Any]) -> Iterator["psycopg.Connection[Any]"]:
    with _connect(database, AGENTS["bob"]) as conn:
        yield conn


@pytest.fixture(scope="session")
def carol_conn(database: Dict[str, Any]) -> Iterator["psycopg.Connection[Any]"]:
    with _connect(database, AGENTS["carol"]) as conn:
        yield conn


@pytest.fixture
def ns(request: pytest.FixtureRequest, admin_conn: "psycopg.Connection[Any]") -> str:
    """A namespace of this test's own, granted to both agents."""
    name = f"t{next(_serial)}_{re.sub(r'[^a-z0-9]+', '_', request.node.name.lower())}"[:60]
    for role in AGENTS.values():
        admin_conn.execute("SELECT memtx.grant_namespace(%s, %s)", (name, role))
    return name


@pytest.fixture
def unique(ns: str) -> str:
    """A name no other test uses, for registries shared by all namespaces (tools, sources)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", ns)[:50]


@pytest.fixture
def alice(alice_conn: "psycopg.Connection[Any]", ns: str) -> Memory:
    return Memory(alice_conn, namespace=ns)


@pytest.fixture
def bob(bob_conn: "psycopg.Connection[Any]", ns: str) -> Memory:
    return Memory(bob_conn, namespace=ns)


@pytest.fixture
def carol(carol_conn: "psycopg.Connection[Any]", ns: str) -> Memory:
    return Memory(carol_conn, namespace=ns)


@pytest.fixture
def harness(admin_conn: "psycopg.Connection[Any]", ns: str) -> Memory:
    return Memory(admin_conn, namespace=ns)


def has_function(conn: "psycopg.Connection[Any]", name: str) -> bool:
    row = conn.execute("SELECT count(*) FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n"
                       " ON n.oid = p.pronamespace WHERE n.nspname = 'memtx' AND p.proname = %s",
                       (name,)).fetchone()
    return bool(row and row[0])


@pytest.fixture
def requires(admin_conn: "psycopg.Connection[Any]") -> Any:
    """requires('recall'): skip when this build of memtx lacks the function."""
    def check(name: str) -> None:
        if not has_function(admin_conn, name):
            pytest.skip(f"memtx.{name} is not in this build")
    return check


def state_of(conn: "psycopg.Connection[Any]", record: int) -> tuple[str, str | None]:
    """(state, reason) of a record, read by the harness."""
    row = conn.execute("SELECT state::text, reason FROM memtx.records WHERE id = %s",
                       (record,)).fetchone()
    assert row is not None
    return row[0], row[1]
