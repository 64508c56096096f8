#!/usr/bin/python3
"""Generates sql/memtx_router.sql, the router extension, from a live memtx catalog.

    /usr/bin/python3 scripts/gen-router.py [--output FILE] [--check FILE]

Connects with the PG* environment to a database where memtx is installed
(--dbname to name another), reads schema memtx from pg_proc, pg_type and
pg_attribute, and writes the catalog of the companion extension memtx_router
(SPEC §20): schema memtx on a router database, with every agent-facing and
harness function of memtx under the same name, arguments, defaults and
result, each running on the node its call belongs to through PL/Proxy, the
types those functions carry (enums with the nodes' labels, the row types of
records, rollback_log, receipt_check, ...) and the views stats, in_flight and
review_queue over every node.  `make router-sql` runs it on a throwaway
cluster; --check FILE compares instead of writing and exits 1 when FILE is
stale (the CI drift test).

Every function of schema memtx must be named in ROUTES (how a call is
routed) or in NOT_ROUTED (why it is not): a function the table does not know
stops the generator, so a new memtx function cannot be left without a router
twin unnoticed.  Functions of companion extensions (memtx_vector) follow the
same table; one whose signature needs a type the router does not carry (e.g.
pgvector's vector) is left out with that reason, listed by
memtx_router.unrouted().
"""

import argparse
import difflib
import os
import sys

import psycopg

CLUSTER = "memtx_nodes"
NODE_VAR = "memtx_router_node"     # never the name of a memtx argument (checked)

# How each function of schema memtx is routed (SPEC §20).
#   ("namespace", arg)         the node of the namespace the call names (NULL: node 0,
#                              which gives memtx's own argument error)
#   ("id", arg)                the node encoded in a transaction or record id
#   ("all", combine)           every node in turn; combine: void, union, max, sum
#   ("namespace_or_all", arg, combine)
#                              the namespace's node, or every node when it is NULL
#                              (when the function has no such argument: every node)
#   ("any",)                   the lowest-numbered node that answers (registries and
#                              settings every node holds alike)
#   ("local",)                 the same SQL function on the router (pure placement)
ROUTES = {
    "begin": ("namespace", "namespace"),
    "propose": ("namespace", "namespace"),
    "outcome": ("namespace", "namespace"),
    "lookup": ("namespace", "namespace"),
    "search": ("namespace", "namespace"),
    "read_as_of": ("namespace", "namespace"),
    "stage": ("id", "tx"),
    "stage_many": ("id", "tx"),
    "commit": ("id", "tx"),
    "abort": ("id", "tx"),
    "read": ("id", "tx"),
    "recall": ("id", "tx"),
    "gate": ("id", "tx"),
    "act": ("id", "tx"),
    "restore": ("id", "tx"),
    "revoke": ("id", "record"),
    "resolve": ("id", "record"),
    "erase": ("id", "record"),
    "lineage": ("id", "record"),
    "lineage_dot": ("id", "record"),
    "state_at": ("id", "record"),
    "ancestors": ("id", "record"),
    "descendants": ("id", "record"),
    "register_source": ("all", "void"),
    "register_tool": ("all", "void"),
    "set_role_tier": ("all", "void"),
    "grant_namespace": ("all", "void"),
    "revoke_namespace": ("all", "void"),
    "fence": ("all", "max"),
    "unfence": ("all", "void"),
    "writer_epoch": ("all", "max"),
    "expire_transactions": ("namespace_or_all", "namespace", "union"),
    "check_invariants": ("namespace_or_all", "namespace", "union"),
    "verify_receipts": ("namespace_or_all", "namespace", "union"),
    "chain_receipts": ("namespace_or_all", "namespace", "sum"),
    "tool_specs": ("any",),
    "now": ("any",),
    "is_harness": ("any",),
    "node_of": ("local",),
    "id_node": ("local",),
    # memtx_vector (SPEC §19), when its functions are in the catalog read
    "recall_similar": ("id", "tx"),
    "embed": ("id", "record"),
    "register_embedding_model": ("all", "void"),
}

NOT_ROUTED = {
    "set_node": "node administration: each node sets its own number, on the node",
    "node": "node administration: a node's own number (memtx_router.check_nodes compares it)",
    "enum_labels": "the enum labels compiled into a node's library (catalog lint)",
    "value_digest": "internal: index expression and receipt digest",
    "slot_digest": "internal: index expression",
    "slot_key": "internal: index expression",
    "can_read": "internal: row-level security predicate",
    "is_active": "internal: protocol predicate inlined into node queries",
    "rivals": "internal: protocol predicate inlined into node queries",
    "head_set": "internal: the head set of a slot (SPEC §10), inlined into node queries",
    "is_view_kind": "internal: protocol predicate inlined into node queries",
    "legal_transition": "internal: the lifecycle relation",
    "lifecycle_guard": "internal: trigger",
    "happened_before": "internal: snapshot predicate",
    "is_tool_name": "internal: tool name rule",
    "recall_document": "internal: index expression",
    "receipts_guard": "internal: trigger",
    "value_salted_digest": "internal: receipt digest",
    "receipt_columns": "internal: receipt body",
    "receipt_ids": "internal: the record ids a receipt body lists",
    "ancestors_of": "internal: the set-wise walk a node's checks run (ancestors, routed by record, is the API)",
    "descendants_of": "internal: the set-wise walk a node's checks run (descendants, routed by record, is the API)",
    "history_write": "internal: trigger",
    "dispositions": "internal: the checker's list of dispositions",
    "receipt_problems": "internal: the receipt checker",
    "reference_check": "internal: trigger",
    "reference_check_inserted": "internal: trigger",
    "reference_guard": "internal: trigger",
    "copying_into": "internal: trigger helper",
    "lease_expired": "internal: the expiry predicate of a node's transactions",
    "require_namespace_reader": "internal: the membership check read_as_of makes on its node",
    "read_set_lost_before": "per node: a node's own crash point, in its own transaction ids (ask the node)",
    "read_set_usage": "per node: a node's own shared read-set buffer (ask the node)",
}

# Views of schema memtx on the router: union of every node's rows, or the
# sum of every node's counters (bigint columns summed, jsonb objects of
# counts merged key by key), or local: the same view as on the nodes (a
# constant list, the same on every node).
VIEWS = {"stats": "sum", "in_flight": "union", "review_queue": "union", "invariants": "local",
         "retracted": "union"}


