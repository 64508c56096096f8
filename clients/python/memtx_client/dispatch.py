"""Execute an LLM's tool call against memtx and shape the reply for its provider.

A tool call arrives in one of three shapes:

* OpenAI (Chat Completions): ``{"type": "function", "function": {"name", "arguments"}}``,
  ``arguments`` a JSON string, or the ``tool_calls`` item that adds ``"id"``;
* Anthropic: a ``{"type": "tool_use", "id", "name", "input"}`` content block;
* MCP: ``tools/call`` params ``{"name", "arguments"}``, or the whole JSON-RPC
  request (``{"jsonrpc", "id", "method": "tools/call", "params"}``).

``memory_*`` names run the memory operation of the same name (``memory_stage``
runs ``stage``) on the :class:`Memory` the runner holds, which supplies the
transaction and namespace: a model never names either.  A registered domain
tool is gated through ``memtx.act(tx, name, args, derived_from,
effect_key)``; when the call is allowed and the runner registered an executor
for the tool, the executor runs the effect and its return value is the
result's ``output``.  An effect key makes the decision at-most-once: a repeat
returns the same ``action_id``, and this dispatcher then returns the first
output without running the executor again.  Another process repeating the
call gets the same ``action_id`` too, so an executor should pass it to the
outside system as its idempotency key.

The arguments are checked against the tool's input schema from
``memtx.tool_specs('mcp')`` (JSON Schema 2020-12, with ``jsonschema``), the
same definitions the model was offered.  A name ``tool_specs`` does not list
-- misspelt or made up -- runs nothing and writes nothing: an MCP
``tools/call`` request gets the JSON-RPC error the protocol gives (-32602,
"Tool NAME not found"), any other call a result with ``"type":
"unknown_tool"``.  The list is read once and again whenever a name is not in
it (a tool registered later is found).

The result is a JSON-serialisable dict with ``"ok"``.  A gate refusal is a
result (``"ok": true, "allowed": false`` with the reason and blockers), and so
is every error the model can act on: arguments that do not fit the tool
(``"type": "invalid_arguments"``), an unknown tool (``"type":
"unknown_tool"``) and errors memtx reports (``"type": "memtx"`` with the
SQLSTATE), all with ``"ok": false``.  A call whose shape
is none of the three raises :class:`ToolCallError`; a session without a
transaction raises :class:`NoTransaction`; connection failures and
executor exceptions propagate.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import jsonschema

from .errors import MemtxError, NoTransaction
from .memory import Memory
from .types import ActResult, Row

#: runs an allowed domain tool call: (args, the decision) -> JSON-serialisable output
Executor = Callable[[Dict[str, Any], ActResult], Any]

class ToolCallError(ValueError):
    """The object passed is not a tool call in any of the three formats."""


@dataclasses.dataclass(frozen=True)
class ToolCall:
    """A tool call, whatever its provider: name, raw arguments, id, format."""

    name: str
    arguments: Any
    id: Optional[str]
    format: str
    #: the id of a whole MCP JSON-RPC request, when one was passed
    jsonrpc_id: Any = None


def parse_tool_call(call: Mapping[str, Any]) -> ToolCall:
    """Recognise an OpenAI, Anthropic or MCP tool call (see the module docstring)."""
    if not isinstance(call, Mapping):
        raise ToolCallError(f"a tool call is a JSON object, not {type(call).__name__}")
    if call.get("method") == "tools/call" and isinstance(call.get("params"), Mapping):
        inner = parse_tool_call(call["params"])
        return dataclasses.replace(inner, jsonrpc_id=call.get("id"))
    if isinstance(call.get("function"), Mapping):
        fn = call["function"]
        return ToolCall(_name(fn), fn.get("arguments"), call.get("id"), "openai")
    if call.get("type") == "tool_use":
        return ToolCall(_name(call), call.get("input"), call.get("id"), "anthropic")
    if "type" not in call and "name" in call:
        return ToolCall(_name(call), call.get("arguments"), None, "mcp")
    raise ToolCallError("not an OpenAI tool call, an Anthropic tool_use block or MCP tools/call params")


def _name(obj: Mapping[str, Any]) -> str:
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        raise ToolCallError("a tool call needs a non-empty string name")
    return name


@dataclasses.dataclass(frozen=True)
class ToolResult:
    """The result of one dispatched call, and its reply in the call's format."""

    call: ToolCall
    content: Dict[str, Any]
    #: (code, message) of a JSON-RPC error, for an MCP request the protocol refuses
    protocol_error: Optional[tuple[int, str]] = None

    @property
    def is_error(self) -> bool:
        return not self.content["ok"]

    def text(self) -> str:
        return json.dumps(self.content, ensure_ascii=False)

    def openai(self) -> Dict[str, Any]:
        """A Chat Completions tool message."""
        return {"role": "tool", "tool_call_id": self.call.id, "content": self.text()}

    def anthropic(self) -> Dict[str, Any]:
        """A tool_result content block (goes into the next user message)."""
        return {"type": "tool_result", "tool_use_id": self.call.id,
                "content": self.text(), "is_error": self.is_error}

    def mcp(self) -> Dict[str, Any]:
        """A tools/call result (wrapped in a JSON-RPC response when the call was a request;
        a JSON-RPC error response when the protocol refuses the request)."""
        if self.protocol_error is not None and self.call.jsonrpc_id is not None:
            code, message = self.protocol_error
            return {"jsonrpc": "2.0", "id": self.call.jsonrpc_id,
                    "error": {"code": code, "message": message}}
        result = {"content": [{"type": "text", "text": self.text()}],
                  "structuredContent": self.content, "isError": self.is_error}
        if self.call.jsonrpc_id is not None:
            return {"jsonrpc": "2.0", "id": self.call.jsonrpc_id, "result": result}
        return result

    def reply(self) -> Dict[str, Any]:
        """The reply in the format the call came in."""
        return {"openai": self.openai, "anthropic": self.anthropic, "mcp": self.mcp}[self.call.format]()


