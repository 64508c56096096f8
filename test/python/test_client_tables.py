"""The clients' hand-kept tables against the catalog, PostgreSQL's SQLSTATE list and each other.

The Python client (clients/python/memtx_client) and the Node client
(clients/node/src/memory.js) each keep, by hand, the named arguments and SQL
types of every memtx function they call (SIGNATURES), the result columns
they read, the labels of memtx's enum types and how SQLSTATEs map to error
classes.  These tests fail when one of them disagrees with what it
describes:

* every function's arguments, names and types in order, are those pg_proc
  gives it (an argument SPEC.md adds that this server lacks may be missing
  only when the client lists it in PENDING_ARGUMENTS, at the end);
* the enum labels are pg_enum's, in order;
* the columns of each result shape are the function's OUT columns (exactly,
  in order) or columns of the table it returns;
* every SQLSTATE code and class in the error tables exists in PostgreSQL's
  errcodes.txt, every SQLSTATE memtx's C code raises maps to a specific
  error class, and the two clients map every SQLSTATE alike;
* the two clients' tables are the same.

The functions of the companion memtx_vector (embed, recall_similar) are
checked where pgvector lets it be installed (test_vector_functions_are_checked
says when they are not).  Works in a database of its own
(memtx_client_tables, made fresh and dropped),
through the PG* environment as a superuser.  The Node tables are read by
running node on clients/node/src/memory.js (it imports nothing else).
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
from typing import Any, Dict, Iterator, List, Tuple

import psycopg
import pytest
from psycopg import sql

from memtx_client import errors, types
from memtx_client.memory import ENUMS, PENDING_ARGUMENTS, SIGNATURES, VECTOR_FUNCTIONS

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATABASE = "memtx_client_tables"
ERRCODES = pathlib.Path("/usr/share/postgresql/15/errcodes.txt")

#: the result shape of each function, by the Python client's row class and Node's COLUMNS key
SHAPES = {
    "commit": (types.CommitResult, "commit"), "outcome": (types.Outcome, "outcome"),
    "propose": (types.ProposeResult, "propose"), "recall": (types.Recalled, "recalled"),
    "act": (types.ActResult, "act"), "gate": (types.GateResult, "gate"),
    "read": (types.Record, "record"), "lookup": (types.Record, "record"),
    "read_as_of": (types.Record, "record"), "abort": (types.Repair, "repair"),
    "revoke": (types.Repair, "repair"), "erase": (types.Repair, "repair"),
    "recall_similar": (types.Similar, "similar"),
}
#: tables the clients read directly, by the row class
TABLES = {"history": types.HistoryEntry, "writer_epochs": types.WriterEpoch}
#: SQLSTATEs of memtx's C code that no error class fits: misuse behind the API (39P01),
#: corruption (XX001), and the worker's warning about a missing database (3D000),
#: which no call raises
UNCLASSED = {"39P01", "XX001", "3D000"}
#: how the clients write SQL types, as format_type() writes them
TYPE_NAMES = {"timestamptz": "timestamp with time zone"}


@pytest.fixture(scope="module")
def catalog() -> Iterator["psycopg.Connection[Any]"]:
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    try:
        with psycopg.connect(dbname=DATABASE, autocommit=True) as conn:
            conn.execute("SET client_min_messages = warning")
            conn.execute("CREATE EXTENSION memtx CASCADE")
            # the functions of the companion memtx_vector too, when pgvector allows it
            if vector_missing(conn) is None:
                conn.execute("CREATE EXTENSION memtx_vector CASCADE")
            yield conn
    finally:
        with psycopg.connect(autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(DATABASE)))


def vector_missing(conn: "psycopg.Connection[Any]") -> "str | None":
    """Why memtx_vector cannot be installed here (None: it can)."""
    available = conn.execute(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'vector' "
        "AND string_to_array(split_part(default_version, '-', 1), '.')::int[] >= '{0,8,0}'").fetchall()
    return None if available else (
        "pgvector >= 0.8.0 is not installed; install it with apt install postgresql-15-pgvector "
        "(the PostgreSQL project's apt repository) or bash scripts/deps.sh")


def has_vector(conn: "psycopg.Connection[Any]") -> bool:
    return conn.execute("SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'memtx_vector'").fetchone() is not None


def errcode_names() -> Dict[str, str]:
    """ERRCODE_ name -> SQLSTATE, from PostgreSQL's errcodes.txt (a code may have two names)."""
    names: Dict[str, str] = {}
    for line in ERRCODES.read_text().splitlines():
        m = re.match(r"^([0-9A-Z]{5})\s+[EWS]\s+(ERRCODE_\w+)", line)
        if m:
            names[m.group(2)] = m.group(1)
    return names


