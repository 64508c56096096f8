"""SPEC §19 (the companion extension memtx_vector) in the model.

Part of model.py's independent model of SPEC.md (written from the SPEC text
alone, never from the extension's C or SQL): the embedding model registry,
one embedding per (record, model), erasure deleting embeddings, and
recall_similar with its visibility, k nearest by the model's distance and
the reciprocal-rank fusion with §14's text ranking.  `Model` (model.py)
mixes `VectorModel` in; the state is

  models        name -> (dims, distance)
  embeddings    (record id, model) -> the vector, a tuple of floats

Vectors are tuples of floats whose components the driver draws exactly
representable in single precision (0, ±1, ±0.5, 2), so every sum pgvector
makes in single precision is exact here in double.  Distances are computed
as SPEC §19 names them: cosine distance (1 - cosine similarity), Euclidean
(l2) distance, and for `inner_product` the negative inner product (pgvector's
`<#>`, so that nearest is smallest for all three; READING: §19 says "nearest
... by the model's distance, ascending" and names pgvector's operator
classes, whose inner-product distance is the negative product; README
"Semantic recall").
"""

import itertools
import math
import re

MODEL_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
DISTANCES = ("cosine", "l2", "inner_product")
RRF = 60                    # §19: score Σ 1/(60 + position)
# Two distances closer than this are a tie whatever the rounding: the
# engine computes them in its own order of operations (READING, see
# VectorModel.nearest_orders)
TIE = 1e-9
# at most this many orders of tied rows are offered as readings
MAX_ORDERS = 720


