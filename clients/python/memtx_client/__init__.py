"""memtx_client: use memtx from an agent with no glue.

* :class:`Memory` -- one agent's session in a namespace: a memtx transaction
  per turn, the memory operations (recall, read, stage, commit, abort,
  revoke, gate, act, lookup, outcome, tool_specs) as methods, and the
  continuity layer's (propose, history, read_as_of, restore; on a harness's
  connection fence, unfence, erase, writer_epochs);
* :class:`Dispatcher` -- executes an LLM tool call (OpenAI, Anthropic or MCP
  shape) against memtx and returns a JSON-serialisable result, formatted back
  for the provider;
* errors PostgreSQL reports surface as :class:`MemtxError` subclasses that
  carry the SQLSTATE; gate refusals are results, not errors.

Requires psycopg 3 (Debian: python3-psycopg).
"""

from .dispatch import (Dispatcher, Executor, ToolCall, ToolCallError, ToolResult,
                       parse_tool_call)
from .errors import (Conflict, InvalidArgument, InvalidState, LimitExceeded,
                     MemtxError, NoTransaction, NotFound, PermissionDenied,
                     Retryable)
from .memory import Memory
from .types import (JSON, ActResult, CommitResult, GateResult, HistoryEntry, Outcome,
                    ProposeResult, Recalled, Record, Repair, WriterEpoch)

__all__ = [
    "Memory", "Dispatcher", "Executor", "ToolCall", "ToolCallError", "ToolResult",
    "parse_tool_call",
    "MemtxError", "InvalidArgument", "NotFound", "PermissionDenied", "Conflict",
    "InvalidState", "LimitExceeded", "Retryable", "NoTransaction",
    "JSON", "Record", "Recalled", "CommitResult", "Repair", "GateResult", "ActResult",
    "Outcome", "ProposeResult", "HistoryEntry", "WriterEpoch",
]
