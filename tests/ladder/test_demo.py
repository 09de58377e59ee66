"""``ohell demo`` and ``ohell up`` as a user runs them: real processes, cleaned up, also on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arena.embedded_redis import free_port

from .helpers import wait_until

pytestmark = pytest.mark.slow  # runs the demo and `ohell up`; `-m "not slow"` leaves it out


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (children and their children)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    live = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            live.add(pid)
    return live


def test_the_default_demo_prints_the_leaderboard_and_ranks_strong_above_heuristic_above_random() -> None:
    """What the README says the demo shows in every run: the leaderboard, and the random bots'
    agents below all the others (by mean rank). Strong above heuristic held by mean rank in 12 of 13
    runs (once they tied), so the test does not assert it; it shows the whole line when it fails.
    (One run of the demo checks both: a second run with fewer games took ~9 s for the same output.)"""
    result = subprocess.run(
        [sys.executable, "-m", "arena.cli", "demo"],
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ | {"COLUMNS": "160"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "leaderboard of 'demo'" in result.stdout
    for name in ("random-1", "heuristic-1", "strong-1"):
        assert name in result.stdout
    assert "leaderboard in the browser: http://127.0.0.1:" in result.stdout
    # the web app stops with the demo: its last line gives no address that is about to go away
    assert (
        result.stdout.splitlines()[-1]
        == "the web app stops with the demo: add --serve to keep it up and browse the ladder"
    )
    import re

    line = next(line for line in result.stdout.splitlines() if line.startswith("ranks by bot:"))
    means = {bot: float(mean) for bot, mean in re.findall(r"(\w+) \d+-\d+ \(mean ([\d.]+)\)", line)}
    assert list(means) == ["strong", "heuristic", "random"], line
    assert max(means["strong"], means["heuristic"]) < means["random"], line


def test_a_web_address_in_use_stops_the_demo_with_one_line() -> None:
    """``ohell demo --web-address`` on a port another process listens on ended in a traceback (exit 1)."""
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        demo = subprocess.run(
            [sys.executable, "-m", "arena.cli", "demo", "--games", "1", "--web-address", address],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert demo.returncode == 2 and "Traceback" not in demo.stderr, demo.stderr
    assert demo.stderr.startswith("error: web did not get ready (it exited with status 1):")
    assert f"cannot listen on {address}" in demo.stderr


def test_demo_serves_the_leaderboard_until_ctrl_c() -> None:
    import re
    import urllib.request

    demo = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "demo", "--games", "2", "--serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=os.environ | {"COLUMNS": "120"},
    )
    try:
        lines: list[str] = []
        while not any("serving the web app until Ctrl-C" in line for line in lines):
            line = demo.stdout.readline()  # type: ignore[union-attr]
            assert line, "".join(lines)
            lines.append(line)
        url = re.search(r"leaderboard, agents and replays: (\S+)", "".join(lines)).group(1)  # type: ignore[union-attr]
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        assert "Leaderboard: demo" in page and "heuristic-1" in page
        started = descendants(demo.pid)
        demo.send_signal(signal.SIGINT)
        assert demo.wait(30) == 0
        wait_until(lambda: not alive(started), 30, "every process to exit")
    finally:
        if demo.poll() is None:
            demo.kill()


def test_ctrl_c_stops_every_process_of_the_stack(tmp_path: Path) -> None:
    addresses = [f"--{name}-address=127.0.0.1:{free_port()}" for name in ("engine", "matchmaker", "web")]
    up = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "up", "--concurrency", "2", "--data-dir", str(tmp_path), *addresses]
        + ["--redis-port", str(free_port())],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines: list[str] = []
        while not any("Ctrl-C stops everything" in line for line in lines):
            line = up.stdout.readline()  # type: ignore[union-attr]
            assert line, "".join(lines)
            lines.append(line)
        assert any(line.startswith("matchmaker") for line in lines)
        wait_until(lambda: len(descendants(up.pid)) >= 6, 30, "redis, engine, matchmaker, workers and the web app")
        started = descendants(up.pid)
        up.send_signal(signal.SIGINT)
        assert up.wait(30) == 0
        wait_until(lambda: not alive(started), 30, "every process to exit")
    finally:
        if up.poll() is None:
            up.kill()
