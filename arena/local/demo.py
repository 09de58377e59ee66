"""``ohell demo``: built-in bots on a local ladder through the real stack (embedded Redis, the
matchmaker, Celery worker processes), with a progress bar and the leaderboard at the end."""

from __future__ import annotations

import argparse
import time

import grpc
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.local.config import check_address
from arena.local.output import text_console
from arena.local.stack import Stack, StackConfig, stop_on_signals
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc
from arena.rpc.auth import auth_metadata
from arena.wire import fixed, given_rules, rules_to_proto, win_share
from ohell.bots import BOT_FACTORIES
from ohell.errors import OhHellError

console = text_console()
DEMO_LADDER = "demo"
DEMO_OPTIONS = ["hand_sizes=[5,4,3,2,1]"]  # a short game keeps the demo near a minute with the strong bot
# A window wider than any rating gap: tables are drawn from all waiting agents by fewest games.


def demo_agents() -> list[tuple[str, str]]:
    """(name, bot): four each of random and heuristic, two strong ones when that bot exists.

    The demo plays one match at a time (``concurrency=1``: one worker process) with ten agents at
    tables of four: the forming seats the agents with the fewest games first, so every agent plays
    about as often as the others (with two worker processes the strong bots' slower matches left
    them a sixth of the games), and the two agents left waiting change each round, so tables keep
    mixing (with eight agents the same two groups of four sat together again and again). Mostly two
    tables are claimed at once and sent to the worker as one batch: both are live until stored."""
    agents = [(f"{bot}-{i}", bot) for bot in ("random", "heuristic") for i in (1, 2, 3, 4)]
    if "strong" in BOT_FACTORIES:
        agents += [(f"strong-{i}", "strong") for i in (1, 2)]
    return agents


def demo_rules(preset_name: str, options: list[str], seats: int) -> pb.Ladder:
    rules = given_rules(preset_name, options or DEMO_OPTIONS, table=(seats, f"--seats {seats}"))
    message = rules_to_proto(rules)
    message.preset = preset_name
    return message


def rated_matches(stub: matchmaker_pb2_grpc.MatchmakerServiceStub, seats: int) -> int:
    board = stub.GetLeaderboard(pb.GetLeaderboardRequest(ladder=DEMO_LADDER, page_size=500))
    return sum(s.games for s in board.standings) // seats


def run_demo(args: argparse.Namespace) -> int:
    if args.games < 1:
        raise OhHellError(f"--games must be at least 1, got {args.games}")
    if not 3 <= args.seats <= 7:
        raise OhHellError(f"--seats must be from 3 to 7, got {args.seats}")
    check_address("--web-address", args.web_address)
    rules = demo_rules(args.rules, args.option, args.seats)
    stop_on_signals()
    stack = Stack(StackConfig(engine=False, concurrency=1, remote_worker=False, web_address=args.web_address))
    try:
        with console.status("starting the stack: redis, matchmaker, Celery workers, web app"):
            try:
                stack.start()
            except RuntimeError as error:  # a process did not get ready (a --web-address in use): one line
                raise OhHellError(str(error)) from None  # with its log's tail, as ohell up says it, not a traceback
        board_url = f"{stack.web_url}/ladders/{DEMO_LADDER}"
        console.print(f"leaderboard in the browser: {board_url}")
        with grpc.insecure_channel(stack.matchmaker_address) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            play_ladder(stub, stack, rules, args)
        if not args.serve:  # the address printed above dies with the stack, in a moment
            console.print("the web app stops with the demo: add --serve to keep it up and browse the ladder")
            return 0
        console.print(f"leaderboard, agents and replays: {board_url}")
        console.print("serving the web app until Ctrl-C")
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        if args.serve:
            return 0
        console.print("interrupted: stopping every process of the stack")
        return 130
    finally:
        stack.cleanup()


