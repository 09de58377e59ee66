"""A wide table on a phone scrolls sideways inside its ``.scroll`` box, which said nothing of it: the
table looked cut at the screen's edge. A shadow now marks each edge with more table beyond it (CSS
alone, in style.css). Chromium draws the app's stylesheet; the pixels at the box's edges are read."""

from __future__ import annotations

import struct
import zlib
from typing import Any

from .conftest import serve_pages

ROW = "".join('<td style="min-width: 90px; height: 60px"></td>' for _ in range(12))
PAGE = f"""<!doctype html><html><head><link rel="stylesheet" href="/static/style.css"></head>
<body><main><div class="scroll" id="wide"><table><tbody><tr>{ROW}</tr></tbody></table></div>
<div class="scroll" id="narrow"><table><tbody><tr><td style="height: 60px">fits</td></tr></tbody></table></div>
</main></body></html>"""


def png_rows(data: bytes) -> list[bytes]:
    """The rows of an 8-bit RGB or RGBA PNG (what Chromium's screenshots are), unfiltered."""
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", data[16:29])
    assert depth == 8 and color in (2, 6) and not interlace, (depth, color, interlace)
    channels = 3 if color == 2 else 4
    chunks, at = [], 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        if kind == b"IDAT":
            chunks.append(data[at + 8 : at + 8 + length])
        at += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif kind == 4:
                guess = left + up - corner
                near = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
                line[x] = (line[x] + near[2]) & 255
        rows.append(bytes(line[i] for i in range(stride) if i % channels < 3))  # RGB only
        previous = line
    return rows


def edges(page: Any, box: str) -> tuple[int, int]:
    """The darkest red value within 4 px of the box's left edge and of its right edge, halfway down."""
    rows = png_rows(page.locator(box).screenshot())
    middle = rows[len(rows) // 2]
    reds = middle[0::3]
    return min(reds[:4]), min(reds[-4:])


def test_a_wide_table_has_a_shadow_at_each_edge_it_can_scroll_to(page: Any) -> None:
    page.set_viewport_size({"width": 390, "height": 600})
    serve_pages(page, {"/wide": (PAGE, "text/html")})
    page.goto("http://web.test/wide")
    left, right = edges(page, "#wide")
    assert left == 255 and right < 235, (left, right)  # at its start: more table to the right
    page.evaluate("document.getElementById('wide').scrollLeft = 300")
    left, right = edges(page, "#wide")
    assert left < 235 and right < 235, (left, right)  # midway: more on both sides
    page.evaluate("const box = document.getElementById('wide'); box.scrollLeft = box.scrollWidth")
    left, right = edges(page, "#wide")
    assert left < 235 and right == 255, (left, right)  # at its end: more to the left only
    assert edges(page, "#narrow") == (255, 255)  # a table that fits: no shadow
