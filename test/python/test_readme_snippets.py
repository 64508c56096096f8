"""The README's section "Using memtx from an agent" runs as written.

Takes the section from README.md and runs its ```python blocks in order, in one namespace, against the
server the PG* environment names (as a superuser), in a database of its own
(memtx_snippets, made fresh and dropped; the roles the blocks create are
dropped before and after).  Comment lines right after a line that prints are
the output the README shows: each block must print exactly those lines.
"""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

import psycopg
import pytest
from psycopg import sql

ROOT = pathlib.Path(__file__).resolve().parents[2]
SECTION = "Using memtx from an agent"
SOURCES = (ROOT / "README.md",)
DATABASE = "memtx_snippets"


def extract_section(markdown: str, title: str) -> Optional[str]:
    """The text under the heading `title` up to the next heading of its level or
    higher (headings inside code fences do not count); None without one."""
    level = 0
    body: List[str] = []
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        heading = None if fenced else re.match(r"^(#+)\s+(.*?)\s*$", line)
        if not level:
            if heading and heading.group(2) == title:
                level = len(heading.group(1))
            continue
        if heading and len(heading.group(1)) <= level:
            break
        body.append(line)
    return "\n".join(body) if level else None


def python_blocks(text: str) -> List[str]:
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def expected_output(block: str) -> List[str]:
    """The comment lines that directly follow a line that prints, '# ' removed."""
    out: List[str] = []
    after_print = False
    for line in block.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            if after_print:
                out.append(stripped[1:].removeprefix(" "))
            continue
        after_print = "print(" in line
    return out


def the_section() -> Tuple[str, str]:
    for path in SOURCES:
        if path.exists():
            text = extract_section(path.read_text(encoding="utf-8"), SECTION)
            if text is not None:
                return path.name, text
    raise AssertionError(f'no section "{SECTION}" in ' + " or ".join(p.name for p in SOURCES))


def _drop(admin: "psycopg.Connection[Any]", roles: List[str]) -> None:
    admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
    for role in roles:
        admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


@pytest.fixture
def snippet_database() -> Iterator[None]:
    """A fresh database as PGDATABASE, without the roles the snippets create."""
    roles = re.findall(r"CREATE ROLE (\w+)", the_section()[1])
    saved = os.environ.get("PGDATABASE")
    with psycopg.connect(autocommit=True) as admin:
        _drop(admin, roles)
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    os.environ["PGDATABASE"] = DATABASE
    try:
        yield
    finally:
        if saved is None:
            del os.environ["PGDATABASE"]
        else:
            os.environ["PGDATABASE"] = saved
        with psycopg.connect(autocommit=True) as admin:
            _drop(admin, roles)


def test_section_reading() -> None:
    doc = "# T\n## Using memtx from an agent\ntext\n```python\nprint(1)\n# 1\n## not a heading\n```\n" \
          "### sub\n```python\nx = 2  # set\n# not output\nprint(x)  # shows\n# 2\n\n# prose\n```\n## Next\n"
    text = extract_section(doc, SECTION)
    assert text is not None and "## Next" not in text and "### sub" in text
    assert python_blocks(text) == ["print(1)\n# 1\n## not a heading\n",
                                   "x = 2  # set\n# not output\nprint(x)  # shows\n# 2\n\n# prose\n"]
    assert [expected_output(b) for b in python_blocks(text)] == [["1", "# not a heading"], ["2"]]
    assert extract_section(doc, "Missing") is None


def test_section_shows_each_part() -> None:
    _, text = the_section()
    code = "\n".join(python_blocks(text))
    assert len(python_blocks(text)) >= 5
    for shown in ("Memory(", ".turn()", ".stage(", ".commit()", ".gate(", ".recall(", ".lookup(",
                  ".revoke(", "Dispatcher(", "tool_specs(", '"tool_use"', '"tools/call"',
                  '"function"', ".propose(", ".outcome(", ".fence(", ".unfence("):
        assert shown in code, f"the section shows no {shown}"


def test_snippets_run_and_print_what_they_show(snippet_database: None) -> None:
    source, text = the_section()
    scope: Dict[str, Any] = {"__name__": "readme_snippets"}
    try:
        for number, block in enumerate(python_blocks(text), 1):
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(block, f"{source}, python block {number}", "exec"), scope)
            assert printed.getvalue().splitlines() == expected_output(block), \
                f"python block {number} of {source} printed other lines than it shows"
    finally:
        for value in scope.values():
            if isinstance(value, psycopg.Connection):
                value.close()
