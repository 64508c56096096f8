"""memtx_client: use memtx from an agent with no glue.

* :class:`Memory` -- one agent's session in a namespace: a memtx transaction
  per turn, the memory operations (recall, read, stage, commit, abort,
  revoke, gate, act, lookup, outcome, tool_specs) as methods, and the
  continuity layer's (propose, propose_with_retry, history, read_as_of,
  restore; on a harness's connection fence, unfence, erase, writer_epochs;
  with memtx_vector, embed and recall_similar, the session's ``embedder``
  embedding what it stages and proposes),
  with a per-session permission block (scope, readers, writers);
  :class:`AsyncMemory` is the same on psycopg's AsyncConnection;
* :func:`retrying` (and :func:`aretrying`) -- repeat a unit of work on a
  serialization failure or deadlock;
* :class:`Dispatcher` -- executes an LLM tool call (OpenAI, Anthropic or MCP
  shape) against memtx and returns a JSON-serialisable result, formatted back
  for the provider;
* errors PostgreSQL reports surface as :class:`MemtxError` subclasses that
  carry the SQLSTATE; gate refusals are results, not errors.

Requires psycopg 3 (Debian: python3-psycopg) and, for the dispatcher,
jsonschema (python3-jsonschema); pools are psycopg_pool's (python3-psycopg-pool).
"""

from .aio import AsyncMemory, aretrying
from .dispatch import (Dispatcher, Executor, ToolCall, ToolCallError, ToolResult,
                       parse_tool_call)
from .errors import (Conflict, EmbeddingError, InvalidArgument, InvalidState, LimitExceeded,
                     MemtxError, NoTransaction, NotFound, PermissionDenied,
                     Retryable, UnregisteredToolWarning)
from .memory import Memory, embedding_text, fenced_transaction, retrying
from .types import (JSON, ActResult, CommitResult, GateResult, HistoryEntry, Outcome,
                    ProposeResult, Recalled, Record, Repair, Similar, WriterEpoch)

__version__ = "0.3.0"

__all__ = [
    "Memory", "AsyncMemory", "retrying", "aretrying", "fenced_transaction", "Dispatcher", "Executor", "ToolCall", "ToolCallError", "ToolResult",
    "parse_tool_call",
    "MemtxError", "InvalidArgument", "NotFound", "PermissionDenied", "Conflict",
    "InvalidState", "LimitExceeded", "Retryable", "NoTransaction", "UnregisteredToolWarning",
    "EmbeddingError", "embedding_text", "Similar",
    "JSON", "Record", "Recalled", "CommitResult", "Repair", "GateResult", "ActResult",
    "Outcome", "ProposeResult", "HistoryEntry", "WriterEpoch",
]