class GenError(Exception):
    pass


def q(ident):
    """Quote an identifier as PostgreSQL would (quote_ident)."""
    import re
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", ident) and ident not in RESERVED:
        return ident
    return '"' + ident.replace('"', '""') + '"'


RESERVED = set()


def literal(s):
    return "'" + s.replace("'", "''") + "'"


# --------------------------------------------------------------------- catalog

def read_catalog(conn):
    conn.execute("SET search_path = pg_catalog, pg_temp")
    global RESERVED
    RESERVED = {r[0] for r in conn.execute(
        "SELECT word FROM pg_get_keywords() WHERE catcode IN ('R', 'T', 'C')")}
    version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'memtx'").fetchone()
    if not version:
        raise GenError("memtx is not installed in this database")
    funcs = []
    for row in conn.execute("""
        SELECT p.oid, p.proname, p.oid::regprocedure::text, p.proretset, p.prorettype,
               format_type(p.prorettype, NULL), p.proisstrict, l.lanname,
               coalesce(p.proargnames, '{}'), coalesce(p.proargmodes::text[], '{}'),
               coalesce(p.proallargtypes, p.proargtypes::oid[]),
               ARRAY(SELECT format_type(t, NULL)
                       FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) WITH ORDINALITY u(t, i)
                      ORDER BY i),
               ARRAY(SELECT coalesce(pg_get_function_arg_default(p.oid, i::int), '')
                       FROM generate_series(1, coalesce(array_length(p.proallargtypes, 1), p.pronargs)) i),
               obj_description(p.oid, 'pg_proc'),
               coalesce((SELECT e.extname FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
                          WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
                            AND d.refclassid = 'pg_extension'::regclass), ''),
               CASE WHEN l.lanname = 'sql' AND p.prosqlbody IS NOT NULL THEN pg_get_functiondef(p.oid) END,
               p.prorettype = 'trigger'::regtype
          FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
         WHERE p.pronamespace = 'memtx'::regnamespace
         ORDER BY p.proname, p.oid::regprocedure::text"""):
        (oid, name, regproc, retset, rettype, rettype_name, strict, lang, argnames, argmodes,
         argtypes, argtype_names, defaults, comment, ext, funcdef, is_trigger) = row
        n = len(argtypes)
        args = []
        for i in range(n):
            args.append({
                "mode": argmodes[i] if argmodes else "i",
                "name": argnames[i] if i < len(argnames) else "",
                "type": argtypes[i],
                "type_name": argtype_names[i],
                "default": defaults[i] or None,
            })
        funcs.append({"oid": oid, "name": name, "regproc": regproc, "retset": retset,
                      "rettype": rettype, "rettype_name": rettype_name, "strict": strict,
                      "lang": lang, "args": args, "comment": comment, "extension": ext,
                      "funcdef": funcdef, "is_trigger": is_trigger})
    types = {}
    for oid, name, typtype, relid, nsp, elem, ext in conn.execute("""
        SELECT t.oid, format_type(t.oid, NULL), t.typtype, t.typrelid, n.nspname,
               CASE WHEN t.typcategory = 'A' THEN t.typelem ELSE 0 END,
               coalesce((SELECT e.extname FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
                          WHERE d.objid IN (t.oid, t.typrelid) AND d.deptype = 'e'
                            AND d.refclassid = 'pg_extension'::regclass LIMIT 1), '')
          FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace"""):
        types[oid] = {"oid": oid, "name": name, "typtype": typtype, "relid": relid, "nsp": nsp,
                      "elem": elem, "extension": ext}
    for t in types.values():
        if t["nsp"] == "memtx" and t["typtype"] == "e":
            t["labels"] = [r[0] for r in conn.execute(
                "SELECT enumlabel FROM pg_enum WHERE enumtypid = %s ORDER BY enumsortorder", (t["oid"],))]
        elif t["nsp"] == "memtx" and t["typtype"] == "c":
            t["attrs"] = [{"name": r[0], "type": r[1], "type_name": r[2]} for r in conn.execute(
                "SELECT attname, atttypid, format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped ORDER BY attnum", (t["relid"],))]
            t["comment"] = conn.execute("SELECT obj_description(%s, 'pg_type')", (t["oid"],)).fetchone()[0]
    views = {}
    for name, relid in conn.execute(
            "SELECT c.relname, c.oid FROM pg_class c WHERE c.relnamespace = 'memtx'::regnamespace "
            "AND c.relkind = 'v' ORDER BY c.relname"):
        views[name] = {
            "name": name,
            "attrs": [{"name": r[0], "type": r[1], "type_name": r[2]} for r in conn.execute(
                "SELECT attname, atttypid, format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped ORDER BY attnum", (relid,))],
            "comment": conn.execute("SELECT obj_description(%s, 'pg_class')", (relid,)).fetchone()[0],
            "definition": conn.execute("SELECT pg_get_viewdef(%s, true)", (relid,)).fetchone()[0],
        }
    return version[0], funcs, types, views


# ------------------------------------------------------------------ type needs

def type_closure(type_oids, types):
    """The memtx types a set of types needs, dependencies first; raises for a
    type the router cannot carry (one of another extension or schema)."""
    order, seen = [], set()

    def visit(oid):
        t = types[oid]
        if t["elem"]:
            return visit(t["elem"])
        if t["nsp"] == "pg_catalog":
            return
        if t["nsp"] != "memtx" or t["typtype"] not in ("e", "c"):
            raise GenError("type %s%s" % (t["name"], " of extension %s" % t["extension"] if t["extension"] else ""))
        if oid in seen:
            return
        seen.add(oid)
        for a in t.get("attrs", []):
            visit(a["type"])
        order.append(oid)

    for oid in type_oids:
        visit(oid)
    return order


def function_types(f):
    return [a["type"] for a in f["args"]] + [f["rettype"]]


# ------------------------------------------------------------------- emitting

def in_args(f):
    return [a for a in f["args"] if a["mode"] in ("i", "b", "v")]


def out_args(f):
    return [a for a in f["args"] if a["mode"] in ("o", "b", "t")]


