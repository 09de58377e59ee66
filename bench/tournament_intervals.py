"""How often the standings' 95 % interval holds an entrant's true mean, by its number of deals: an
entrant whose deals' mean duplicate points are drawn from a normal law around 0 (beside one that
scores 0), ``standings`` with 1,000 resamples, the share of intervals holding 0; ``--percentile``
measures the bootstrap's 2.5 % and 97.5 % percentiles the standings used before 3 Dec 2026. Last
line:

    tournament_intervals: deals=<n>:<share> ... (t|percentile)

Usage: python bench/tournament_intervals.py [--intervals 1000] [--percentile]
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence

from arena.tournament import standings as st
from arena.tournament.standings import Observation, standings

DEALS = (2, 3, 5, 10, 20, 40)


def percentile(mean: float, resampled: Sequence[float], deals: int, level: float = 0.95) -> tuple[float, float]:
    tail = (1 - level) / 2
    return st._percentile(resampled, tail), st._percentile(resampled, 1 - tail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--intervals", type=int, default=1000)
    parser.add_argument("--percentile", action="store_true")
    args = parser.parse_args()
    if args.percentile:
        st.interval = percentile  # type: ignore[assignment]
    rng = random.Random(7)
    shares = []
    for deals in DEALS:
        held = 0
        for number in range(args.intervals):
            observations = [Observation(f"d{k}", "a", rng.gauss(0, 1), 0) for k in range(deals)]
            observations += [Observation(f"d{k}", "b", 0.0, 0) for k in range(deals)]
            row = next(row for row in standings(observations, replicates=1000, seed=number) if row.entrant == "a")
            held += row.ci_low is not None and row.ci_high is not None and row.ci_low <= 0 <= row.ci_high
        shares.append(f"deals={deals}:{held / args.intervals:.3f}")
        print(shares[-1], flush=True)
    print("tournament_intervals:", " ".join(shares), "percentile" if args.percentile else "t")


if __name__ == "__main__":
    main()
