"""Per-bot results over a series of games (pure; used by ``ohell play`` and benchmarks)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ohell.state import State


@dataclass
class BotTally:
    name: str
    games: int = 0
    hands: int = 0
    exact: int = 0
    points: int = 0
    wins: float = 0.0  # a shared win counts 1 / number of winners

    @property
    def mean_score(self) -> float:
        return self.points / self.games if self.games else 0.0

    @property
    def exact_rate(self) -> float:
        return self.exact / self.hands if self.hands else 0.0

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0


@dataclass
class SeriesTally:
    bots: dict[str, BotTally] = field(default_factory=dict)

    def add_game(self, state: State, seat_names: list[str]) -> None:
        """Count one finished game; several seats may share a bot name."""
        for seat, name in enumerate(seat_names):
            tally = self.bots.setdefault(name, BotTally(name))
            tally.games += 1
            tally.points += state.scores[seat]
            if seat in state.winners:
                tally.wins += 1 / len(state.winners)
            for result in state.results:
                if seat in result.participants and not result.sudden_death:
                    tally.hands += 1
                    tally.exact += result.bids[seat] == result.tricks_won[seat]
