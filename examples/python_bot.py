"""An Oh Hell agent that enters a ladder: bids its aces and kings, plays its lowest legal card.
Usage: OHELL_AGENT_TOKEN=TOKEN .venv/bin/python examples/python_bot.py ENGINE_ADDRESS MATCHMAKER_ADDRESS LADDER
(without $OHELL_AGENT_TOKEN: ENGINE_ADDRESS MATCHMAKER_ADDRESS TOKEN LADDER, where ps shows the token)"""

import os
import sys

from arena.sdk import BaseBot, run_on_ladder
from ohell.cards import rank_of

ROW = "is a row of the host's tokens file (name,agent_id,token): give the token alone, the row's last field"


class HighCards(BaseBot):
    def bid(self, obs):
        wanted = sum(rank_of(card) >= 11 for card in obs.hand)  # K, A
        return min(obs.legal_bids, key=lambda tricks: abs(tricks - wanted))

    def play(self, obs):
        return min(obs.legal_actions, key=rank_of)  # lowest legal card


if __name__ == "__main__":
    args = sys.argv[1:]
    if "OHELL_AGENT_TOKEN" in os.environ:  # the token goes third, after the two addresses
        args[2:2] = [os.environ["OHELL_AGENT_TOKEN"]]
    if len(args) == 4 and "," in args[2]:  # no token has a comma: a row of the host's tokens file
        given = "$OHELL_AGENT_TOKEN" if "OHELL_AGENT_TOKEN" in os.environ else "the token argument"
        print(f"error: {given} {ROW}", file=sys.stderr)
        sys.exit(2)
    run_on_ladder(HighCards(), *args) if len(args) == 4 else sys.exit(__doc__)