def signature(f, defaults=True, extra=None):
    """The argument list of f (IN with defaults, OUT), as CREATE FUNCTION takes it."""
    parts = [] if extra is None else [extra]
    for a in f["args"]:
        if a["mode"] == "t":
            continue
        mode = {"i": "", "o": "OUT ", "b": "INOUT ", "v": "VARIADIC "}[a["mode"]]
        s = "%s%s %s" % (mode, q(a["name"]), a["type_name"])
        if defaults and a["default"] is not None:
            s += " DEFAULT " + a["default"]
        parts.append(s)
    return ", ".join(parts)


def in_signature(f, extra=None):
    """IN arguments only (no defaults, no OUT): a helper's argument list."""
    parts = [] if extra is None else [extra]
    parts += ["%s %s" % (q(a["name"]), a["type_name"]) for a in in_args(f)]
    return ", ".join(parts)


def result(f):
    tcols = [a for a in f["args"] if a["mode"] == "t"]
    if tcols:
        return "TABLE (%s)" % ", ".join("%s %s" % (q(a["name"]), a["type_name"]) for a in tcols)
    return ("SETOF " if f["retset"] else "") + f["rettype_name"]


def helper_out(f):
    """OUT arguments of a helper (for functions with OUT parameters but no TABLE)."""
    return ["OUT %s %s" % (q(a["name"]), a["type_name"]) for a in f["args"] if a["mode"] == "o"]


def helper_signature(f, extra=None):
    return ", ".join([in_signature(f, extra)] + helper_out(f)).strip(", ")


def positional(f, offset=0):
    return ", ".join("$%d" % (i + 1 + offset) for i in range(len(in_args(f))))


def typed_positional(f, offset=0):
    return ", ".join("$%d::%s" % (i + 1 + offset, a["type_name"]) for i, a in enumerate(in_args(f)))


def arg_index(f, name):
    for i, a in enumerate(in_args(f)):
        if a["name"] == name:
            return i + 1
    return None


def kind_of(f):
    if f["retset"]:
        return "set"
    if [a for a in f["args"] if a["mode"] == "o"]:
        return "record"
    if f["rettype_name"] == "void":
        return "void"
    return "scalar"


ERRVARS = ("    memtx_router_state text;\n    memtx_router_message text;\n"
           "    memtx_router_detail text;\n    memtx_router_hint text;\n")
CATCH = ("EXCEPTION WHEN OTHERS THEN\n"
         "{i}    GET STACKED DIAGNOSTICS memtx_router_state = RETURNED_SQLSTATE, memtx_router_message = MESSAGE_TEXT,\n"
         "{i}        memtx_router_detail = PG_EXCEPTION_DETAIL, memtx_router_hint = PG_EXCEPTION_HINT;\n"
         "{i}    PERFORM memtx_router.raise_node_error({node}, memtx_router_state, memtx_router_message,\n"
         "{i}                                          memtx_router_detail, memtx_router_hint);\n")
CALLER = "    IF session_user <> current_user THEN PERFORM memtx_router.check_caller(); END IF;\n"


def call_stmt(f, target, args, indent):
    k = kind_of(f)
    call = "%s(%s)" % (target, args)
    if k == "set":
        return "%sRETURN QUERY SELECT * FROM %s;\n" % (indent, call)
    if k == "record":
        outs = ", ".join(q(a["name"]) for a in f["args"] if a["mode"] == "o")
        return "%sSELECT * INTO %s FROM %s;\n" % (indent, outs, call)
    if k == "void":
        return "%sPERFORM %s;\n" % (indent, call)
    return "%sRETURN %s;\n" % (indent, call)


def emit_single(f, route, out):
    """A call that runs on one node, chosen from its own arguments."""
    kind, argname = route
    idx = arg_index(f, argname)
    if idx is None:
        raise GenError("%s: routing argument %s is missing" % (f["regproc"], argname))
    fn = "namespace_route" if kind == "namespace" else "id_route"
    helper = "memtx_router.%s" % q(f["name"])
    out.append("CREATE FUNCTION %s(%s)\n    RETURNS %s\n    LANGUAGE plproxy VOLATILE\nAS $plproxy$\n"
               "    CLUSTER '%s';\n    RUN ON memtx_router.%s(%s);\n    TARGET memtx.%s;\n$plproxy$;\n"
               % (helper, helper_signature(f), helper_result(f), CLUSTER, fn, q(argname), q(f["name"])))
    out.append("COMMENT ON FUNCTION %s(%s) IS %s;\n" % (
        helper, ", ".join(a["type_name"] for a in in_args(f)),
        literal("the remote call of memtx.%s, on the node of its %s" % (f["name"], argname))))
    k = kind_of(f)
    body = ("DECLARE\n" + ERRVARS + "BEGIN\n" + CALLER + "    BEGIN\n"
            + call_stmt(f, helper, positional(f), "        ")
            + ("        RETURN;\n" if k in ("set", "record", "void") else "")
            + "    " + CATCH.format(i="    ", node="memtx_router.%s($%d)" % (fn, idx))
            + "    END;\n" + ("    RETURN NULL;\n" if k == "scalar" else "") + "END\n")
    emit_wrapper(f, body, "runs on the node of its %s" % argname, out)


def helper_result(f):
    if [a for a in f["args"] if a["mode"] == "o"] and not f["retset"]:
        return "record"
    return result(f)


def emit_on(f, out):
    """memtx_router.F_on(node, args): the remote call of F on node."""
    helper = "memtx_router.%s" % q(f["name"] + "_on")
    out.append("CREATE FUNCTION %s(%s)\n    RETURNS %s\n    LANGUAGE plproxy VOLATILE\nAS $plproxy$\n"
               "    CLUSTER '%s';\n    RUN ON $1;\n    SELECT * FROM memtx.%s(%s);\n$plproxy$;\n"
               % (helper, helper_signature(f, "%s integer" % NODE_VAR), helper_result(f), CLUSTER,
                  q(f["name"]), typed_positional(f, 1)))
    out.append("COMMENT ON FUNCTION %s(%s) IS %s;\n" % (
        helper, ", ".join(["integer"] + [a["type_name"] for a in in_args(f)]),
        literal("the remote call of memtx.%s on one node" % f["name"])))
    return helper


