"""arena/keys.py's table of keys names every key ``Keys`` builds: "Every Redis key of every process, in
one place" is what a reader (and an operator sizing or cleaning a Redis) takes it for."""

from __future__ import annotations

import re

from arena import keys


def test_the_table_of_keys_names_every_template() -> None:
    """``agent-names-alike`` and ``self-registered`` (look-alike names, the self-registration cap)
    came without a row."""
    rows = re.findall(r"^\s+\{p\}(\S+)", keys.__doc__ or "", re.M)
    missing = [
        template
        for template in keys.TEMPLATES.values()
        if not any(re.fullmatch(re.escape(template).replace(r"\{\}", r"\{[A-Za-z_]+\}"), row) for row in rows)
    ]
    assert not missing, missing