class Near:
    """A predicted real (float4) column: equal to a value within single
    precision."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        if not isinstance(other, (int, float)) or isinstance(other, bool):
            return False
        return abs(other - self.value) <= 1e-5 + 1e-5 * abs(self.value)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = None

    def __repr__(self):
        return "~%.6g" % self.value


def distance(kind, a, b):
    """§19: the model's distance between vectors a and b (smaller is
    nearer)."""
    dot = sum(x * y for x, y in zip(a, b))
    if kind == "inner_product":
        return -dot
    if kind == "l2":
        return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    na = sum(x * x for x in a)
    nb = sum(y * y for y in b)
    sim = dot / math.sqrt(na * nb)
    return 1.0 - max(-1.0, min(1.0, sim))


def finite(vec):
    return all(math.isfinite(x) for x in vec)


class VectorModel:
    """The §19 calls of the model (mixed into model.Model)."""

    def vector_init(self):
        self.models = {}                    # §19: name -> (dims, distance)
        self.embeddings = {}                # §19: (record, model) -> vector

    def vector_clone(self, m):
        m.models = dict(self.models)
        m.embeddings = dict(self.embeddings)

    def drop_embeddings(self, rid):
        """§19: erase deletes the embeddings of every record it erases."""
        for key in [k for k in self.embeddings if k[0] == rid]:
            del self.embeddings[key]

    @staticmethod
    def errors(problems):
        """Several argument problems at once: any of their codes (READING:
        the SPEC orders no argument check before another; §22 puts them
        before the transaction's own checks, which are among them here as
        recall's are).  A problem whose code the SPEC does not name (None)
        admits any code."""
        if any(p is None for p in problems):
            return ("err", None)
        return ("err", set().union(*problems))

    # --- register_embedding_model (harness)

    def op_register_embedding_model(self, op, new_id):
        if op["caller"] != "harness":
            # §19 "(harness)"; README: harness-only calls check that before
            # anything else
            return ("err", {"42501"})
        name, dims, dist = op["name"], op["dims"], op["distance"]
        problems = []
        if not MODEL_NAME.match(name):
            problems.append({"22023"})      # §19: name as for tools
        if dist not in DISTANCES:
            problems.append({"22023"})
        if not 1 <= dims <= 2000:
            # READING: the SPEC bounds no dims; pgvector's HNSW indexes
            # vectors of up to 2,000 dimensions, and README (Errors) makes
            # dims outside 1..2000 22003
            problems.append({"22003"})
        if problems:
            return self.errors(problems)
        old = self.models.get(name)
        if old is not None and old != (dims, dist):
            return ("err", {"23505"})       # §19: other dims or distance
        self.models[name] = (dims, dist)    # the same again: nothing
        return ("ok", None)

    # --- embed (the record's owner or a harness)

    def op_embed(self, op, new_id):
        r = self.records[op["record"]]
        caller, name, vec = op["caller"], op["model"], op["embedding"]
        problems = []
        if caller != "harness" and caller != r.owner:
            # §19 "allowed to the record's owner (or a harness)"; §16: an
            # unreadable id is "does not exist" (as revoke's)
            problems.append({"42501"} if self.readable(r, caller)
                            else {"42501", "42704"})
        model = self.models.get(name)
        if model is None:
            # READING: the SPEC names no code for an unknown model; README
            # (Errors): 42704, an unknown object
            problems.append({"42704"})
        if not finite(vec):
            # §19: the vector must be finite (22023).  READING: pgvector's
            # type holds no NaN or infinity: its input refuses them (22000,
            # data_exception) before memtx.embed is called at all
            problems.append({"22023", "22000"})
        elif model is not None and len(vec) != model[0]:
            problems.append({"22023"})      # §19: the model's dims
        elif model is not None and model[1] == "cosine" and not any(vec):
            # READING: the zero vector has no cosine distance to anything;
            # README (Errors): 22023
            problems.append({"22023"})
        if problems:
            return self.errors(problems)
        if caller in self.fenced:
            return ("err", {"42501"})       # §12 (README): embed is a write
        if r.erased:
            # §19 "in any state but erased"; READING: no code named; README
            # (Errors): 55000, object not in prerequisite state
            return ("err", {"55000"})
        old = self.embeddings.get((r.id, name))
        if old is not None:
            # §19: immutable; the same vector again does nothing
            return ("ok", None) if old == tuple(vec) else ("err", {"23505"})
        self.embeddings[r.id, name] = tuple(vec)
        return ("ok", None)

    # --- recall_similar (§19, §14, §18)

    def op_recall_similar(self, op, new_id):
        problems = []
        model = self.models.get(op["model"])
        vec = op["embedding"]
        if not finite(vec):
            # see op_embed: pgvector's input refuses a non-finite vector
            # (22000) before the call, whatever else is wrong with it
            problems.append({"22023", "22000"})
        if model is None:
            problems.append({"42704"})      # README: an unknown model
        elif finite(vec) and len(vec) != model[0]:
            # READING: the SPEC states the dims rule for embed; a query of
            # other dimensions has no distance to the model's vectors, and
            # the same 22023 (README, Errors) is the reading
            problems.append({"22023"})
        err = self.tx_check(op, allow_committed=True)
        if not 1 <= op["k"] <= 1000:
            # §19: k 1..1000, an argument error first (§22), as recall's
            # (model.Model.op_recall); READING: with other problems, any of
            # their codes
            return ("err", set().union({"22003"}, *problems,
                                       err[1] or set() if err else set()))
        if err:
            problems.append(err[1])
        if problems:
            # READING: the SPEC orders neither the model's checks nor the
            # embedding's against the transaction's
            return self.errors(problems)
        t = self.txs[op["tx"]]
        dist, k = model[1], op["k"]
        prefix, valid_at = op.get("entity_prefix"), op.get("valid_at")

        def shown(r):
            # §19: what read would show tx, restricted as §14 and §18 say
            return ((prefix is None or r.entity.startswith(prefix))
                    and (valid_at is None or self.contains_at(r, valid_at))
                    and self.visible(r, t))

        cands = []
        for (rid, name), v in self.embeddings.items():
            if name == op["model"] and shown(self.records[rid]):
                cands.append((distance(dist, vec, v), rid, v))
        cands.sort(key=lambda c: (c[0], c[1]))
        orders = self.nearest_orders(cands, k)
        text = []
        if op.get("query") is not None:
            text = self.text_list(op["query"], k, shown)
        options = []
        for order in orders:
            rows = self.fuse(order, text, k) if op.get("query") is not None \
                else [(rid, d, 1.0 / (RRF + i + 1))
                      for i, (d, rid) in enumerate(order)]
            ids = [x[0] for x in rows]
            options.append(([(rid, None if d is None else Near(d), Near(rank))
                             for rid, d, rank in rows], ids))
        # §19 "every row returned joins the read set"; where ties leave the
        # rows returned open, the driver hands the model the ids it got
        # (see adopt_recall_similar)
        t.pending_similar = True
        import model as M       # the module that mixes this one in
        pred = options[0][0] if len(options) == 1 else \
            M.OneOf(*[rows for rows, _ in options])
        if len(options) == 1:
            self.adopt_recall_similar(op, options[0][1])
        return ("ok", pred)

    def adopt_recall_similar(self, op, ids):
        """The rows recall_similar returned join the read set (§19, §4 3c);
        renews the lease as a read that writes does."""
        t = self.txs[op["tx"]]
        if getattr(t, "pending_similar", None) is None:
            return
        t.pending_similar = None
        t.read_set.update(ids)
        if ids:
            self.renew(t, op)

    def contains_at(self, r, at):
        lo, hi = r.valid
        return (lo is None or lo <= at) and (hi is None or at < hi)

    def text_list(self, query, k, shown):
        """§19 hybrid: the text ranking of §14 over what tx may see, its best
        k (READING: the SPEC fuses "the text ranking of §14", which is
        recall's best k; README "Semantic recall").  The driver's matches all
        rank equal (model.Model.document_matches), so by id."""
        words = self.query_words(query)
        if not words:
            return []
        hits = [rid for rid in sorted(self.records)
                if self.document_matches(self.records[rid], words, query)
                and shown(self.records[rid])]
        return hits[:k]

    @staticmethod
    def fuse(order, text, k):
        """§19: reciprocal-rank fusion of the vector list (order: (distance,
        id) pairs) and the text list; rank desc, then id; distance NULL for
        rows only the text matched.  READING: the SPEC does not say how many
        fused rows come back; the model takes the best k (as every §14/§19
        call returns at most k; README "Semantic recall")."""
        from fractions import Fraction
        score, dist = {}, {}
        for i, (d, rid) in enumerate(order):
            score[rid] = score.get(rid, 0) + Fraction(1, RRF + i + 1)
            dist[rid] = d
        for i, rid in enumerate(text):
            score[rid] = score.get(rid, 0) + Fraction(1, RRF + i + 1)
        rows = sorted(score, key=lambda rid: (-score[rid], rid))[:k]
        return [(rid, dist.get(rid), float(score[rid])) for rid in rows]

    @staticmethod
    def nearest_orders(cands, k):
        """The lists of the k nearest (distance, id) pairs the engine may
        return, from cands sorted by (distance, id): by distance ascending,
        then id (§19); equal distances (the same vector, or a symmetric
        one) come by id.  READING (approximation): two different vectors
        at the same true distance may come out of the engine's arithmetic a
        last bit apart, so where two distances differ by less than TIE the
        model accepts either order of the two (each distance's own records
        still by id), and at the k-th place either.  HNSW is approximate
        (§19); at the traces' sizes (a few dozen vectors, default
        ef_search 40) the iterative scan finds the exact neighbours, which
        the model demands."""
        groups = []
        for c in cands:
            if groups and c[0] - groups[-1][-1][0] <= TIE * max(1.0, abs(c[0])):
                groups[-1].append(c)
            else:
                groups.append([c])
        per_group, taken = [], 0
        for g in groups:
            if taken >= k:
                break
            taken += len(g)
            runs = {}
            for c in g:
                runs.setdefault(c[0], []).append((c[0], c[1]))
            per_group.append(interleavings(list(runs.values())))
        out, seen = [], set()
        for combo in itertools.product(*per_group):
            flat = [x for g in combo for x in g][:k]
            key = tuple(rid for _, rid in flat)
            if key not in seen:
                seen.add(key)
                out.append(flat)
            if len(out) >= MAX_ORDERS:
                break
        return out or [[]]


def interleavings(runs):
    """Every merge of the runs that keeps each run's order (at most
    MAX_ORDERS of them)."""
    runs = [r for r in runs if r]
    if len(runs) <= 1:
        return [runs[0] if runs else []]
    out = []
    for i, r in enumerate(runs):
        rest = runs[:i] + [r[1:]] + runs[i + 1:]
        for tail in interleavings(rest):
            out.append([r[0]] + tail)
            if len(out) >= MAX_ORDERS:
                return out
    return out
