"""SPEC §19 (memtx_vector) in the model-based traces: the driver's part.

traces.py calls these when the server has memtx_vector (and pgvector >=
0.8.0, which it requires): each trace then creates memtx_vector after memtx
(CREATE EXTENSION memtx_vector CASCADE), registers one or two models of 2 or
3 dimensions with distances drawn at random (the trace's config), and the
random calls include register_embedding_model, embed and recall_similar,
drawn at the boundaries on purpose: k 0, 1, 1000 and 1001; a vector of the
wrong dimensions, one with a NaN or infinite component, the zero vector;
records of the other namespace, erased records, records the caller does not
own or cannot read; the same vector again and a different one; several
records with the same vector (ties in distance, ordered by id), symmetric
vectors (equal distances from different vectors), and queries equal to a
stored vector; hybrid calls with the text queries recall's calls use; an
unregistered model, a model registered again with the same or other dims
or distance, bad names and distances.  After every call the embeddings and
the model registry are compared with model.py's (vector_model.py), and
after an embed each agent's view of memtx.embeddings under row-level
security too.  A scenario (scenario(), below) lines up what random calls
seldom do: embedded records a reader's transaction can see.  Without
pgvector the driver says so and draws none of these calls
(MEMTX_MODEL_VECTOR=off does the same on purpose).
"""

import math
import os

KINDS = ("register_embedding_model", "embed", "recall_similar")
# components exact in single precision, so that pgvector's sums are exact
COMPONENTS = (0.0, 1.0, -1.0, 0.5, -0.5, 2.0)
# a few vectors drawn often, so that records share them (ties) and queries
# meet them; (1,0,0) and (0,1,0) are symmetric about (1,1,0) and (0,0,1)
POOL = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 1.0, 0.0),
        (1.0, 0.0, 0.5), (-1.0, 0.0, 0.0), (0.5, 0.5, 0.5), (2.0, 0.0, 0.0))
MODEL_NAMES = ("m1", "m.2:b-c")
DISTANCES = ("cosine", "l2", "inner_product")


def available(admin):
    """Whether memtx_vector can be created here: pgvector >= 0.8.0 is
    installed (memtx_vector is built and installed with memtx; a private
    install tree, loaded through extension_destdir, is not listed in
    pg_available_extensions, so only pgvector is looked up); says which.
    Without it under CI (env CI set) the run stops: the driver ends without
    its summary, which test/model/run counts as a failure."""
    if admin is None:
        return False
    if os.environ.get("MEMTX_MODEL_VECTOR") == "off":
        print("memtx_vector: MEMTX_MODEL_VECTOR=off: no §19 calls drawn",
              flush=True)
        return False
    version = admin.execute(
        "SELECT default_version FROM pg_available_extensions"
        " WHERE name = 'vector'").fetchone()
    version = version[0] if version else None
    ok = False
    if version is not None:
        parts = version.split("-")[0].split(".")
        ok = [int(x) for x in parts[:3] if x.isdigit()] >= [0, 8, 0]
    if ok:
        print("memtx_vector: created in every trace (pgvector %s): §19 calls"
              " drawn" % version, flush=True)
    else:
        print("memtx_vector: pgvector >= 0.8.0 is not installed (found: %s):"
              " no §19 calls drawn (scripts/deps.sh installs it)" % (
                  version or "none"), flush=True)
        if os.environ.get("CI"):
            # as runner vector's skip: under CI the model must cover §19
            raise SystemExit("memtx_vector: a run without §19 fails under CI")
    return ok


def config(gen, cfg):
    """The trace's models: one or two, dims 3 (or 2), distances at random."""
    rnd = gen.rnd
    models = [[MODEL_NAMES[0], 3, rnd.choice(DISTANCES)]]
    if rnd.random() < 0.5:
        models.append([MODEL_NAMES[1], rnd.choice((2, 3)),
                       rnd.choice(DISTANCES)])
    cfg["models"] = models