Handler = Callable[[Memory, Dict[str, Any]], Dict[str, Any]]


def _listed(rows: Sequence[Row]) -> List[Dict[str, Any]]:
    return [r.to_json() for r in rows]


def _outcome(mem: Memory, a: Dict[str, Any]) -> Dict[str, Any]:
    found = mem.outcome(**a)
    return {"outcome": None if found is None else found.to_json()}


#: How each memory tool runs on the session (its arguments are the function's,
#: checked against memtx.tool_specs first).
MEMORY_TOOLS: Dict[str, Handler] = {
    "memory_recall": lambda m, a: {"records": _listed(m.recall(**a))},
    "memory_read": lambda m, a: {"records": _listed(m.read(**a))},
    "memory_stage": lambda m, a: {"record_id": m.stage(**a)},
    "memory_commit": lambda m, a: {"results": _listed(m.commit())},
    "memory_abort": lambda m, a: {"repairs": _listed(m.abort())},
    "memory_revoke": lambda m, a: {"repairs": _listed(m.revoke(**a))},
    "memory_outcome": _outcome,
}


class InvalidArguments(Exception):
    """The arguments do not fit the tool (reported to the model as a result)."""


class UnknownTool(Exception):
    """No tool of this name is offered (reported as the protocol says: an MCP request
    gets JSON-RPC error -32602, other formats a result)."""


