"""docs/protocol.md's Observation table stays in step with ``ohell.observation.Observation`` (every
field and property, with its type) and with the ``ohell.v1.Observation`` message (every field is
named as the source of a row, or listed as wire-only)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from arena.proto.ohell.v1 import match_pb2
from ohell.observation import Observation

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"


def table_rows() -> list[list[str]]:
    text = DOC.read_text()
    start, end = text.index("<!-- observation-table -->"), text.index("<!-- /observation-table -->")
    rows = [line for line in text[start:end].splitlines() if line.startswith("| `")]
    return [[cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]


def python_members() -> dict[str, str]:
    members = {field.name: str(field.type) for field in dataclasses.fields(Observation)}
    for name, value in vars(Observation).items():
        if isinstance(value, property):
            members[name] = value.fget.__annotations__["return"]  # type: ignore[union-attr]
    return members


def test_every_field_and_property_is_documented_with_its_type() -> None:
    rows = table_rows()
    documented = {row[0].strip("`"): row[1].strip("`") for row in rows}
    assert len(documented) == len(rows), "a field is documented twice"
    assert documented == python_members()
    assert all(row[2] for row in rows), "every row says what the field means"


def test_every_proto_observation_field_is_a_documented_source() -> None:
    rows = table_rows()
    sources = {name.strip("` ") for row in rows for name in row[3].split(",") if name.strip()}
    proto_fields = {field.name for field in match_pb2.Observation.DESCRIPTOR.fields}
    text = DOC.read_text()
    wire_only = set(re.findall(r"`(\w+)`", text[text.index("On the wire only:") :].split("\n\n")[0]))
    assert proto_fields <= sources | wire_only, proto_fields - sources - wire_only
    for source in sources:  # and every named source exists
        message, _, field = source.rpartition(".")
        descriptor = getattr(match_pb2, message or "Observation").DESCRIPTOR
        assert field in descriptor.fields_by_name, source