def reset(runner, config):
    """After CREATE EXTENSION memtx: memtx_vector, and the trace's models
    (registered by the harness, told to the model)."""
    runner.admin.execute("CREATE EXTENSION memtx_vector CASCADE")
    for name, dims, dist in config.get("models", ()):
        runner.conn.execute("SELECT memtx.register_embedding_model(%s, %s, %s)",
                            (name, dims, dist))
        runner.model.models[name] = (dims, dist)


def vec_text(vec):
    def one(x):
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return repr(float(x))
    return "[" + ",".join(one(x) for x in vec) + "]"


def parse_vec(text):
    return tuple(float(x) for x in text.strip("[]").split(","))


def statement(op, ts):
    kind = op["op"]
    if kind == "register_embedding_model":
        return ("SELECT memtx.register_embedding_model(%s, %s, %s)",
                (op["name"], op["dims"], op["distance"]))
    if kind == "embed":
        return ("SELECT memtx.embed(%s, %s, %s::vector)",
                (op["record"], op["model"], vec_text(op["embedding"])))
    if kind == "recall_similar":
        return ("SELECT record_id, distance, rank FROM memtx.recall_similar("
                "tx => %s, embedding => %s::vector, model => %s, k => %s,"
                " entity_prefix => %s, query => %s, valid_at => %s)",
                (op["tx"], vec_text(op["embedding"]), op["model"], op["k"],
                 op.get("entity_prefix"), op.get("query"),
                 ts(op.get("valid_at"))))
    raise ValueError(kind)


def shape(kind, rows):
    if kind == "recall_similar":
        return [tuple(r) for r in rows]
    return None                             # void


def after_call(runner, op, got):
    """The rows recall_similar returned join the model's read set (the
    model leaves them open where ties allow several answers)."""
    if op["op"] == "recall_similar" and got[0] == "ok":
        runner.model.adopt_recall_similar(op, [r[0] for r in got[1]])


def tally(cov, kind, op, got):
    """Coverage of the §19 calls: errors by code, and what succeeded."""
    if got[0] == "err":
        cov["%s error %s" % (kind, got[1])] += 1
    elif kind == "recall_similar":
        rows = got[1]
        cov["recall_similar %s%s" % (
            "hybrid " if op.get("query") is not None else "",
            "rows" if rows else "empty")] += 1
        if any(r[1] is None for r in rows):
            cov["recall_similar hybrid text-only rows"] += 1
        ds = [r[1] for r in rows if r[1] is not None]
        if len(ds) != len(set(ds)):
            cov["recall_similar ties in distance"] += 1
    else:
        cov[kind] += 1


def compare_state(runner, n, op, bad):
    """The registry and every embedding (as the superuser), and after an
    embed each agent's view under the records' row-level security (§19:
    readable only under the record's own RLS)."""
    m = runner.model
    c = runner.conn
    got = sorted(tuple(r) for r in c.execute(
        "SELECT name, dims, distance FROM memtx.embedding_models"))
    want = sorted((k,) + v for k, v in m.models.items())
    if got != want:
        bad("embedding models", got, want)
    rows = c.execute("SELECT record_id, namespace, model, embedding::text"
                     " FROM memtx.embeddings").fetchall()
    got = sorted((rid, ns, name, parse_vec(v)) for rid, ns, name, v in rows)
    want = sorted((rid, m.records[rid].ns, name, v)
                  for (rid, name), v in m.embeddings.items())
    if got != want:
        bad("embeddings", got, want)
    if op["op"] != "embed":
        return
    for agent in runner.agents:
        runner.as_role(agent)
        got = sorted(tuple(r) for r in c.execute(
            "SELECT record_id, model FROM memtx.embeddings"))
        want = sorted(k for k in m.embeddings
                      if m.readable(m.records[k[0]], agent))
        if got != want:
            runner.as_role("harness")
            bad("embeddings %s reads" % agent, got, want)
    runner.as_role("harness")


# ------------------------------------------------------------ the calls

def vector(gen, dims):
    """A vector of dims components: often one of the pool (shared, so ties
    come), sometimes the zero vector."""
    rnd = gen.rnd
    p = rnd.random()
    if p < 0.65:
        v = rnd.choice(POOL)
        return list(v[:dims]) + [0.0] * (dims - len(v))
    if p < 0.95:
        return [rnd.choice(COMPONENTS) for _ in range(dims)]
    return [0.0] * dims


