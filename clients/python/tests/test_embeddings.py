"""Embeddings in the Python client (memtx_vector, SPEC §19): a session's
``embedder`` embeds what it stages and proposes in the same statement,
``recall_similar`` recalls by meaning (hybrid with the words by default),
``embed`` attaches a vector later; failures of the embedder, vectors of the
wrong size and a missing memtx_vector are clear errors that write nothing.

They run in a database of their own (memtx_python_vector) with memtx_vector
installed, so the other suites' database keeps memtx alone.  Without pgvector
0.8.0 or later in the server they are skipped with the reason, except under
CI (env CI set), where they run and fail: a skip there is a failure."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List
from urllib.request import Request, urlopen

import psycopg
import pytest
from psycopg import sql

from memtx_client import AsyncMemory, EmbeddingError, InvalidArgument, Memory, NotFound, Similar

from conftest import AGENTS
from test_round_trips import round_trips, wire

DATABASE = "memtx_python_vector"
MODEL = "py-test-embed"
INSTALL = ("install pgvector 0.8.0 or later (apt install postgresql-15-pgvector, or bash "
           "scripts/deps.sh, which builds it from the vendored tarball)")

# words of one group share a dimension; the first dimension is a constant
GROUPS = [["cat", "kitten", "feline"], ["dog", "puppy", "canine"], ["car", "automobile"],
          ["boat", "ship", "vessel"]]
DIMS = len(GROUPS) + 1


def meaning(text: str) -> List[float]:
    words = "".join(c if c.isalpha() else " " for c in text.lower()).split()
    return [1.0] + [3.0 * sum(w in g for w in words) for g in GROUPS]


def _vector_missing() -> str | None:
    with psycopg.connect(autocommit=True) as conn:
        row = conn.execute("SELECT default_version FROM pg_available_extensions"
                           " WHERE name = 'vector'").fetchone()
    if row is None:
        return f"pgvector is not installed in this server: {INSTALL}"
    major, minor = (int(x) for x in row[0].split(".")[:2])
    return f"pgvector {row[0]} is older than 0.8.0: {INSTALL}" if (major, minor) < (0, 8) else None


@pytest.fixture(scope="module")
def vdb(database: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    """Database memtx_python_vector with memtx_vector and the model registered (the
    agents' roles are the session's)."""
    missing = _vector_missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the vector tests: {missing}")
        pytest.skip(missing)
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    with psycopg.connect(dbname=DATABASE, autocommit=True) as conn:
        conn.execute("SET client_min_messages = warning")
        conn.execute("CREATE EXTENSION memtx_vector CASCADE")
        conn.execute("SELECT memtx.register_embedding_model(%s, %s)", (MODEL, DIMS))
    yield {"dbname": DATABASE, "password": database["password"]}
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(DATABASE)))


@pytest.fixture
def vns(vdb: Dict[str, Any], ns: str) -> str:
    with psycopg.connect(dbname=DATABASE, autocommit=True) as conn:
        conn.execute("SELECT memtx.grant_namespace(%s, %s)", (ns, AGENTS["alice"]))
    return ns


@pytest.fixture
def vadmin(vdb: Dict[str, Any]) -> Iterator["psycopg.Connection[Any]"]:
    with psycopg.connect(dbname=DATABASE, autocommit=True) as conn:
        yield conn


@pytest.fixture
def valice(vdb: Dict[str, Any]) -> Iterator["psycopg.Connection[Any]"]:
    with psycopg.connect(dbname=DATABASE, user=AGENTS["alice"], password=vdb["password"],
                         autocommit=True) as conn:
        yield conn


class Counting:
    """A callable embedder that keeps what it was asked."""

    def __init__(self) -> None:
        self.calls: List[List[str]] = []

    def __call__(self, texts: List[str]) -> List[List[float]]:
        self.calls.append(list(texts))
        return [meaning(t) for t in texts]


def embedded(conn: "psycopg.Connection[Any]", ns: str) -> Dict[str, int]:
    rows = conn.execute("SELECT r.entity || ' ' || r.attribute, vector_dims(e.embedding)"
                        " FROM memtx.embeddings e JOIN memtx.records r ON r.id = e.record_id"
                        " WHERE e.namespace = %s ORDER BY r.id", (ns,)).fetchall()
    return dict(rows)


def records(conn: "psycopg.Connection[Any]", ns: str) -> int:
    return conn.execute("SELECT count(*) FROM memtx.records WHERE namespace = %s", (ns,)).fetchone()[0]


def test_stage_and_propose_embed_in_the_same_statement(valice, vadmin, vns):
    embedder = Counting()
    mem = Memory(valice, namespace=vns, embedder=embedder, embedding_model=MODEL)
    with mem.turn():
        with wire(valice) as sent:
            tom = mem.stage("pet:tom", "species", "a small kitten")
        assert round_trips(sent) == 1
        assert embedder.calls == [["pet:tom species a small kitten"]]
    with wire(valice) as sent:
        proposed = mem.propose("pet:rex", "species", {"kind": "puppy"})
    assert round_trips(sent) == 1
    assert proposed.state == "committed"
    assert embedder.calls[-1] == ['pet:rex species {"kind":"puppy"}']
    assert embedded(vadmin, vns) == {"pet:tom species": DIMS, "pet:rex species": DIMS}
    stored = vadmin.execute("SELECT embedding::text FROM memtx.embeddings WHERE record_id = %s",
                            (tom,)).fetchone()[0]
    assert json.loads(stored) == meaning("a small kitten")


def test_recall_similar_by_meaning_and_words(valice, vns):
    mem = Memory(valice, namespace=vns, embedder=Counting(), embedding_model=MODEL)
    with mem.turn():
        mem.stage("pet:tom", "species", "a small kitten")
        mem.stage("pet:rex", "species", "a loud puppy")
        mem.stage("pet:ship", "name", "zebra")
    with mem.turn():
        # "feline" is in no text: by meaning, tom first
        found = mem.recall_similar("feline", hybrid=False)
        assert all(isinstance(r, Similar) for r in found)
        assert [r.entity for r in found][:1] == ["pet:tom"]
        assert found[0].distance is not None and found[0].distance < found[1].distance
        assert mem.recall("feline") == []
        # hybrid (the default): a record only the words find comes with distance None
        fused = mem.recall_similar("zebra or feline", k=3)
        by_entity = {r.entity: r for r in fused}
        assert by_entity["pet:ship"].rank > 0
        # k and the entity prefix
        assert [r.entity for r in mem.recall_similar("puppy", k=1)] == ["pet:rex"]
        assert mem.recall_similar("puppy", entity_prefix="nothing:") == []
        # an embedding given: the embedder is not asked
        calls = len(mem.embedder.calls)
        assert mem.recall_similar(None, embedding=meaning("ship"), hybrid=False, k=1)[0].entity == "pet:ship"
        assert mem.recall_similar(None, embedding=meaning("kitten"), hybrid=False, k=1)[0].entity == "pet:tom"
        assert len(mem.embedder.calls) == calls
    with pytest.raises(InvalidArgument) as err:
        with mem.turn():
            mem.recall_similar("cat", k=0)
    assert err.value.sqlstate == "22003"


def test_embed_later_and_a_langchain_shaped_embedder(valice, vadmin, vns):
    plain = Memory(valice, namespace=vns)
    with plain.turn():
        rid = plain.stage("car:1", "model", "an old automobile")
    assert embedded(vadmin, vns) == {}

    class Shaped:
        def __init__(self) -> None:
            self.queries: List[str] = []

        def embed_documents(self, texts: List[str]) -> List[List[float]]:
            return [meaning(t) for t in texts]

        def embed_query(self, text: str) -> List[float]:
            self.queries.append(text)
            return meaning(text)

    shaped = Shaped()
    mem = Memory(valice, namespace=vns, embedder=shaped, embedding_model=MODEL)
    mem.embed(rid)  # the record's own text, read under row-level security
    assert json.loads(vadmin.execute("SELECT embedding::text FROM memtx.embeddings WHERE record_id = %s",
                                     (rid,)).fetchone()[0]) == meaning("car:1 model an old automobile")
    mem.embed(rid)  # the same vector again does nothing
    with mem.turn():
        assert mem.recall_similar("car", hybrid=False)[0].record_id == rid
    assert shaped.queries == ["car"]
    # another vector for the same record and model: 23505
    with pytest.raises(Exception) as err:
        mem.embed(rid, embedding=meaning("boat"))
    assert getattr(err.value, "sqlstate", None) == "23505"


def test_failures_write_nothing(valice, vadmin, vns):
    before = records(vadmin, vns)

    def failing(texts: List[str]) -> List[List[float]]:
        raise RuntimeError("the model is down")

    mem = Memory(valice, namespace=vns, embedder=failing, embedding_model=MODEL)
    with pytest.raises(EmbeddingError, match="the embedder failed: the model is down") as err:
        mem.propose("pet:x", "a", "cat")
    assert isinstance(err.value.__cause__, RuntimeError)
    # the wrong count, a value that is no number
    for answer, message in (([], "answered 0 vectors for 1 text"),
                            ([[1.0, float("nan"), 0, 0, 0]], "not a finite number"),
                            ([["a"]], "not a sequence of numbers")):
        bad = Memory(valice, namespace=vns, embedder=lambda texts, a=answer: a, embedding_model=MODEL)
        with pytest.raises(EmbeddingError, match=message):
            bad.propose("pet:x", "a", "cat")
    # the wrong dimensions: memtx.embed refuses (22023) and the stage goes with it
    wrong = Memory(valice, namespace=vns, embedder=lambda texts: [[1.0, 2.0] for _ in texts],
                   embedding_model=MODEL)
    with wrong.turn():
        with pytest.raises(InvalidArgument, match="dimensions") as err:
            wrong.stage("pet:x", "a", "cat")
        assert err.value.sqlstate == "22023"
    # a model nobody registered
    unknown = Memory(valice, namespace=vns, embedder=Counting(), embedding_model="nobody-registered")
    with pytest.raises(NotFound, match='embedding model "nobody-registered" does not exist') as err:
        unknown.propose("pet:x", "a", "cat")
    assert "memtx.register_embedding_model" in (err.value.hint or "")
    assert records(vadmin, vns) == before
    assert embedded(vadmin, vns) == {}
    # an embedder needs a model; a session without one cannot recall by meaning
    with pytest.raises(TypeError, match="embedding_model"):
        Memory(valice, namespace=vns, embedder=Counting())
    with pytest.raises(TypeError, match="no embedder"):
        with Memory(valice, namespace=vns, embedding_model=MODEL).turn() as m:
            m.recall_similar("cat")


def test_memtx_vector_missing_is_named(alice_conn, ns):
    mem = Memory(alice_conn, namespace=ns, embedder=Counting(), embedding_model=MODEL)
    with pytest.raises(NotFound, match="memtx_vector is not installed") as err:
        mem.propose("pet:x", "a", "cat")
    assert "CREATE EXTENSION memtx_vector" in (err.value.hint or "")


def test_async_with_an_async_embedder(vdb, vadmin, vns):
    async def embed(texts: List[str]) -> List[List[float]]:
        await asyncio.sleep(0)
        return [meaning(t) for t in texts]

    async def run() -> None:
        conn = await psycopg.AsyncConnection.connect(dbname=DATABASE, user=AGENTS["alice"],
                                                     password=vdb["password"], autocommit=True)
        try:
            mem = AsyncMemory(conn, namespace=vns, embedder=embed, embedding_model=MODEL)
            async with mem.turn():
                await mem.stage("boat:1", "name", "a fast ship")
                await mem.stage("boat:2", "name", "a red car")
            async with mem.turn():
                found = await mem.recall_similar("vessel", hybrid=False, k=1)
                assert [r.entity for r in found] == ["boat:1"]
        finally:
            await conn.close()

    asyncio.run(run())
    assert embedded(vadmin, vns) == {"boat:1 name": DIMS, "boat:2 name": DIMS}


class _Stub(BaseHTTPRequestHandler):
    """An OpenAI-compatible /v1/embeddings answering meaning() of each input."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        data = [{"object": "embedding", "index": i, "embedding": meaning(t)}
                for i, t in enumerate(body["input"])]
        out = json.dumps({"object": "list", "data": data}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: Any) -> None:
        pass


def test_an_embedder_over_an_openai_compatible_endpoint(valice, vns):
    """The callable is the user's: here one that asks a local /v1/embeddings."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/embeddings"

    def remote(texts: List[str]) -> List[List[float]]:
        request = Request(url, data=json.dumps({"model": MODEL, "input": texts}).encode(),
                          headers={"content-type": "application/json"})
        with urlopen(request, timeout=10) as response:
            data = json.load(response)["data"]
        return [d["embedding"] for d in sorted(data, key=lambda d: d["index"])]

    try:
        mem = Memory(valice, namespace=vns, embedder=remote, embedding_model=MODEL)
        mem.propose("pet:tom", "species", "kitten")
        mem.propose("pet:rex", "species", "puppy")
        with mem.turn():
            assert mem.recall_similar("canine", hybrid=False, k=1)[0].entity == "pet:rex"
        server.shutdown()
        with pytest.raises(EmbeddingError, match="the embedder failed"):
            mem.propose("pet:fido", "species", "dog")
    finally:
        server.shutdown()
        server.server_close()