def play_ladder(
    stub: matchmaker_pb2_grpc.MatchmakerServiceStub, stack: Stack, rules: pb.Ladder, args: argparse.Namespace
) -> int:
    host = auth_metadata(stack.host_token)  # the stack's administration credential
    stub.CreateLadder(
        pb.CreateLadderRequest(
            ladder=pb.Ladder(name=DEMO_LADDER, rules=rules, seats=args.seats, base_window=100.0, widen_per_second=8.0)
        ),
        metadata=host,
    )
    tokens = {}
    for name, bot in demo_agents():
        reply = stub.RegisterAgent(
            pb.RegisterAgentRequest(name=name, kind=pb.AGENT_KIND_BUILTIN, bot=bot), metadata=host
        )
        tokens[reply.agent.agent_id] = reply.token
    for agent_id, token in tokens.items():
        stub.JoinQueue(pb.JoinQueueRequest(ladder=DEMO_LADDER, agent_id=agent_id), metadata=auth_metadata(token))
    progress = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    )
    with progress:
        task = progress.add_task(f"ladder '{DEMO_LADDER}': {len(tokens)} bots, {args.seats} seats", total=args.games)
        while (done := rated_matches(stub, args.seats)) < args.games:
            progress.update(task, completed=done)
            time.sleep(0.2)
        for agent_id, token in tokens.items():
            stub.LeaveQueue(pb.LeaveQueueRequest(ladder=DEMO_LADDER, agent_id=agent_id), metadata=auth_metadata(token))
        progress.update(task, completed=args.games, description="finishing the matches in play")
        settle(stub, args.seats)
    print_board(stub)
    return 0


def settle(stub: matchmaker_pb2_grpc.MatchmakerServiceStub, seats: int, quiet_s: float = 1.5) -> None:
    """Wait until matches in play have finished and been rated (no change for ``quiet_s``)."""
    last, since = -1, time.monotonic()
    while time.monotonic() - since < quiet_s:
        now = rated_matches(stub, seats)
        if now != last:
            last, since = now, time.monotonic()
        time.sleep(0.2)


def print_board(stub: matchmaker_pb2_grpc.MatchmakerServiceStub) -> None:
    board = stub.GetLeaderboard(pb.GetLeaderboardRequest(ladder=DEMO_LADDER, page_size=500))
    console.print(board_table(list(board.standings)))
    console.print(tiers(list(board.standings), dict(demo_agents())))


def board_table(standings: list[pb.Standing]) -> Table:
    """The columns of ``ohell leaderboard`` and the web app's: wins as a share of games, where a
    "wins" column of fractional counts (31.3 of 61) read as a count."""
    table = Table(title=f"leaderboard of '{DEMO_LADDER}' (OpenSkill Plackett-Luce; ordinal = mu - 3 sigma)")
    for column in ("#", "agent", "ordinal", "mu", "sigma", "games", "exact bids", "win share"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for s in standings:
        table.add_row(
            str(s.rank),
            s.name,
            fixed(s.ordinal, 2),
            fixed(s.mu, 2),
            fixed(s.sigma, 2),
            str(s.games),
            f"{100 * s.exact_bid_rate:.1f}%",
            win_share(s.wins, s.games),
        )
    return table


def tiers(standings: list[pb.Standing], bots: dict[str, str]) -> str:
    """Where each built-in bot's agents ranked, and whether every agent of a stronger bot ranked
    above every agent of a weaker one (strong, heuristic, random)."""
    ranks: dict[str, list[int]] = {}
    for s in standings:
        ranks.setdefault(bots.get(s.name, "other"), []).append(s.rank or len(standings))  # 0: not ranked yet
    order = [bot for bot in ("strong", "heuristic", "random") if bot in ranks]
    spans = [
        f"{bot} {min(ranks[bot])}-{max(ranks[bot])} (mean {sum(ranks[bot]) / len(ranks[bot]):.1f})" for bot in order
    ]
    tiered = all(max(ranks[a]) < min(ranks[b]) for a, b in zip(order, order[1:], strict=False))
    verdict = "every agent ranked above the agents of weaker bots" if tiered else "the bots' ranks overlap"
    return f"ranks by bot: {', '.join(spans)}: {verdict}"