def emit_each_node(f, route, out):
    """A store-wide call: every node in turn (or only the namespace's, when
    given), each atomically; the union or a combination of the answers."""
    if route[0] == "all":
        combine, nsidx = route[1], None
    else:
        combine, nsidx = route[2], arg_index(f, route[1])
    k = kind_of(f)
    expect = {"void": "void", "union": "set", "max": "scalar", "sum": "scalar"}[combine]
    if k != expect:
        raise GenError("%s: combine %s does not fit a %s result" % (f["regproc"], combine, k))
    helper = emit_on(f, out)
    args = "%s, %s" % (NODE_VAR, positional(f)) if in_args(f) else NODE_VAR
    decl = "DECLARE\n" + ERRVARS + "    %s integer;\n" % NODE_VAR
    if combine in ("max", "sum"):
        decl += "    memtx_router_value %s;\n    memtx_router_result %s;\n" % (f["rettype_name"], f["rettype_name"])
    if nsidx is None:
        nodes = "0 .. memtx_router.node_count() - 1"
        body_nodes = "    FOR %s IN %s LOOP\n" % (NODE_VAR, nodes)
    else:
        body_nodes = ("    FOR %s IN SELECT n FROM pg_catalog.generate_series(0, memtx_router.node_count() - 1) n\n"
                      "               WHERE $%d IS NULL OR n = memtx_router.node_index(memtx_router.namespace_route($%d)) LOOP\n"
                      % (NODE_VAR, nsidx, nsidx))
    body = decl + "BEGIN\n" + CALLER + body_nodes + "        BEGIN\n"
    call = "%s(%s)" % (helper, args)
    if combine == "void":
        body += "            PERFORM %s;\n" % call
    elif combine == "union":
        body += "            RETURN QUERY SELECT * FROM %s;\n" % call
    else:
        body += "            memtx_router_value := %s;\n" % call
        op = "GREATEST(memtx_router_result, memtx_router_value)" if combine == "max" \
            else "coalesce(memtx_router_result, 0) + memtx_router_value"
        body += "            memtx_router_result := %s;\n" % op
    body += "        " + CATCH.format(i="        ", node=NODE_VAR) + "        END;\n    END LOOP;\n"
    if combine in ("max", "sum"):
        body += "    RETURN memtx_router_result;\n"
    else:
        body += "    RETURN;\n"
    body += "END\n"
    how = {"void": "runs on every node in turn", "union": "runs on every node in turn; the union of their rows",
           "max": "runs on every node in turn; the greatest answer", "sum": "runs on every node in turn; the sum"}[combine]
    if nsidx is not None:
        how = "runs on the node of its namespace; when it is NULL, " + how.replace("runs ", "")
    emit_wrapper(f, body, how, out)


def emit_any(f, out):
    """A read of what every node holds alike: the lowest-numbered node that answers."""
    helper = emit_on(f, out)
    args = "%s, %s" % (NODE_VAR, positional(f)) if in_args(f) else NODE_VAR
    k = kind_of(f)
    body = ("DECLARE\n" + ERRVARS + "    %s integer;\n" % NODE_VAR + "BEGIN\n" + CALLER
            + "    FOR %s IN 0 .. memtx_router.node_count() - 1 LOOP\n" % NODE_VAR + "        BEGIN\n"
            + call_stmt(f, helper, args, "            ")
            + ("            RETURN;\n" if k in ("set", "record", "void") else "")
            + "        EXCEPTION WHEN OTHERS THEN\n"
            "            GET STACKED DIAGNOSTICS memtx_router_state = RETURNED_SQLSTATE, memtx_router_message = MESSAGE_TEXT,\n"
            "                memtx_router_detail = PG_EXCEPTION_DETAIL, memtx_router_hint = PG_EXCEPTION_HINT;\n"
            "            -- a node that cannot be reached: ask the next one\n"
            "            IF %s < memtx_router.node_count() - 1\n"
            "               AND memtx_router.is_connection_failure(memtx_router_state, memtx_router_message) THEN\n"
            "                CONTINUE;\n            END IF;\n"
            "            PERFORM memtx_router.raise_node_error(%s, memtx_router_state, memtx_router_message,\n"
            "                                                  memtx_router_detail, memtx_router_hint);\n"
            "        END;\n    END LOOP;\n" % (NODE_VAR, NODE_VAR)
            + ("    RETURN NULL;\n" if k == "scalar" else "    RETURN;\n") + "END\n")
    emit_wrapper(f, body, "answered by the lowest-numbered node that can be reached", out)


def emit_wrapper(f, body, how, out):
    out.append("CREATE FUNCTION memtx.%s(%s)\n    RETURNS %s\n    LANGUAGE plpgsql VOLATILE%s\nAS $body$\n%s$body$;\n"
               % (q(f["name"]), signature(f), result(f) if not helper_out(f) or f["retset"] else "record",
                  " STRICT" if f["strict"] else "", body))
    comment = f["comment"] or ""
    out.append("COMMENT ON FUNCTION memtx.%s(%s) IS %s;\n\n" % (
        q(f["name"]), ", ".join(a["type_name"] for a in in_args(f)),
        literal("%s (router: %s)" % (comment, how) if comment else "router: %s" % how)))


def emit_local(f, out):
    if not f["funcdef"]:
        raise GenError("%s: only a SQL-standard function can be copied to the router" % f["regproc"])
    text = f["funcdef"].replace("CREATE OR REPLACE FUNCTION", "CREATE FUNCTION", 1).rstrip()
    out.append(text + ";\n")
    out.append("COMMENT ON FUNCTION memtx.%s(%s) IS %s;\n\n" % (
        q(f["name"]), ", ".join(a["type_name"] for a in in_args(f)),
        literal("%s (router: the same function as on the nodes)" % (f["comment"] or ""))))


def emit_type(t, out):
    if t["typtype"] == "e":
        out.append("CREATE TYPE %s AS ENUM (%s);\n" % (t["name"], ", ".join(literal(lab) for lab in t["labels"])))
        out.append("COMMENT ON TYPE %s IS %s;\n" % (t["name"], literal("the labels of the nodes' %s" % t["name"])))
    else:
        cols = ",\n".join("    %s %s" % (q(a["name"]), a["type_name"]) for a in t["attrs"])
        out.append("CREATE TYPE %s AS (\n%s\n);\n" % (t["name"], cols))
        out.append("COMMENT ON TYPE %s IS %s;\n" % (t["name"], literal("the row type of the nodes' %s" % t["name"])))


