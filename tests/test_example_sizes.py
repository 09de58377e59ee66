"""The sizes the docs give the example bots ("a complete bot in 31 lines") are their files' sizes:
docs/protocol.md said bot.js was 189 lines long after it had grown to 194."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZE = re.compile(r"`(examples/[\w/]+\.(?:py|js))`[^`]{0,40}?(?:\(| in )(\d+)\s+lines")


def test_every_example_size_the_docs_give_is_true() -> None:
    claims = [
        (doc.name, path, int(lines))
        for doc in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
        for path, lines in SIZE.findall(re.sub(r"\s+", " ", doc.read_text()))
    ]
    assert {path for _, path, _ in claims} >= {"examples/python_bot.py", "examples/node/bot.js"}, claims
    wrong = [
        (doc, path, lines, actual)
        for doc, path, lines in claims
        if lines != (actual := len((ROOT / path).read_text().splitlines()))
    ]
    assert not wrong, f"(doc, file, lines said, lines): {wrong}"
