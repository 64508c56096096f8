"""memtx.tool_specs (SPEC §15) against JSON Schema 2020-12 and the functions behind the tools.

Connects through the PG* environment, as a superuser, to a server with memtx
available, and works in a database of its own (memtx_tool_specs), made fresh
and dropped at the end.  For every format and every tool it checks that the
schema is a valid draft 2020-12 object schema whose ``required`` names only
properties, that sample arguments validate (and wrong ones do not), and then
calls the memtx function behind each tool with those same arguments by name:
a property that is not a named argument of the function, or a required list
that differs from the arguments without a default, fails here.
"""

import os

import jsonschema
import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb

FORMATS = {
    "openai": lambda t: (t["function"]["name"], t["function"]["parameters"]),
    "anthropic": lambda t: (t["name"], t["input_schema"]),
    "mcp": lambda t: (t["name"], t["inputSchema"]),
}

# Domain tools registered for the test: one of each reversibility.
DOMAIN_TOOLS = [("issue_refund", False, None), ("hold_order", True, "release_order")]

# The function behind each memory tool; tx and namespace are the runner's.
MEMORY_FUNCTIONS = {
    "memory_recall": "recall",
    "memory_read": "read",
    "memory_stage": "stage",
    "memory_commit": "commit",
    "memory_abort": "abort",
    "memory_revoke": "revoke",
    "memory_outcome": "outcome",
}
# what the runner supplies (tx, namespace) and what only a harness passes
# (outcome's agent: no agent-facing tool has an agent parameter, SPEC §15)
RUNNER_ARGS = {"tx", "namespace", "agent"}

# Arguments a model might send that the schema must refuse.
INVALID = {
    "memory_recall": [{}, {"query": "x", "k": 0}, {"query": "x", "k": 1001}, {"query": "x", "tier": "low"}],
    "memory_read": [{"entity": 42}, {"agent": "someone"}],
    "memory_stage": [
        {"entity": "a", "attribute": "b"},
        {"entity": "a", "attribute": "b", "value": 1, "kind": "tool_action"},
        {"entity": "a", "attribute": "b", "value": 1, "confidence": 1.5},
        {"entity": "a", "attribute": "b", "value": 1, "scope": "everyone"},
        {"entity": "a", "attribute": "b", "value": 1, "derived_from": ["7"]},
        {"entity": "a", "attribute": "b", "value": 1, "isolation": "raw_read"},
    ],
    "memory_commit": [{"tx": 1}],
    "memory_abort": [{"namespace": "other"}],
    "memory_revoke": [{}, {"record": "seven"}],
    "memory_outcome": [{}, {"proposal": ""}],
    "issue_refund": [{}, {"args": [1]}, {"args": {}, "effect_key": 3}],
}


DATABASE = "memtx_tool_specs"


@pytest.fixture(scope="module")
def db():
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(DATABASE)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    conn = psycopg.connect(dbname=DATABASE)
    conn.execute("SET client_min_messages = warning")
    conn.execute("CREATE EXTENSION memtx CASCADE")
    for name, reversible, compensator in DOMAIN_TOOLS:
        conn.execute("SELECT memtx.register_tool(%s, %s, %s)", (name, reversible, compensator))
    yield conn
    conn.close()
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(DATABASE)))


@pytest.fixture(scope="module")
def specs(db):
    return {f: db.execute("SELECT memtx.tool_specs(%s)", (f,)).fetchone()[0] for f in FORMATS}


def tools(specs, fmt):
    return dict(FORMATS[fmt](t) for t in specs[fmt])


def function_args(db, name):
    """The named arguments of memtx.NAME as (name, has_default, type), or None when absent."""
    row = db.execute(
        """SELECT p.proargnames[1:p.pronargs], p.pronargs - p.pronargdefaults,
                  array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) t)
             FROM pg_proc p WHERE p.pronamespace = 'memtx'::regnamespace AND p.proname = %s""",
        (name,),
    ).fetchall()
    if not row:
        return None
    assert len(row) == 1, f"memtx.{name} is overloaded"
    names, without_default, types = row[0]
    return [(n, i >= without_default, t) for i, (n, t) in enumerate(zip(names, types))]


def call(db, function, tx, args):
    """memtx.FUNCTION(tx => tx, name => value, ...) with each value cast to its argument's type."""
    types = {n: t for n, _, t in function_args(db, function)}
    params = {"tx": tx} if "tx" in types and tx is not None else {}
    params.update(args)
    named = sql.SQL(", ").join(
        sql.SQL("{} => {}::{}").format(sql.Identifier(n), sql.Placeholder(n), sql.SQL(types[n])) for n in params
    )
    values = {n: Jsonb(v) if types[n] == "jsonb" else v for n, v in params.items()}
    return db.execute(sql.SQL("SELECT * FROM memtx.{}({})").format(sql.Identifier(function), named), values).fetchall()


def test_formats_list_the_same_tools_in_order(specs):
    names = {f: [n for n in tools(specs, f)] for f in FORMATS}
    assert names["openai"] == names["anthropic"] == names["mcp"]
    assert names["openai"][:7] == list(MEMORY_FUNCTIONS)
    assert names["openai"][7:] == sorted(n for n, _, _ in DOMAIN_TOOLS)
    assert all(t["type"] == "function" for t in specs["openai"])


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_schema_is_a_2020_12_object_schema(specs, fmt):
    for name, schema in tools(specs, fmt).items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object", name
        assert set(schema["required"]) <= set(schema["properties"]), name
        assert not {"tier", "agent", "isolation"} & set(schema["properties"]), name


