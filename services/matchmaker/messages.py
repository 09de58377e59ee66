"""The matchmaker's conversions between the ladder's model and its protobuf messages."""

from __future__ import annotations

from dataclasses import replace

from arena.archive import queries
from arena.ladder.model import AGENT_KINDS, Agent, Ladder, Standing
from arena.ladder.store import StoreError
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.wire import ENTRY_NAMES, ENTRY_OF, rules_from_proto, rules_to_proto
from ohell.presets import preset
from services.matchmaker import history

KIND_NAMES = dict(
    zip(AGENT_KINDS, (pb.AGENT_KIND_BUILTIN, pb.AGENT_KIND_CONNECTED, pb.AGENT_KIND_ENDPOINT), strict=True)
)
KIND_OF = {number: name for name, number in KIND_NAMES.items()}


def agent_to_proto(agent: Agent) -> pb.Agent:
    return pb.Agent(
        agent_id=agent.agent_id,
        name=agent.name,
        kind=KIND_NAMES[agent.kind],
        version=agent.version,
        bot=agent.bot,
        endpoint=agent.endpoint,
        house=agent.house,
        self_registered=agent.self_registered,
        revoked=agent.revoked,
        revoked_ms=agent.revoked_ms,
    )


def ladder_to_proto(ladder: Ladder) -> pb.Ladder:
    rules = rules_to_proto(ladder.rules())
    rules.preset = ladder.preset
    return pb.Ladder(
        name=ladder.name,
        rules=rules,
        seats=ladder.seats,
        house_fill=ladder.house_fill,
        fill_after_seconds=ladder.fill_after_s,
        house_bots=ladder.house_bots,
        base_window=ladder.base_window,
        widen_per_second=ladder.widen_per_s,
        entry=ENTRY_NAMES[ladder.entry],
        paused=ladder.paused,
    )


def ladder_from_proto(message: pb.Ladder) -> Ladder:
    if message.entry not in ENTRY_OF:
        raise StoreError(f"ladder.entry: {message.entry} is not a LadderEntry", "ladder.entry")
    rules = rules_from_proto(message.rules, "ladder.rules")
    base = preset(message.rules.preset) if message.rules.preset else type(rules)()
    overrides = {k: v for k, v in rules.to_dict().items() if base.to_dict()[k] != v}
    defaults = Ladder(message.name)
    return replace(
        defaults,
        preset=message.rules.preset,
        overrides=overrides,
        seats=message.seats or defaults.seats,
        house_fill=message.house_fill,
        fill_after_s=message.fill_after_seconds,
        house_bots=tuple(message.house_bots),
        base_window=message.base_window or defaults.base_window,
        widen_per_s=message.widen_per_second or defaults.widen_per_s,
        entry=ENTRY_OF[message.entry],
    )


def standing_to_proto(s: Standing) -> pb.Standing:
    return pb.Standing(
        rank=s.rank,
        agent_id=s.agent_id,
        name=s.name,
        mu=s.mu,
        sigma=s.sigma,
        ordinal=s.ordinal,
        games=s.games,
        hands=s.hands,
        exact_bids=s.exact,
        exact_bid_rate=s.exact_rate,
        faults=s.faults,
        forfeits=s.forfeits,
        wins=s.wins,
    )


def match_to_proto(m: history.MatchView) -> pb.MatchSummary:
    return pb.MatchSummary(
        match_id=m.match_id,
        ladder=m.ladder,
        state=m.state,
        agent_ids=m.agent_ids,
        created_ms=m.created_ms,
        finished_ms=m.finished_ms,
        attempts=m.attempts,
        agent_names=m.agent_names,
        totals=m.totals,
        winners=m.winners,
        archived=m.archived,
        faults=m.faults,
    )


def point_to_proto(p: queries.RatingPoint) -> pb.RatingPoint:
    return pb.RatingPoint(
        match_id=p.match_id,
        finished_ms=p.finished_ms,
        mu_before=p.mu_before,
        sigma_before=p.sigma_before,
        mu_after=p.mu_after,
        sigma_after=p.sigma_after,
    )