def emit_view(v, how, out):
    cols = v["attrs"]
    if how == "local":
        out.append("CREATE VIEW memtx.%s (%s) AS\n%s\n" % (
            q(v["name"]), ", ".join(q(c["name"]) for c in cols), v["definition"].rstrip()))
        out.append("COMMENT ON VIEW memtx.%s IS %s;\n\n" % (q(v["name"]), literal(
            "%s (router: the same as on the nodes)" % (v["comment"] or ""))))
        return
    for c in cols:
        if c["name"] == "node":
            raise GenError("view memtx.%s has a column named node" % v["name"])
    tcols = ", ".join("%s %s" % (q(c["name"]), c["type_name"]) for c in cols)
    on = "memtx_router.%s" % q(v["name"] + "_on")
    out.append("CREATE FUNCTION %s(%s integer)\n    RETURNS TABLE (%s)\n    LANGUAGE plproxy VOLATILE\nAS $plproxy$\n"
               "    CLUSTER '%s';\n    RUN ON $1;\n    SELECT * FROM memtx.%s;\n$plproxy$;\n"
               % (on, NODE_VAR, tcols, CLUSTER, q(v["name"])))
    out.append("COMMENT ON FUNCTION %s(integer) IS %s;\n" % (on, literal("the rows of memtx.%s on one node" % v["name"])))
    every = "memtx_router.%s" % q("node_" + v["name"])
    out.append("CREATE FUNCTION %s()\n    RETURNS TABLE (node integer, %s)\n    LANGUAGE plpgsql VOLATILE\nAS $body$\n"
               "DECLARE\n%s    %s integer;\nBEGIN\n%s    FOR %s IN 0 .. memtx_router.node_count() - 1 LOOP\n        BEGIN\n"
               "            RETURN QUERY SELECT %s, v.* FROM %s(%s) v;\n        %s        END;\n    END LOOP;\nEND\n$body$;\n"
               % (every, tcols, ERRVARS, NODE_VAR, CALLER, NODE_VAR, NODE_VAR, on, NODE_VAR,
                  CATCH.format(i="        ", node=NODE_VAR), ))
    out.append("COMMENT ON FUNCTION %s() IS %s;\n" % (
        every, literal("the rows of memtx.%s of every node, with the node's number" % v["name"])))
    if how == "union":
        sel = "SELECT %s FROM %s() n" % (", ".join("n.%s" % q(c["name"]) for c in cols), every)
    else:
        parts = []
        for c in cols:
            if c["type_name"] == "bigint":
                parts.append("(SELECT coalesce(sum(n.%s), 0) FROM per_node n)::bigint AS %s" % (q(c["name"]), q(c["name"])))
            elif c["type_name"] == "jsonb":
                parts.append("(SELECT coalesce(pg_catalog.jsonb_object_agg(s.key, s.n), '{}'::jsonb) FROM "
                             "(SELECT e.key, sum(e.value::bigint)::bigint AS n FROM per_node p, "
                             "pg_catalog.jsonb_each_text(p.%s) e GROUP BY e.key) s) AS %s" % (q(c["name"]), q(c["name"])))
            else:
                raise GenError("view memtx.%s: no sum for column %s of type %s" % (v["name"], c["name"], c["type_name"]))
        sel = "WITH per_node AS MATERIALIZED (SELECT * FROM %s())\nSELECT %s" % (every, ",\n       ".join(parts))
    out.append("CREATE VIEW memtx.%s WITH (security_invoker = true) AS\n%s;\n" % (q(v["name"]), sel))
    out.append("COMMENT ON VIEW memtx.%s IS %s;\n\n" % (q(v["name"]), literal(
        "%s (router: %s)" % (v["comment"] or "", "every node's rows" if how == "union" else "summed over every node"))))


# ------------------------------------------------------------------- the file

HEADER = """/*
 * memtx_router: memtx across nodes behind PL/Proxy (SPEC §20).
 *
 * GENERATED by scripts/gen-router.py from the catalog of memtx %(version)s: do not
 * edit; after a change to memtx's functions run `make router-sql` and commit
 * the result (test/router/run fails on a stale file).
 *
 * Installed in a router database that holds no memtx data, next to PL/Proxy's
 * SQL/MED cluster memtx_nodes (CREATE SERVER memtx_nodes FOREIGN DATA WRAPPER
 * plproxy OPTIONS (p0 '...', p1 '...'), user mappings, USAGE granted), whose
 * partition i is a memtx node that ran memtx.set_node(i).  Schema memtx holds
 * every agent-facing and harness function of memtx under the same name,
 * arguments, defaults and result, and the types they carry (enums with the
 * nodes' labels, the row types of the tables they return).  Each is a
 * PL/pgSQL function that runs the call on its node through a PL/Proxy
 * function of schema memtx_router:
 *   - a call that names a namespace runs on node memtx.node_of(namespace) %% N;
 *   - a call that names a transaction or record runs on the node in the id's
 *     top bits (memtx.id_node);
 *   - a NULL or malformed routing argument goes to node 0, whose memtx gives
 *     its own argument error;
 *   - store-wide calls (registries, fence, unfence, namespace grants, expiry,
 *     the checkers without a namespace) run on every node in turn, each
 *     atomically, and return the union (or the greatest epoch, or the sum);
 *     they are idempotent: one that failed on a node (the error names it)
 *     is repeated.
 * A routed call commits on its node on its own: the client's ROLLBACK,
 * READ ONLY or isolation level on the router does not reach it.  PL/Proxy
 * logs in to the node as the calling role, so §7 and row-level security hold
 * there as on one server; no session setting travels with the call.
 *
 * Errors: a node's error reaches the client with the node's SQLSTATE,
 * message, detail and hint (PL/Proxy's prefixes removed); a node that cannot
 * be reached is 08001 "memtx node N is unreachable" (nothing was sent), a
 * connection that failed during the call is 08006 "memtx node N failed
 * during the call" (the call may have taken effect).  No function here is
 * SECURITY DEFINER: the node must see the caller.
 */
\\echo Use "CREATE EXTENSION memtx_router" to load this file. \\quit

CREATE SCHEMA memtx;
COMMENT ON SCHEMA memtx IS 'memtx through a router: every call runs on the memtx node it belongs to (memtx_router)';
GRANT USAGE ON SCHEMA memtx TO PUBLIC;
CREATE SCHEMA memtx_router;
COMMENT ON SCHEMA memtx_router IS 'memtx_router: the remote calls, routing and checks behind schema memtx';
GRANT USAGE ON SCHEMA memtx_router TO PUBLIC;

"""

