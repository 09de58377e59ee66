"""A complete Oh Hell agent: bids its aces and kings, follows suit with its lowest card.
Run: python examples/python_bot.py HOST:PORT TOKEN   (see docs/protocol.md)"""

import sys

from arena.sdk import BaseBot, connect
from ohell.cards import rank_of


class HighCards(BaseBot):
    def bid(self, obs):
        wanted = sum(rank_of(card) >= 11 for card in obs.hand)  # K, A
        return min(obs.legal_bids, key=lambda tricks: abs(tricks - wanted))

    def play(self, obs):
        return min(obs.legal_actions, key=rank_of)  # lowest legal card


if __name__ == "__main__":
    connect(HighCards(), sys.argv[1], token=sys.argv[2])