def odd_vector(gen, dims):
    """The boundaries of a vector argument: wrong dims, NaN or infinity."""
    rnd = gen.rnd
    p = rnd.random()
    v = vector(gen, dims)
    if p < 0.5:
        return v + [1.0] if rnd.random() < 0.5 or dims < 2 else v[:-1]
    v[rnd.randrange(dims)] = rnd.choice((float("nan"), float("inf"),
                                         float("-inf")))
    return v


def model_name(gen):
    rnd, m = gen.rnd, gen.m
    if m.models and rnd.random() < 0.93:
        return rnd.choice(sorted(m.models))
    return "m9"                             # never registered: 42704


def draw(gen, choice):
    """One §19 call (choice is one of KINDS), or None."""
    rnd, m = gen.rnd, gen.m
    if choice == "register_embedding_model":
        caller = "harness" if rnd.random() < 0.85 else rnd.choice(gen.agents)
        p = rnd.random()
        if p < 0.5 and m.models:
            name = rnd.choice(sorted(m.models))
            dims, dist = m.models[name]
            q = rnd.random()
            if q < 0.4:
                dims = dims + rnd.choice((-1, 1))
            elif q < 0.7:
                dist = rnd.choice([d for d in DISTANCES if d != dist])
            return {"op": choice, "caller": caller, "name": name,
                    "dims": dims, "distance": dist}
        name = rnd.choice(("m3", "m3", "bad name", "", "x" * 65, "y" * 64,
                           "m:4.a-b_c"))
        return {"op": choice, "caller": caller, "name": name,
                "dims": rnd.choice((3, 3, 2, 1, 0, 2000, 2001)),
                "distance": rnd.choice(DISTANCES + ("dot",))}
    if choice == "embed":
        recs = list(m.records.values())
        if not recs:
            return None
        name = model_name(gen)
        dims = m.models.get(name, (3, None))[0]
        have = [r for r in recs if (r.id, name) in m.embeddings]
        erased = [r for r in recs if r.erased]
        p = rnd.random()
        if p < 0.2 and have:
            r = rnd.choice(have)
            vec = (list(m.embeddings[r.id, name]) if rnd.random() < 0.5
                   else vector(gen, dims))  # the same again, or another
        else:
            fresh = [r for r in recs if (r.id, name) not in m.embeddings]
            settled = [r for r in fresh if r.state in ("committed",
                                                       "action_safe")]
            if p < 0.25 and erased:
                r = rnd.choice(erased)
            elif p < 0.7 and settled:
                r = rnd.choice(settled)     # what recall_similar can find
            else:
                r = rnd.choice(fresh or recs)
            vec = (odd_vector(gen, dims) if rnd.random() < 0.07
                   else vector(gen, dims))
        q = rnd.random()
        owner = r.owner if r.owner in gen.agents else "harness"
        caller = (owner if q < 0.65 else "harness" if q < 0.9
                  else rnd.choice(gen.agents))
        return {"op": "embed", "caller": caller,
                "record": gen.rec_label(r), "model": name, "embedding": vec}
    if choice == "recall_similar":
        txs = list(m.txs.values())
        opened = [t for t in txs if t.status == "open"]
        # mostly a transaction that sees embedded records, so rows come back
        seeing = [t for t in opened if any(
            m.visible(m.records[rid], t) for rid, _ in m.embeddings)]
        p = rnd.random()
        t = rnd.choice(seeing if seeing and p < 0.7 else
                       opened if opened and p < 0.95 else txs)
        p = rnd.random()
        caller = (t.agent if p < 0.9 else "harness" if p < 0.94
                  else rnd.choice(gen.agents))
        name = model_name(gen)
        dims, dist = m.models.get(name, (3, "l2"))
        stored = [v for (rid, n2), v in m.embeddings.items() if n2 == name]
        q = rnd.random()
        if q < 0.35 and stored:
            vec = list(rnd.choice(stored))  # a query equal to a stored one
        elif q < 0.95:
            vec = vector(gen, dims)
        else:
            vec = odd_vector(gen, dims)
        if dist == "cosine" and vec and not any(vec):
            vec[0] = 1.0                    # no cosine distance to zero
        call = {"op": "recall_similar", "caller": caller,
                "tx": gen.tx_label(t), "model": name, "embedding": vec,
                "k": rnd.choice((1, 2, 2, 3, 3, 8, 8, 8, 8, 1000, 0, 1001)),
                "entity_prefix": rnd.choice((None, None, None, "e1", "e",
                                             "%"))}
        if rnd.random() < 0.4:
            call["query"] = rnd.choice(("amber", "cobalt", "amber or cobalt",
                                        "the", ""))
        if rnd.random() < 0.2:
            call["valid_at"] = m.now + rnd.choice((-60, 0, 1, 60))
        return call
    raise ValueError(choice)