def errcodes() -> List[str]:
    """Every SQLSTATE of PostgreSQL's errcodes.txt."""
    return sorted(set(errcode_names().values()))


def raised_by_memtx() -> List[str]:
    """The SQLSTATEs memtx's C code raises (its ERRCODE_ names)."""
    by_name = errcode_names()
    names = set()
    for path in (ROOT / "src").glob("*.c"):
        names |= set(re.findall(r"\bERRCODE_[A-Z_0-9]+\b", path.read_text()))
    unknown = names - set(by_name)
    assert not unknown, f"ERRCODE names not in errcodes.txt: {sorted(unknown)}"
    return sorted({by_name[n] for n in names})


@pytest.fixture(scope="module")
def node_tables() -> Dict[str, Any]:
    """The Node client's tables, and its error class for every SQLSTATE."""
    script = ("const m = await import(process.argv[1]); const codes = JSON.parse(process.argv[2]);"
              "console.log(JSON.stringify({SIGNATURES: m.SIGNATURES, PENDING: m.PENDING_ARGUMENTS,"
              " ENUMS: m.ENUMS, COLUMNS: m.COLUMNS,"
              " errors: Object.fromEntries(codes.map((c) => [c, m.errorClass(c).name]))}));")
    done = subprocess.run(["node", "--input-type=module", "-e", script,
                           str(ROOT / "clients" / "node" / "src" / "memory.js"),
                           json.dumps(errcodes())],
                          capture_output=True, text=True, check=True, timeout=60)
    return json.loads(done.stdout)


def arguments(conn: "psycopg.Connection[Any]", function: str) -> List[Tuple[str, str]]:
    """(name, type) of the input arguments of memtx.function, in order."""
    rows = conn.execute(
        "SELECT p.proargnames, p.proargmodes,"
        "       ARRAY(SELECT format_type(t, NULL) FROM unnest(coalesce(p.proallargtypes,"
        "             p.proargtypes::oid[])) t) AS types"
        "  FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = 'memtx' AND p.proname = %s", (function,)).fetchall()
    assert len(rows) == 1, f"memtx.{function}: {len(rows)} functions of that name"
    names, modes, argtypes = rows[0]
    modes = modes or ["i"] * len(argtypes)
    return [(n, t) for n, m, t in zip(names, modes, argtypes) if m in ("i", "b")]


def result_columns(conn: "psycopg.Connection[Any]", function: str) -> Tuple[str, List[str]]:
    """("out", the OUT/TABLE columns) or ("table", the returned table's columns)."""
    names, modes, rettype = conn.execute(
        "SELECT p.proargnames, p.proargmodes, p.prorettype::regtype::text"
        "  FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = 'memtx' AND p.proname = %s", (function,)).fetchone()
    if modes and any(m in ("o", "t", "b") for m in modes):
        return "out", [n for n, m in zip(names, modes) if m in ("o", "t", "b")]
    return "table", table_columns(conn, rettype)


def table_columns(conn: "psycopg.Connection[Any]", relation: str) -> List[str]:
    return [r[0] for r in conn.execute(
        "SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = %s::regclass"
        " AND attnum > 0 AND NOT attisdropped ORDER BY attnum", (relation,))]


def check_signatures(conn: "psycopg.Connection[Any]", signatures: Dict[str, Dict[str, str]],
                     pending: Dict[str, List[str]]) -> List[str]:
    problems = []
    for function, args in signatures.items():
        if function in VECTOR_FUNCTIONS and not has_vector(conn):
            continue  # test_vector_functions_are_checked says so
        actual = arguments(conn, function)
        mine = [(name, TYPE_NAMES.get(t, t)) for name, t in args.items()]
        missing = [n for n, _ in mine[len(actual):]]
        if mine[:len(actual)] != actual or any(n not in pending.get(function, ()) for n in missing):
            problems.append(f"memtx.{function}: the client has {mine}, the catalog {actual}")
    return problems


