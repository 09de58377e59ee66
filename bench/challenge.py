"""The engine service's other callers during a large built-in challenge: p99 latency of a cheap
RPC (RulesService.ListPresets) while four strong bots play a long challenge, beside the same
RPC's p99 on the idle service measured in the same run. Last line:

    challenge: idle_p99_ms=<..> busy_p99_ms=<..> ratio=<busy/idle> calls=<..>

Usage: python bench/challenge.py [--calls 400] [--hands 30]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import grpc

from arena.embedded_redis import EmbeddedRedis
from arena.local.stack import PORT_LINE, Proc
from arena.proto.ohell.v1 import challenge_pb2, challenge_pb2_grpc, rules_pb2, rules_service_pb2, rules_service_pb2_grpc
from arena.rpc.auth import HOST_TOKEN_ENV, auth_metadata, new_host_token
from arena.rpc.ratelimit import RATE_ENV


def p99_ms(address: str, calls: int) -> float:
    with grpc.insecure_channel(address) as channel:
        stub = rules_service_pb2_grpc.RulesServiceStub(channel)
        stub.ListPresets(rules_service_pb2.ListPresetsRequest())  # the channel is up before timing
        samples = []
        for _ in range(calls):
            started = time.perf_counter()
            stub.ListPresets(rules_service_pb2.ListPresetsRequest(), timeout=30)
            samples.append((time.perf_counter() - started) * 1000)
            time.sleep(0.005)
    return statistics.quantiles(samples, n=100)[98]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--hands", type=int, default=30)
    args = parser.parse_args()
    redis_server = EmbeddedRedis().start()
    host_token = new_host_token()
    folder = Path(tempfile.mkdtemp(prefix="ohell-bench-"))
    command = [sys.executable, "-m", "services.engine", "--address", "127.0.0.1:0", "--redis-url", redis_server.url]
    env = dict(os.environ) | {HOST_TOKEN_ENV: host_token, RATE_ENV: "1000000:1000000"}
    engine = Proc("engine", command, env, folder / "engine.log")  # its own process, as deployed
    try:
        address = f"127.0.0.1:{engine.wait_for(PORT_LINE, 30).group(1)}"
        idle = p99_ms(address, args.calls)
        playing = threading.Event()

        def play() -> None:
            with grpc.insecure_channel(address) as channel:
                stub = challenge_pb2_grpc.ChallengeServiceStub(channel)
                request = challenge_pb2.ChallengeRequest(
                    rules=rules_pb2.Rules(hand_sizes=[13] * args.hands),
                    seats=[challenge_pb2.ChallengeSeat(builtin="strong") for _ in range(4)],
                )
                playing.set()
                with contextlib.suppress(grpc.RpcError):
                    stub.Challenge(request, metadata=auth_metadata(host_token))
            playing.clear()

        challenger = threading.Thread(target=play, daemon=True)
        challenger.start()
        playing.wait(10)
        time.sleep(0.5)  # the match is under way
        busy = p99_ms(address, args.calls)
        still_playing = playing.is_set()
    finally:
        engine.stop()
        redis_server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)
    note = "" if still_playing else " (the challenge ended before the busy sample did: raise --hands)"
    print(f"challenge: idle_p99_ms={idle:.2f} busy_p99_ms={busy:.2f} ratio={busy / idle:.2f} calls={args.calls}{note}")


if __name__ == "__main__":
    main()
