"""Compare our engine with OpenSpiel's ``oh_hell`` on any number of random hands.

    python bench/conformance.py --hands 100000 [--seed 0] [--players 3-7]

Hands cycle over every (players, hand size) OpenSpiel allows. The last line is
``conformance: hands=<n> disagreements=<d>``; the exit status is 1 when d > 0.
"""

from __future__ import annotations

import argparse
import sys
import time

from arena.conformance import ConformanceUnavailable, run
from ohell.rules import MAX_PLAYERS, MIN_PLAYERS


def _players(text: str) -> range:
    low, _, high = text.partition("-")
    try:
        first, last = int(low), int(high or low)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--players {text!r} must look like 4 or 3-7") from None
    if not MIN_PLAYERS <= first <= last <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(f"--players {text!r} must lie within {MIN_PLAYERS}-{MAX_PLAYERS}")
    return range(first, last + 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=10_000, help="hands to play (default 10000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=_players, default=range(MIN_PLAYERS, MAX_PLAYERS + 1))
    args = parser.parse_args(argv)
    if args.hands < 1:
        parser.error(f"--hands must be at least 1, got {args.hands}")
    started = time.perf_counter()
    try:
        report = run(args.hands, seed=args.seed, players=args.players)
    except ConformanceUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - started
    for example in report.examples:
        print(f"disagreement: {example}")
    print(f"cases (players, hand size) covered: {len(report.cases)}; {elapsed:.1f} s")
    print(f"conformance: hands={report.hands} disagreements={report.disagreements}")
    return 1 if report.disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