HELPERS = r"""/* ----------------------------------------------------------------------
 * Routing
 */

-- The number of nodes: the partitions p0, p1, ... of the SQL/MED cluster.
CREATE FUNCTION memtx_router.node_count() RETURNS integer
    LANGUAGE plpgsql STABLE
AS $body$
DECLARE
    n integer;
BEGIN
    SELECT count(*) INTO n
      FROM pg_catalog.pg_foreign_server s, pg_catalog.pg_options_to_table(s.srvoptions) o
     WHERE s.srvname = 'memtx_nodes' AND o.option_name ~ '^p[0-9]+$';
    IF n = 0 THEN
        RAISE EXCEPTION 'the router has no memtx nodes'
            USING ERRCODE = '55000',
                  HINT = 'Create the cluster: CREATE SERVER memtx_nodes FOREIGN DATA WRAPPER plproxy OPTIONS (p0 ''...'', p1 ''...'').';
    END IF;
    RETURN n;
END
$body$;
COMMENT ON FUNCTION memtx_router.node_count() IS 'the number of memtx nodes: the partitions of the SQL/MED cluster memtx_nodes';

-- What PL/Proxy's RUN ON gets: the namespace's placement hash (masked with
-- N - 1 by PL/Proxy), 0 for NULL so node 0 gives memtx's own error.
CREATE FUNCTION memtx_router.namespace_route(namespace text) RETURNS integer
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN coalesce(memtx.node_of(namespace), 0);
COMMENT ON FUNCTION memtx_router.namespace_route(text) IS 'the routing value of a namespace: memtx.node_of, 0 for NULL';

-- The node in an id's top bits; 0 for NULL, 0 and negative ids.
CREATE FUNCTION memtx_router.id_route(id bigint) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN coalesce(memtx.id_node(id), 0);
COMMENT ON FUNCTION memtx_router.id_route(bigint) IS 'the routing value of a transaction or record id: memtx.id_node, 0 for ids no node allocates';

-- The node a routing value lands on (what PL/Proxy computes).
CREATE FUNCTION memtx_router.node_index(route integer) RETURNS integer
    LANGUAGE sql STABLE
    RETURN route & (memtx_router.node_count() - 1);
COMMENT ON FUNCTION memtx_router.node_index(integer) IS 'the node a routing value runs on: value & (N - 1)';

-- The node a namespace lives on.
CREATE FUNCTION memtx_router.namespace_node(namespace text) RETURNS integer
    LANGUAGE sql STABLE
    RETURN memtx_router.node_index(memtx_router.namespace_route(namespace));
COMMENT ON FUNCTION memtx_router.namespace_node(text) IS 'the node a namespace lives on';

-- PL/Proxy logs in to the node as current_user.  A session whose login role
-- is not the role it acts as would write on the node under that role's own
-- login, and a fence of the login role (SPEC §17) would not hold: through
-- the router only a superuser session may act as another role.
CREATE FUNCTION memtx_router.check_caller() RETURNS void
    LANGUAGE plpgsql STABLE
AS $body$
BEGIN
    IF session_user <> current_user
       AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = session_user) THEN
        RAISE EXCEPTION 'memtx through a router runs as the role the session logged in as'
            USING ERRCODE = '42501',
                  DETAIL = pg_catalog.format('The session logged in as %I and acts as %I.', session_user, current_user),
                  HINT = 'Log in to the router as the agent''s own role (PL/Proxy logs in to the node as the calling role).';
    END IF;
END
$body$;
COMMENT ON FUNCTION memtx_router.check_caller() IS 'refuses a non-superuser session acting as a role other than its login role (the node would not see the login role)';

-- Whether an error is PL/Proxy's own failure to reach a node or to finish
-- a call on it (a lost connection, a node that shut down): not a node's answer.
CREATE FUNCTION memtx_router.is_connection_failure(sqlstate text, message text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    RETURN (sqlstate = 'XX000'
            AND message ~ '^PL/Proxy function [^ ]+: (\[[^]]*\] (PQ[A-Za-z]+|double result)|Remote error|connect timeout|query timeout|Lost result|Unfinished connection)')
        OR message ~ '^[^ ]+\([0-9]+\): \[[^]]*\] REMOTE (FATAL|PANIC): ';
COMMENT ON FUNCTION memtx_router.is_connection_failure(text, text) IS 'whether an error is a failure to reach a node or to finish a call on it';

-- Re-raises an error of a routed call: a node's own error as the node gave
-- it (PL/Proxy's prefixes removed), a failure to reach the node as 08001, a
-- connection that failed during the call as 08006, naming the node.
CREATE FUNCTION memtx_router.raise_node_error(route integer, sqlstate text, message text, detail text, hint text)
    RETURNS void
    LANGUAGE plpgsql VOLATILE
AS $body$
DECLARE
    node integer;
    code text := sqlstate;
    msg text := message;
    det text := nullif(detail, '');
    hnt text := nullif(hint, '');
BEGIN
    IF memtx_router.is_connection_failure(sqlstate, message) THEN
        node := memtx_router.node_index(route);
        det := message;
        IF message ~ '^PL/Proxy function [^ ]+: (\[[^]]*\] PQconnect|connect timeout)' THEN
            code := '08001';
            msg := pg_catalog.format('memtx node %s is unreachable', node);
            hnt := 'Nothing was sent to the node. Calls for namespaces of other nodes are unaffected; repeat this one when the node is back.';
        ELSE
            code := '08006';
            msg := pg_catalog.format('memtx node %s failed during the call', node);
            hnt := 'The call may have taken effect on the node: ask memtx.outcome (proposals) or repeat an idempotent call when the node is back. Calls for namespaces of other nodes are unaffected.';
        END IF;
    ELSIF message ~ '^[^ ]+\([0-9]+\): \[[^]]*\] REMOTE [A-Z]+: ' THEN
        msg := pg_catalog.regexp_replace(message, '^[^ ]+\([0-9]+\): \[[^]]*\] REMOTE [A-Z]+: ', '');
        det := pg_catalog.regexp_replace(det, '^Remote detail: ', '');
        hnt := pg_catalog.regexp_replace(hnt, '^Remote hint: ', '');
    END IF;
    IF det IS NULL AND hnt IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = msg;
    ELSIF hnt IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = msg, DETAIL = det;
    ELSIF det IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = msg, HINT = hnt;
    ELSE
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = msg, DETAIL = det, HINT = hnt;
    END IF;
END
$body$;
COMMENT ON FUNCTION memtx_router.raise_node_error(integer, text, text, text, text) IS 'raise the error of a routed call: the node''s own, or 08001/08006 naming a node that failed';

"""