def check_arguments(schema: Mapping[str, Any], raw: Any) -> Dict[str, Any]:
    """The arguments as a dict that fits the tool's input schema (JSON Schema draft
    2020-12, from memtx.tool_specs): JSON text decoded, nulls of optional arguments
    dropped (models send them for what they leave out); InvalidArguments naming the
    argument when they do not fit."""
    if raw is None or raw == "":
        raw = {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as e:
            raise InvalidArguments(f"arguments are not valid JSON: {e}") from None
    if not isinstance(raw, dict):
        raise InvalidArguments("arguments must be a JSON object")
    required = set(schema.get("required", ()))
    args = {k: v for k, v in raw.items() if v is not None or k in required}
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema, format_checker=_FORMATS).iter_errors(args))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        raise InvalidArguments(f"argument {where}: {error.message}" if where else error.message)
    return args


_FORMATS = jsonschema.FormatChecker()


class Dispatcher:
    """Runs tool calls for one agent against its Memory session."""

    def __init__(self, memory: Memory, executors: Optional[Mapping[str, Executor]] = None) -> None:
        self.memory = memory
        self.executors: Dict[str, Executor] = dict(executors or {})
        # what each executed action returned: a repeat under its effect key (same
        # action_id) gets the output again instead of a second effect
        self._outputs: Dict[int, Any] = {}
        # the input schema of each tool memtx.tool_specs('mcp') lists, read when needed
        self._schemas: Optional[Dict[str, Dict[str, Any]]] = None

    def tool_specs(self, format: str = "openai") -> List[Dict[str, Any]]:
        """memtx.tool_specs(format): the definitions to offer the model."""
        return self.memory.tool_specs(format)

    def schema_of(self, name: str) -> Optional[Dict[str, Any]]:
        """The input schema tool_specs gives the tool (read again for a name not in the
        last list), or None when it lists no such tool."""
        if self._schemas is None or name not in self._schemas:
            self._schemas = {t["name"]: t["inputSchema"] for t in self.memory.tool_specs("mcp")}
        return self._schemas.get(name)

    def dispatch(self, call: Mapping[str, Any]) -> ToolResult:
        """Execute one tool call; see the module docstring for what is a result
        and what raises."""
        parsed = parse_tool_call(call)
        try:
            schema = self.schema_of(parsed.name)
            if schema is None:
                raise UnknownTool(f"Tool {parsed.name} not found")
            args = check_arguments(schema, parsed.arguments)
            handler = MEMORY_TOOLS.get(parsed.name)
            content = handler(self.memory, args) if handler else self._act(parsed.name, args)
        except UnknownTool as e:
            return ToolResult(parsed, {"ok": False, "error": {"type": "unknown_tool", "message": str(e)}},
                              protocol_error=(-32602, str(e)))
        except InvalidArguments as e:
            return ToolResult(parsed, {"ok": False, "error": {
                "type": "invalid_arguments", "message": str(e)}})
        except NoTransaction:
            raise
        except MemtxError as e:
            return ToolResult(parsed, {"ok": False, "error": {"type": "memtx", **e.to_json()}})
        return ToolResult(parsed, {"ok": True, **content})

    def handle(self, call: Mapping[str, Any]) -> Dict[str, Any]:
        """dispatch(call).reply(): the message to send back to the model.  An MCP
        ``tools/list`` request is answered too (with ``tool_specs("mcp")``), so an
        MCP server's tool methods are this one call."""
        if isinstance(call, Mapping) and call.get("method") == "tools/list":
            return {"jsonrpc": "2.0", "id": call.get("id"),
                    "result": {"tools": self.tool_specs("mcp")}}
        return self.dispatch(call).reply()

    def _act(self, tool: str, args: Dict[str, Any]) -> Dict[str, Any]:
        # the tool is listed by tool_specs, hence registered: no warning to give
        decision = self.memory.act(tool, args["args"], args.get("derived_from", ()),
                                   args.get("effect_key"), allow_unregistered=True)
        content = decision.to_json()
        executor = self.executors.get(tool)
        if decision.allowed and executor is not None and decision.action_id is not None:
            if decision.action_id not in self._outputs:
                self._outputs[decision.action_id] = executor(args["args"], decision)
            content["output"] = self._outputs[decision.action_id]
        return content