def scenario(gen):
    """§19 end to end, which random calls line up too seldom: an agent
    proposes three to five records on fresh slots (public or private, words
    recall finds or not), embeds them with a few vectors shared between them
    (ties in distance), another reader opens a transaction at a random tier
    and recalls by similarity with a query equal to one of the vectors or
    near them, k at the edges, sometimes hybrid or under a prefix; then now
    and then the harness erases one of the records (its embeddings go) and
    the reader recalls again."""
    rnd, m = gen.rnd, gen.m
    if not m.models:
        return
    name = rnd.choice(sorted(m.models))
    dims, dist = m.models[name]
    ns = gen.namespace()
    members = gen.member_agents(ns)
    if not members:
        return
    a = rnd.choice(members)
    prefix = "v%d" % gen.n
    labels = []
    for i in range(rnd.randint(3, 5)):
        slot = ("%s_%d" % (prefix, i), rnd.choice(("x", "y")))
        p = gen.content(dict(op="propose", caller=a, namespace=ns), a, ns,
                        parents=[], slot=slot)
        p.update(entity=slot[0], attribute=slot[1], kind="belief",
                 value=rnd.choice(('"amber"', '"cobalt"', '"amber"', "1")),
                 parents=[], source="sensor", confidence=1.0, proposal=None,
                 expected_head=None, scope=rnd.choice(("public", "public",
                                                       "private")),
                 readers=None, writers=None, observed_at=None, valid=None)
        yield p
        labels.append(p["label"])
    shared = [vector(gen, dims) for _ in range(rnd.randint(1, 3))]
    if dist == "cosine":
        shared = [v if any(v) else [1.0] + v[1:] for v in shared]
    vecs = []
    for lab in labels:
        v = rnd.choice(shared)
        vecs.append(v)
        yield {"op": "embed", "caller": a, "record": lab, "model": name,
               "embedding": v}
    if rnd.random() < 0.3:
        lab = rnd.choice(labels)
        yield {"op": "embed", "caller": rnd.choice((a, "harness")),
               "record": lab, "model": name,
               "embedding": rnd.choice((vecs[labels.index(lab)],
                                        vector(gen, dims)))}
    t = gen.begin(agent=rnd.choice(members), ns=ns, tier=rnd.choice(
        ("low", "low", "medium", "high", "external_action")))
    yield t

    def recall():
        q = rnd.choice(vecs) if rnd.random() < 0.6 else vector(gen, dims)
        if dist == "cosine" and not any(q):
            q = [1.0] + q[1:]
        call = {"op": "recall_similar", "caller": t["agent"],
                "tx": t["label"], "model": name, "embedding": list(q),
                "k": rnd.choice((1, 2, 3, len(labels), 8, 1000, 0, 1001)),
                "entity_prefix": rnd.choice((None, None, None, prefix, "e"))}
        if rnd.random() < 0.35:
            call["query"] = rnd.choice(("amber", "cobalt", "amber or cobalt"))
        return call

    for _ in range(rnd.randint(2, 4)):
        yield recall()
    if rnd.random() < 0.4:
        yield {"op": "erase", "caller": "harness",
               "record": rnd.choice(labels), "note": "gdpr"}
        t = gen.begin(agent=t["agent"], ns=ns, tier="low")
        yield t
        yield recall()