def test_python_signatures_are_the_catalogs(catalog: Any) -> None:
    assert check_signatures(catalog, SIGNATURES, {k: list(v) for k, v in PENDING_ARGUMENTS.items()}) == []


def test_node_signatures_are_the_catalogs(catalog: Any, node_tables: Dict[str, Any]) -> None:
    assert check_signatures(catalog, node_tables["SIGNATURES"], node_tables["PENDING"]) == []


def test_vector_functions_are_checked(catalog: Any) -> None:
    """The clients' memtx_vector functions (embed, recall_similar) are checked above only
    where memtx_vector is installed: without pgvector this test is skipped with the way to
    install it, and under CI (env CI set) that is a failure."""
    assert set(VECTOR_FUNCTIONS) <= set(SIGNATURES)
    missing = vector_missing(catalog)
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    assert has_vector(catalog)


def test_the_check_finds_a_disagreement(catalog: Any) -> None:
    """The comparison itself fails on a wrong type, a missing, extra or misplaced
    argument, and an absent one that is not pending."""
    assert check_signatures(catalog, {"gate": {"tx": "integer", "tool": "text"}}, {})
    assert check_signatures(catalog, {"gate": {"tx": "bigint"}}, {})
    assert check_signatures(catalog, {"gate": {"tool": "text", "tx": "bigint"}}, {})
    assert check_signatures(catalog, {"gate": {"tx": "bigint", "tool": "text", "force": "boolean"}}, {})
    assert check_signatures(catalog, {"gate": {"tx": "bigint", "tool": "text", "force": "boolean"}},
                            {"gate": ["force"]}) == []


def test_enum_labels_are_pg_enums(catalog: Any, node_tables: Dict[str, Any]) -> None:
    for typ, labels in ENUMS.items():
        actual = [r[0] for r in catalog.execute(
            "SELECT enumlabel FROM pg_catalog.pg_enum WHERE enumtypid = %s::regtype"
            " ORDER BY enumsortorder", (typ,))]
        assert list(labels) == actual, typ
        assert node_tables["ENUMS"][typ] == actual, typ
    assert set(node_tables["ENUMS"]) == set(ENUMS)


def test_result_columns_are_the_catalogs(catalog: Any, node_tables: Dict[str, Any]) -> None:
    for function, (row, node_shape) in SHAPES.items():
        mine = row.columns()
        assert mine == node_tables["COLUMNS"][node_shape], f"{function}: the clients differ"
        if function in VECTOR_FUNCTIONS and not has_vector(catalog):
            continue  # test_vector_functions_are_checked says so
        kind, columns = result_columns(catalog, function)
        if kind == "out":
            assert mine == columns, function
        else:
            assert set(mine) <= set(columns), (function, sorted(set(mine) - set(columns)))
    for table, row in TABLES.items():
        assert set(row.columns()) <= set(table_columns(catalog, f"memtx.{table}")), table
    assert set(node_tables["COLUMNS"]) == {shape for _, shape in SHAPES.values()}


def test_the_clients_call_the_same_functions_alike(node_tables: Dict[str, Any]) -> None:
    assert node_tables["SIGNATURES"] == SIGNATURES
    assert node_tables["PENDING"] == {k: list(v) for k, v in PENDING_ARGUMENTS.items()}


def test_error_tables_name_real_sqlstates() -> None:
    codes = errcodes()
    assert set(errors._BY_CODE) <= set(codes)
    assert set(errors._BY_CLASS) <= {c[:2] for c in codes}


def test_every_sqlstate_memtx_raises_has_its_error_class(node_tables: Dict[str, Any]) -> None:
    raised = raised_by_memtx()
    assert "42501" in raised and "22023" in raised  # the scan found memtx's errors
    for code in raised:
        cls = errors.error_class(code)
        if code in UNCLASSED:
            assert cls is errors.MemtxError, code
        else:
            assert cls is not errors.MemtxError, f"{code} maps to no specific error class"


def test_the_clients_map_every_sqlstate_alike(node_tables: Dict[str, Any]) -> None:
    differ = {code: (errors.error_class(code).__name__, node)
              for code, node in node_tables["errors"].items()
              if errors.error_class(code).__name__ != node}
    assert differ == {}
