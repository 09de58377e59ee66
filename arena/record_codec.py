"""Match records as stored bytes: compact JSON, zlib-compressed (Redis until archived, then the archive).

One place for the encoding both the ladder's store and the archive use. orjson writes a full classic
game's record in ~0.03 ms where the standard library takes ~0.36 ms, and every light game on a worker
pays it (docs/benchmarks.md, Ladder); the bytes are the same compact JSON either would write.
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson

# zlib level of records in Redis (and so in the archive). A full classic game's record, 20.8 KB of
# compact JSON: level 1 0.12 ms -> 5.5 KB, level 2 0.13 ms -> 5.0 KB, level 3 0.17 ms -> 4.7 KB,
# level 6 0.53 ms -> 4.0 KB. Paid by every light game on the worker (docs/benchmarks.md, Ladder).
RECORD_COMPRESSION = 2


def record_json(record: dict[str, Any]) -> bytes:
    """The record as compact JSON (no blanks after separators), keys in the order the record has them."""
    return orjson.dumps(record)


def pack_record(record: dict[str, Any], level: int = RECORD_COMPRESSION) -> tuple[bytes, int]:
    """(zlib of the record's compact JSON, the JSON's length in bytes)."""
    raw = record_json(record)
    return zlib.compress(raw, level), len(raw)


def unpack_record(blob: bytes) -> dict[str, Any]:
    """The record a ``pack_record`` blob holds."""
    return dict(orjson.loads(zlib.decompress(blob)))


def unpack_record_json(blob: bytes) -> str:
    """The record's JSON text as stored, for a caller that passes it on (not parsed and written again)."""
    return zlib.decompress(blob).decode()