CATALOG_SQL = """SELECT 'function'::text AS kind, p.proname::text || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')' AS name,
       pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid)
       || CASE WHEN p.proname IN (%(local)s) THEN ' = ' || pg_catalog.md5(pg_catalog.pg_get_function_sqlbody(p.oid)) ELSE '' END AS detail
  FROM pg_catalog.pg_proc p WHERE p.pronamespace = 'memtx'::regnamespace
UNION ALL
SELECT 'type', t.typname::text,
       CASE WHEN t.typtype = 'e'
            THEN 'enum (' || (SELECT pg_catalog.string_agg(pg_catalog.quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder)
                                FROM pg_catalog.pg_enum e WHERE e.enumtypid = t.oid) || ')'
            ELSE '(' || (SELECT pg_catalog.string_agg(pg_catalog.quote_ident(a.attname) || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
                           FROM pg_catalog.pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped) || ')'
       END
  FROM pg_catalog.pg_type t LEFT JOIN pg_catalog.pg_class c ON c.oid = t.typrelid
 WHERE t.typnamespace = 'memtx'::regnamespace AND (t.typtype = 'e' OR c.relkind IN ('r', 'v', 'c'))
UNION ALL
SELECT 'extension', x.extname::text, x.extversion FROM pg_catalog.pg_extension x WHERE x.extname = 'memtx'"""

CHECKS = """/* ----------------------------------------------------------------------
 * Checks: is the router the twin of its nodes?
 */

-- What the router deliberately does not route, and why.
CREATE FUNCTION memtx_router.unrouted() RETURNS TABLE (function text, reason text)
    LANGUAGE sql IMMUTABLE
BEGIN ATOMIC
    %(unrouted)s;
END;
""" + """
-- The memtx catalog this router was generated from.
CREATE FUNCTION memtx_router.generated_from() RETURNS text
    LANGUAGE sql IMMUTABLE
    RETURN %(version)s;
COMMENT ON FUNCTION memtx_router.generated_from() IS 'the memtx version whose catalog this router was generated from';

-- Schema memtx described the same way on the router and on a node: each
-- function by name and identity with its arguments and result, each type
-- with its labels or columns.
CREATE FUNCTION memtx_router.catalog() RETURNS TABLE (kind text, name text, detail text)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $sql$
%(catalog)s
$sql$;
COMMENT ON FUNCTION memtx_router.catalog() IS 'schema memtx on the router: functions with arguments and result, types with labels or columns';

CREATE FUNCTION memtx_router.node_catalog_on(memtx_router_node integer)
    RETURNS TABLE (kind text, name text, detail text)
    LANGUAGE plproxy VOLATILE
AS $plproxy$
    CLUSTER 'memtx_nodes';
    RUN ON $1;
%(node_catalog)s;
$plproxy$;
COMMENT ON FUNCTION memtx_router.node_catalog_on(integer) IS 'schema memtx on one node, described as memtx_router.catalog() describes the router''s';

CREATE FUNCTION memtx_router.node_identity_on(memtx_router_node integer)
    RETURNS TABLE (node integer, memtx_version text)
    LANGUAGE plproxy VOLATILE
AS $plproxy$
    CLUSTER 'memtx_nodes';
    RUN ON $1;
    SELECT memtx.node() AS node, (SELECT x.extversion FROM pg_catalog.pg_extension x WHERE x.extname = 'memtx') AS memtx_version;
$plproxy$;
COMMENT ON FUNCTION memtx_router.node_identity_on(integer) IS 'the node number a node''s store carries and its memtx version';

-- Every problem between the router and its nodes, one row each; none when
-- every node is reachable, carries its partition's number, runs the memtx
-- version this router was generated from, and every function of its schema
-- memtx has a twin here with the same arguments and result (or is listed by
-- memtx_router.unrouted()) and every type here has the node's labels or
-- columns.  A stale router (memtx changed, `make router-sql` not run) shows
-- up here by function name.
CREATE FUNCTION memtx_router.check_nodes() RETURNS TABLE (node integer, problem text)
    LANGUAGE plpgsql VOLATILE
AS $body$
DECLARE
    n integer;
    ident record;
BEGIN
    FOR n IN 0 .. memtx_router.node_count() - 1 LOOP
        node := n;
        BEGIN
            SELECT * INTO ident FROM memtx_router.node_identity_on(n);
        EXCEPTION WHEN OTHERS THEN
            problem := pg_catalog.format('cannot be read: %%s', SQLERRM);
            RETURN NEXT;
            CONTINUE;
        END;
        IF ident.node IS DISTINCT FROM n THEN
            problem := pg_catalog.format('its store is node %%s, not %%s: run memtx.set_node(%%s) on the node''s empty store',
                                         ident.node, n, n);
            RETURN NEXT;
        END IF;
        IF ident.memtx_version IS DISTINCT FROM memtx_router.generated_from() THEN
            problem := pg_catalog.format('it runs memtx %%s; this router was generated from memtx %%s',
                                         ident.memtx_version, memtx_router.generated_from());
            RETURN NEXT;
        END IF;
        FOR problem IN
            WITH c AS MATERIALIZED (SELECT * FROM memtx_router.node_catalog_on(n)),
                 r AS MATERIALIZED (SELECT * FROM memtx_router.catalog())
            SELECT CASE
                     WHEN rf.name IS NULL THEN pg_catalog.format('memtx.%%s has no router twin', cf.name)
                     WHEN cf.name IS NULL THEN pg_catalog.format('memtx.%%s exists on the router only', rf.name)
                     ELSE pg_catalog.format('memtx.%%s differs: node %%s, router %%s', cf.name, cf.detail, rf.detail)
                   END
              FROM (SELECT * FROM c
                     WHERE c.kind = 'function'
                       AND 'memtx.' || pg_catalog.split_part(c.name, '(', 1)
                           NOT IN (SELECT pg_catalog.split_part(u.function, '(', 1) FROM memtx_router.unrouted() u)) cf
              FULL JOIN (SELECT * FROM r WHERE r.kind = 'function') rf ON rf.name = cf.name
             WHERE rf.detail IS DISTINCT FROM cf.detail
            UNION ALL
            SELECT CASE WHEN c.name IS NULL THEN pg_catalog.format('type memtx.%%s is missing on the node', r.name)
                        ELSE pg_catalog.format('type memtx.%%s differs: node %%s, router %%s', r.name, c.detail, r.detail) END
              FROM r LEFT JOIN c ON c.kind = r.kind AND c.name = r.name
             WHERE r.kind = 'type' AND r.detail IS DISTINCT FROM c.detail
             ORDER BY 1
        LOOP
            RETURN NEXT;
        END LOOP;
    END LOOP;
END
$body$;
COMMENT ON FUNCTION memtx_router.check_nodes() IS 'every mismatch between the router and its nodes (reachability, node numbers, memtx version, function signatures, types); no rows when they are twins';
"""


