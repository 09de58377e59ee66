"""Prometheus metrics of the engine service and match host (default registry; no I/O here).

Names follow Prometheus conventions: ``_total`` counters, ``_seconds`` histograms.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import Counter, Histogram

DECISIONS = Counter("ohell_agent_decisions_total", "Decisions asked of seats", ["agent_kind"])
DECISION_SECONDS = Histogram(
    "ohell_agent_decision_seconds",
    "Time from decision request to answer, by agent kind",
    ["agent_kind"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
TIMEOUTS = Counter("ohell_agent_timeouts_total", "Decisions that timed out", ["agent_kind"])
ILLEGAL_ACTIONS = Counter("ohell_agent_illegal_actions_total", "Illegal or garbage actions", ["agent_kind"])
FAULTS = Counter("ohell_agent_faults_total", "Faults recorded, by kind", ["agent_kind", "fault"])
MATCHES_HOSTED = Counter("ohell_engine_matches_hosted_total", "Matches started by a match host")
SPECTATE_EVENTS_LOST = Counter(
    "ohell_engine_spectate_events_lost_total", "Public match events that could not be stored (Redis away)"
)
AGENTS_CONNECTED = Counter("ohell_gateway_connections_total", "Agent streams opened at the gateway", ["outcome"])


_children: dict[str, tuple[Any, Any]] = {}  # labelled series per agent kind, looked up once


def observe_decision(kind: str, seconds: float) -> None:
    series = _children.get(kind)
    if series is None:
        series = _children[kind] = (DECISIONS.labels(kind), DECISION_SECONDS.labels(kind))
    series[0].inc()
    series[1].observe(seconds)


def observe_fault(kind: str, fault: str) -> None:
    FAULTS.labels(kind, fault).inc()
    if fault == "TIMEOUT":
        TIMEOUTS.labels(kind).inc()
    elif fault in ("ILLEGAL", "GARBAGE"):
        ILLEGAL_ACTIONS.labels(kind).inc()