def test_memory_tools_mirror_their_functions(db, specs):
    """Properties are the named arguments but tx, namespace and agent; required are those without a default."""
    for tool, function in MEMORY_FUNCTIONS.items():
        args = function_args(db, function)
        if args is None:
            continue  # not in this build yet (recall, outcome)
        schema = tools(specs, "openai")[tool]
        named = {n for n, _, _ in args} - RUNNER_ARGS
        assert set(schema["properties"]) == named, tool
        assert set(schema["required"]) == {n for n, has_default, _ in args if not has_default} - RUNNER_ARGS, tool


def validate(specs, name, arguments):
    for fmt in FORMATS:
        jsonschema.Draft202012Validator(tools(specs, fmt)[name],
                                        format_checker=jsonschema.FormatChecker()).validate(arguments)


@pytest.mark.parametrize("name", sorted(INVALID))
def test_wrong_arguments_are_refused(specs, name):
    validator = jsonschema.Draft202012Validator(tools(specs, "openai")[name])
    for arguments in INVALID[name]:
        assert not validator.is_valid(arguments), (name, arguments)


def test_sample_arguments_validate_and_run(db, specs):
    """Each tool's sample arguments validate in every format and work as named arguments of its function."""
    me = db.execute("SELECT current_user").fetchone()[0]
    db.execute("SET LOCAL memtx.logical_now = '2026-03-01 12:00+00'")
    tx = call(db, "begin", None, {})[0][0]

    plain = {"entity": "customer:42", "attribute": "tier", "value": "gold", "readers": [me]}
    validate(specs, "memory_stage", plain)
    first = call(db, "stage", tx, plain)[0][0]

    full = {
        "entity": "customer:42", "attribute": "summary", "value": {"tier": "gold", "since": 2019},
        "kind": "summary", "source": "crm", "confidence": 0.9, "derived_from": [first],
        "scope": "private", "readers": [me], "writers": [me],
        "valid": "[2026-01-01T00:00:00Z,2026-07-01T00:00:00Z)", "observed_at": "2026-02-28T09:30:00Z",
    }
    validate(specs, "memory_stage", full)
    second = call(db, "stage", tx, full)[0][0]

    validate(specs, "memory_read", {"entity": "customer:42", "attribute": "tier"})
    assert [r[0] for r in call(db, "read", tx, {"entity": "customer:42", "attribute": "tier"})] == [first]
    validate(specs, "memory_read", {})

    if function_args(db, "recall") is not None:
        arguments = {"query": "gold", "k": 5, "entity_prefix": "customer:"}
        validate(specs, "memory_recall", arguments)
        assert first in [r[0] for r in call(db, "recall", tx, arguments)]

    validate(specs, "memory_commit", {})
    outcome = sorted(call(db, "commit", tx, {}))
    assert outcome == [(first, "committed", None), (second, "committed", None)], outcome

    for tool, arguments in [("issue_refund", {"args": {"order": 841}, "derived_from": [first], "effect_key": "refund-841"}),
                            ("hold_order", {"args": {"order": 841}})]:
        validate(specs, tool, arguments)
        row = call(db, "act", tx, {"tool": tool, **arguments})[0]
        assert row[0], (tool, row)

    validate(specs, "memory_revoke", {"record": first, "note": "the CRM row was stale"})
    assert call(db, "revoke", None, {"record": first, "note": "the CRM row was stale"}), "no repair rows"

    other = call(db, "begin", None, {})[0][0]
    call(db, "stage", other, plain)
    validate(specs, "memory_abort", {})
    assert call(db, "abort", other, {})

    if function_args(db, "outcome") is not None:
        validate(specs, "memory_outcome", {"proposal": "p-1"})
        assert call(db, "outcome", None, {"proposal": "p-1"}) == []


def test_memory_recall_offers_semantic_with_memtx_vector(specs):
    """SPEC §19: `semantic` (optional boolean) on memory_recall while memtx_vector is installed.

    pgvector is memtx_vector's dependency: without it the test is skipped with the way to
    install it, and under CI (env CI set) that counts as a failure.
    """
    for fmt in FORMATS:
        assert "semantic" not in tools(specs, fmt)["memory_recall"]["properties"], fmt
    with psycopg.connect(autocommit=True) as admin:
        available = admin.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'vector' "
            "AND string_to_array(split_part(default_version, '-', 1), '.')::int[] >= '{0,8,0}'").fetchall()
        if not available:
            reason = ("pgvector >= 0.8.0 is not installed; install it with apt install postgresql-15-pgvector "
                      "(the PostgreSQL project's apt repository) or bash scripts/deps.sh")
            if os.environ.get("CI"):
                pytest.fail(reason)
            pytest.skip(reason)
        database = DATABASE + "_vector"
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(database)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
        try:
            with psycopg.connect(dbname=database, autocommit=True) as conn:
                conn.execute("SET client_min_messages = warning")
                conn.execute("CREATE EXTENSION memtx_vector CASCADE")
                named = {n for n, _, _ in function_args(conn, "recall")} - RUNNER_ARGS
                for fmt in FORMATS:
                    listed = {fmt: conn.execute("SELECT memtx.tool_specs(%s)", (fmt,)).fetchone()[0]}
                    schema = tools(listed, fmt)["memory_recall"]
                    jsonschema.Draft202012Validator.check_schema(schema)
                    assert schema["properties"]["semantic"]["type"] == "boolean", fmt
                    assert "semantic" not in schema["required"], fmt
                    assert set(schema["properties"]) - {"semantic"} == named, fmt
                    validator = jsonschema.Draft202012Validator(schema)
                    assert validator.is_valid({"query": "refund", "semantic": True}), fmt
                    assert not validator.is_valid({"query": "refund", "semantic": "yes"}), fmt
        finally:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(database)))
