"""Match records as stored bytes (arena.record_codec): what the ladder writes, the archive and GetMatch read."""

from __future__ import annotations

import json
import zlib

from arena.ladder.matchplay import play_builtin
from arena.play.specs import SeatSpec
from arena.record_codec import pack_record, unpack_record, unpack_record_json
from ohell.presets import preset


def a_record() -> dict[str, object]:
    seats = [SeatSpec("builtin", f"bot-{seat}", bot="heuristic" if seat % 2 else "random") for seat in range(4)]
    return play_builtin("codec-1", preset("classic"), seats, seed=7)


def test_a_packed_record_reads_back_equal_and_its_length_is_the_compact_json_s() -> None:
    record = a_record()
    blob, raw_bytes = pack_record(record)
    assert unpack_record(blob) == record
    compact = json.dumps(record, separators=(",", ":")).encode()
    assert raw_bytes == len(compact) == len(zlib.decompress(blob))
    assert json.loads(unpack_record_json(blob)) == record


def test_records_stored_before_the_codec_by_the_standard_library_still_read() -> None:
    record = a_record()
    blob = zlib.compress(json.dumps(record).encode(), 3)  # how the archive's writer compressed them
    assert unpack_record(blob) == record
    assert json.loads(unpack_record_json(blob)) == record
