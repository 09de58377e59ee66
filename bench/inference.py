"""How well the strong bot's inference reads the hidden cards, 4 seats.

    python bench/inference.py [--games 10] [--first 0] [--draws 400] [--play-mismatch X] [--bid-miss Y]

The strong bot plays against 3 heuristic bots on ``classic`` (game ``g`` dealt from seed ``g``,
the strong bot in seat ``g % 4``, as in bench/bots.py). At each of its searched decisions with
evidence to weigh (bids made, cards the others chose), ``--draws`` deals are drawn as the bot
draws them and weighed by its model (``ohell.bots.inference.deal_fit``), and the true deal is
weighed too. Per phase (bid, play) it reports, averaged over decisions:

- ``ess``: the effective sample size of the weights, as a share of the draws
  ((sum w)^2 / sum w^2 / draws; 1 when every deal weighs the same);
- ``rank``: the share of the draws weighing more than the true deal (ties count half; 0.5 is
  what an uninformed model gives, 0 means the true deal weighs the most);
- ``hit``: the weighted share of the draws placing each hidden card with its true holder,
  averaged over the other seats' hidden cards; ``prior`` is the same with equal weights.

``--play-mismatch`` and ``--bid-miss`` set the model's factors for a card or a bid the heuristic
would not have chosen (``inference.PLAY_MISMATCH``, ``sampling.BID_MISS``) for the probe and the
bot alike. The heuristic bots are the model's own player, so a sound model never weighs the true deal
down; what the figures show is how much of the deal the evidence pins down and how many
distinct deals survive the weighing.

The last line is ``inference: bid_ess=<..> bid_rank=<..> bid_hit=<..> play_ess=<..>
play_rank=<..> play_hit=<..> prior_hit=<..>`` (prior_hit: play decisions, equal weights).
"""

from __future__ import annotations

import argparse
import random
from collections import defaultdict

from ohell.bots import inference, make_bot, sampling
from ohell.bots.base import Bot
from ohell.bots.inference import deal_fit
from ohell.bots.sampling import HiddenDeal
from ohell.bots.strong import StrongBot
from ohell.cards import cards_of
from ohell.match import play_game
from ohell.observation import Observation, observe
from ohell.presets import preset
from ohell.state import Game, Phase, State

PLAYERS = 4


def measure(state: State, seat: int, rng: random.Random, draws: int, sums: dict[str, list[float]]) -> None:
    """Weigh ``draws`` deals and the true one for ``seat``'s decision; add the figures to ``sums``."""
    obs = observe(state, seat)
    hidden = HiddenDeal.from_observation(obs)
    fit = deal_fit(obs, hidden)
    if fit is None:
        return
    me = hidden.seat_pos
    others = [pos for pos, count in enumerate(hidden.counts) if count and pos != me]
    truth = [state.hands[s] for s in obs.participants]

    def weigh(hands: list[int]) -> float:
        weight = 1.0
        for pos in others:
            weight *= fit(pos, hands[pos])
        return weight

    drawn = [hidden.sample(rng)[0] for _ in range(draws)]
    weights = [weigh(hands) for hands in drawn]
    total = sum(weights)
    true_weight = weigh(truth)
    phase = "bid" if obs.phase == Phase.BID else "play"
    rank = sum(1.0 if w > true_weight else 0.5 if w == true_weight else 0.0 for w in weights) / draws
    hit = prior = 0.0
    cards = 0
    for pos in others:
        for card in cards_of(truth[pos] & hidden.unknown):
            holds = [(hands[pos] >> card) & 1 for hands in drawn]
            hit += sum(w for w, held in zip(weights, holds, strict=True) if held) / total
            prior += sum(holds) / draws
            cards += 1
    for name, value in (
        ("ess", total * total / sum(w * w for w in weights) / draws),
        ("rank", rank),
        ("hit", hit / cards),
        ("prior", prior / cards),
    ):
        sums[f"{phase}_{name}"].append(value)


class Probe:
    """The strong bot, measuring the inference before each of its decisions on the true state."""

    name = "strong"

    def __init__(self, seed: int, rng: random.Random, draws: int, sums: dict[str, list[float]]) -> None:
        self.bot = StrongBot(seed)
        self.rng = rng
        self.draws = draws
        self.sums = sums
        self.state: State | None = None  # the game's state, caught at its first deal

    def _measure(self, obs: Observation) -> None:
        if self.state is not None and len(obs.legal_actions) > 1:
            measure(self.state, obs.seat, self.rng, self.draws, self.sums)

    def bid(self, obs: Observation) -> int:
        self._measure(obs)
        return self.bot.bid(obs)

    def play(self, obs: Observation) -> int:
        self._measure(obs)
        return self.bot.play(obs)


def run(games: int, first: int, draws: int) -> dict[str, list[float]]:
    sums: dict[str, list[float]] = defaultdict(list)
    rng = random.Random(first)
    for game_index in range(first, first + games):
        seat = game_index % PLAYERS
        bots: list[Bot] = [make_bot("heuristic", game_index * PLAYERS + s) for s in range(PLAYERS)]
        probe = Probe(game_index * PLAYERS + seat, rng, draws, sums)
        bots[seat] = probe
        deal_rng = random.Random(game_index)  # as play_game deals from its seed

        def chance(state: State, probe: Probe = probe, deal_rng: random.Random = deal_rng) -> None:
            probe.state = state
            state.chance_random(deal_rng)

        play_game(Game(preset("classic"), PLAYERS), bots, seed=game_index, chance=chance)
    return sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=10, help="classic games (default 10)")
    parser.add_argument("--first", type=int, default=0, help="first game's seed (default 0)")
    parser.add_argument("--draws", type=int, default=400, help="deals drawn per decision (default 400, the bot's most)")
    parser.add_argument("--play-mismatch", type=float, help="weight of a card the policy would not play")
    parser.add_argument("--bid-miss", type=float, help="most weight of a bid the heuristic would not make")
    args = parser.parse_args()
    if args.games < 1 or args.draws < 1:
        parser.error("--games and --draws must be positive")
    if args.play_mismatch is not None:
        inference.PLAY_MISMATCH = args.play_mismatch
    if args.bid_miss is not None:
        sampling.BID_MISS = args.bid_miss
    sums = run(args.games, args.first, args.draws)

    def mean(key: str) -> float:
        values = sums.get(key, [])
        return sum(values) / len(values) if values else 0.0

    print(
        f"{args.games} classic games from seed {args.first}, strong vs 3 heuristic, {args.draws} draws a decision, "
        f"play mismatch {inference.PLAY_MISMATCH}, bid miss {sampling.BID_MISS}"
    )
    print(f"{'phase':<6} {'decisions':>9} {'ess':>7} {'rank':>7} {'hit':>7} {'prior hit':>10}")
    for phase in ("bid", "play"):
        print(
            f"{phase:<6} {len(sums.get(f'{phase}_ess', [])):>9} {mean(f'{phase}_ess'):>7.3f} "
            f"{mean(f'{phase}_rank'):>7.3f} {mean(f'{phase}_hit'):>7.3f} {mean(f'{phase}_prior'):>10.3f}"
        )
    print(
        f"inference: bid_ess={mean('bid_ess'):.3f} bid_rank={mean('bid_rank'):.3f} bid_hit={mean('bid_hit'):.3f} "
        f"play_ess={mean('play_ess'):.3f} play_rank={mean('play_rank'):.3f} play_hit={mean('play_hit'):.3f} "
        f"prior_hit={mean('play_prior'):.3f}"
    )


if __name__ == "__main__":
    main()
