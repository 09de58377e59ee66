"""Class 1: deals are secret. Ladder matches run on a real stack; an attacker who knows every
public thing (match ids, its own cards, every public RPC and the engine's code) tries to predict
the other seats' cards from seeds derived from what is public, and does no better than chance.
Each record, once finished, publishes the seed that really dealt its cards."""

from __future__ import annotations

import hashlib
import json
import math
import random

import grpc
import pytest

from arena.embedded_redis import EmbeddedRedis
from arena.local.stack import Stack, StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2
from arena.rpc.auth import auth_metadata
from ohell.cards import card_str, cards_of
from ohell.rules import Rules
from ohell.state import Game, Phase

pytestmark = pytest.mark.slow  # a whole stack

MATCHES = 40
HAND = 5
SEATS = 4


def first_deal(seed: int) -> list[set[str]]:
    """The first hand's cards per seat if ``seed`` dealt them (the engine is public)."""
    state = Game(Rules(hand_sizes=(HAND,)), SEATS).new_state()
    rng = random.Random(seed)
    while state.phase <= Phase.DEAL:
        state.chance_random(rng)
    return [{card_str(c) for c in cards_of(mask)} for mask in state.hands]


def public_guesses(match_id: str) -> list[int]:
    """Seeds an attacker can derive from the match id (the old scheme among them)."""
    digest = hashlib.sha256(match_id.encode()).digest()
    number = int(match_id.rsplit("-", 1)[1])
    return [int.from_bytes(digest[:6], "big"), int.from_bytes(digest[:8], "big"), number, number - 1]


def test_other_hands_cannot_be_predicted(redis_server: EmbeddedRedis) -> None:
    config = StackConfig(
        redis_url=redis_server.url, engine=False, remote_worker=False, matchmaker_args=("--tick", "0.02")
    )
    stack = Stack(config).start()
    try:
        with grpc.insecure_channel(stack.matchmaker_address) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            host = auth_metadata(stack.host_token)
            ladder = pb.Ladder(name="secret", rules=rules_pb2.Rules(hand_sizes=[HAND]), seats=SEATS, base_window=50)
            stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=host)
            for index in range(SEATS * 2):
                agent = stub.RegisterAgent(
                    pb.RegisterAgentRequest(name=f"bot{index}", kind=pb.AGENT_KIND_BUILTIN, bot="random"), metadata=host
                )
                stub.JoinQueue(
                    pb.JoinQueueRequest(ladder="secret", agent_id=agent.agent.agent_id),
                    metadata=auth_metadata(agent.token),
                )
            records = finished_records(stub)
    finally:
        stack.cleanup(graceful=False)
    rng = random.Random(7)
    correct = total = seed_hits = 0
    seeds = set()
    for record in records:
        deal = [set(cards) for cards in record["hands"][0]["deal"]]
        assert first_deal(record["seed"]) == deal  # the published seed is the one that dealt
        seeds.add(record["seed"])
        mine = deal[0]  # the attacker sits in seat 0 and sees its own cards
        guess = None
        for candidate in public_guesses(record["match_id"]):
            predicted = first_deal(candidate)
            if predicted[0] == mine:
                seed_hits += 1
                guess = predicted
        if guess is None:  # nothing derived from public data fits: guess at random
            unseen = sorted(set().union(*deal[1:]) | set(_rest(deal)))
            rng.shuffle(unseen)
            guess = [mine] + [set(unseen[i * HAND : (i + 1) * HAND]) for i in range(SEATS - 1)]
        for seat in range(1, SEATS):
            correct += len(guess[seat] & deal[seat])
            total += HAND
    assert len(seeds) == len(records)
    assert seed_hits == 0
    p = HAND / (52 - HAND)  # chance that a guessed card is in the opponent's hand
    expected, spread = total * p, math.sqrt(total * p * (1 - p))
    assert correct <= expected + 5 * spread, f"{correct} of {total} cards guessed (chance: {expected:.0f})"


def _rest(deal: list[set[str]]) -> set[str]:
    """Cards dealt to nobody (the attacker cannot tell them from the opponents' cards)."""
    everything = {card_str(c) for c in range(52)}
    return everything - set().union(*deal)


def finished_records(stub: matchmaker_pb2_grpc.MatchmakerServiceStub) -> list[dict]:
    """Every finished match's record, through the public RPCs only."""
    import time

    deadline = time.monotonic() + 90
    while True:
        listed = stub.ListMatches(pb.ListMatchesRequest(ladder="secret", page_size=500)).matches
        if len(listed) >= MATCHES:
            break
        assert time.monotonic() < deadline, f"only {len(listed)} matches finished"
        time.sleep(0.2)
    return [json.loads(stub.GetMatch(pb.GetMatchRequest(match_id=m.match_id)).record_json) for m in listed]