def generate(version, funcs, types, views):
    out = [HEADER % {"version": version}]
    routed, unrouted, errors = [], [], []
    for f in funcs:
        for a in f["args"]:
            if a["name"] == NODE_VAR or a["name"].startswith("memtx_router_"):
                errors.append("%s: argument %s collides with the router's own names" % (f["regproc"], a["name"]))
        if f["name"] in NOT_ROUTED:
            unrouted.append((f["regproc"], NOT_ROUTED[f["name"]]))
            continue
        if f["name"] not in ROUTES:
            errors.append("%s (extension %s) is neither routed nor listed as not routed: add it to ROUTES or "
                          "NOT_ROUTED in scripts/gen-router.py" % (f["regproc"], f["extension"] or "none"))
            continue
        if f["is_trigger"]:
            errors.append("%s: a trigger function cannot be routed" % f["regproc"])
            continue
        try:
            needed = type_closure(function_types(f), types)
        except GenError as e:
            unrouted.append((f["regproc"], "its signature needs %s, which the router does not carry" % e))
            continue
        routed.append((f, ROUTES[f["name"]], needed))
    for name, v in views.items():
        if name not in VIEWS:
            errors.append("view memtx.%s is neither in VIEWS of scripts/gen-router.py" % name)
    if errors:
        raise GenError("\n".join(errors))

    type_order = []
    for f, route, needed in routed:
        for oid in needed:
            if oid not in type_order:
                type_order.append(oid)
    for name, how in sorted(VIEWS.items()):
        if name in views:
            for oid in type_closure([a["type"] for a in views[name]["attrs"]], types):
                if oid not in type_order:
                    type_order.append(oid)

    out.append("/* ----------------------------------------------------------------------\n"
               " * Types: the nodes' enums and the row types the API returns\n */\n\n")
    for oid in type_order:
        emit_type(types[oid], out)
    out.append("\n")
    out.append("/* ----------------------------------------------------------------------\n"
               " * The placement functions, the same SQL as on the nodes\n */\n\n")
    for f, route, needed in routed:
        if route[0] == "local":
            emit_local(f, out)
    out.append(HELPERS)
    out.append("/* ----------------------------------------------------------------------\n"
               " * The API, routed\n */\n\n")
    for f, route, needed in routed:
        kind = route[0]
        if kind == "local":
            continue
        out.append("-- memtx.%s: %s\n" % (f["regproc"].split(".", 1)[1], describe(route)))
        if kind in ("namespace", "id"):
            emit_single(f, route, out)
        elif kind == "all":
            emit_each_node(f, route, out)
        elif kind == "namespace_or_all":
            if arg_index(f, route[1]) is None:
                emit_each_node(f, ("all", route[2]), out)
            else:
                emit_each_node(f, route, out)
        elif kind == "any":
            emit_any(f, out)
        else:
            raise GenError("unknown route %r" % (route,))
    out.append("/* ----------------------------------------------------------------------\n"
               " * Views over every node\n */\n\n")
    for name, how in sorted(VIEWS.items()):
        if name in views:
            emit_view(views[name], how, out)
    unrouted_sql = "SELECT u.function, u.reason FROM (VALUES\n        %s) u(function, reason)" % \
        ",\n        ".join("(%s, %s)" % (literal(fn), literal(reason)) for fn, reason in sorted(unrouted))
    local = ", ".join(literal(f["name"]) for f, route, needed in routed if route[0] == "local") or "NULL"
    catalog = CATALOG_SQL % {"local": local}
    node_catalog = "    " + catalog.replace("\n", "\n    ")
    out.append(CHECKS % {"unrouted": unrouted_sql, "version": literal(version), "catalog": catalog,
                         "node_catalog": node_catalog})
    out.append("COMMENT ON FUNCTION memtx_router.unrouted() IS "
               "'the functions of memtx the router does not route, and why';\n")
    return "".join(out)


def describe(route):
    kind = route[0]
    if kind == "namespace":
        return "runs on the node of argument %s" % route[1]
    if kind == "id":
        return "runs on the node in the top bits of argument %s" % route[1]
    if kind == "all":
        return "every node in turn (%s)" % route[1]
    if kind == "namespace_or_all":
        return "the node of argument %s, every node when it is NULL (%s)" % (route[1], route[2])
    return "the lowest-numbered node that answers"


def main():
    ap = argparse.ArgumentParser(description="generate the memtx_router catalog from a live memtx catalog")
    ap.add_argument("--dbname", help="database with memtx installed (default: the PG* environment's)")
    ap.add_argument("--output", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sql",
                                                     "memtx_router.sql"))
    ap.add_argument("--check", metavar="FILE", help="compare with FILE instead of writing; exit 1 when it differs")
    args = ap.parse_args()
    conninfo = psycopg.conninfo.make_conninfo("", **({"dbname": args.dbname} if args.dbname else {}))
    try:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            text = generate(*read_catalog(conn))
    except GenError as e:
        print("gen-router: %s" % e, file=sys.stderr)
        return 2
    if args.check:
        with open(args.check) as fh:
            old = fh.read()
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                       args.check, "generated from the live catalog", n=2))
            print("gen-router: %s is stale: run `make router-sql` and commit it" % args.check, file=sys.stderr)
            return 1
        print("gen-router: %s matches the live memtx catalog" % args.check)
        return 0
    with open(args.output, "w") as fh:
        fh.write(text)
    print("gen-router: wrote %s" % os.path.normpath(args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
