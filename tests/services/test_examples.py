"""The examples complete a match: the 20-line Python bot and the Node.js bot built from the protos."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from svc_helpers import ROOT

from arena.keys import Keys
from arena.play.host import host_match_sync
from arena.play.specs import SeatSpec, TimeControl
from ohell.presets import preset
from ohell.referee import referee

NODE_DIR = ROOT / "examples" / "node"


def wait_for_line(process: subprocess.Popen[str], text: str, seconds: float) -> None:
    assert process.stdout is not None
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if text in line:
            return
        if not line and process.poll() is not None:
            raise AssertionError(f"agent exited with {process.returncode} before printing {text!r}")
    raise AssertionError(f"agent did not print {text!r} in {seconds} s")


def play_classic(agent_id: str, redis_url: str, match_id: str) -> dict:
    seats = [
        SeatSpec.builtin("heuristic"),
        SeatSpec.connected(agent_id),
        SeatSpec.builtin("random"),
        SeatSpec.builtin("heuristic"),
    ]
    return host_match_sync(
        match_id, preset("classic"), seats, 8, time_control=TimeControl(decision_ms=3000), redis_url=redis_url
    )


def test_python_example_is_short_and_completes_a_match(engine_process, make_agent, shared_redis_server) -> None:
    example = ROOT / "examples" / "python_bot.py"
    assert len(example.read_text().splitlines()) <= 20
    agent_id, token = make_agent("py-example")
    process = subprocess.Popen(
        [sys.executable, str(example), engine_process.address, token],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    client = redis.Redis.from_url(shared_redis_server.url)
    try:
        deadline = time.monotonic() + 20
        while client.get(Keys().agent_presence(agent_id)) is None:  # the gateway marks it present once connected
            assert time.monotonic() < deadline and process.poll() is None, "the Python example never connected"
            time.sleep(0.05)
        record = play_classic(agent_id, shared_redis_server.url, "py-example-1")
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=10)
    assert record["faults"] == [] and record["complete"] and referee(record).valid and len(record["hands"]) == 19


def _node_modules() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed: the Node.js example cannot run here")
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").exists():
        result = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=NODE_DIR,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0:
            pytest.skip(f"npm install failed (registry unreachable?): {result.stderr[-300:]}")
    return NODE_DIR / "node_modules"


def test_node_example_completes_a_match(engine_process, make_agent, shared_redis_server) -> None:
    _node_modules()
    agent_id, token = make_agent("node-example")
    process = subprocess.Popen(
        ["node", "bot.js", engine_process.address, token, "1"],
        cwd=NODE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for_line(process, "connected", 20)
        record = play_classic(agent_id, shared_redis_server.url, "node-example-1")
        assert process.wait(timeout=10) == 0, "the Node bot exits 0 after its one match"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert record["faults"] == [], record["faults"][:3]
    assert record["complete"] and referee(record).valid and len(record["hands"]) == 19
