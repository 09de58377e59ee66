"""What a match host is told: who sits where (SeatSpec) and the time control (TimeControl)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

from arena.proto.ohell.v1 import match_pb2
from ohell.bots import BOT_FACTORIES
from ohell.errors import OhHellError

SEAT_KINDS = ("builtin", "connected", "endpoint")
ENDPOINT_NAME = "endpoint"  # the name of an endpoint seat given by its address alone
# host:port: a DNS name or IPv4 address, or an IPv6 address in brackets. No ':' elsewhere: gRPC reads
# "unix:sock:80" or "unix-abstract:bot:80" as a scheme and dials a local unix socket
ENDPOINT = re.compile(r"^(?:[A-Za-z0-9_.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]):[0-9]{1,5}$")


def builtin_bots() -> str:
    """The list an error about a name that is no built-in bot ends with: "built-in bots: heuristic, random, strong"."""
    return f"built-in bots: {', '.join(sorted(BOT_FACTORIES))}"


class SeatSpecError(OhHellError):
    """A seat or time control that cannot be hosted; the text names the field."""


@dataclass(frozen=True)
class SeatSpec:
    """One seat, from the ladder store (which keeps it with the match) to the match host.

    ``kind`` is "builtin" (``bot``, played in-process), "connected" (``agent_id``: the agent holds a
    stream to a gateway, maybe in another process) or "endpoint" (``address`` of the agent's
    AgentService; ``token`` is sent to it as ``authorization`` metadata). Ladder seats also carry
    the agent's id and ``version``; ``house`` marks a house bot that fills a table without a ticket."""

    kind: str
    name: str
    bot: str = ""
    agent_id: str = ""
    address: str = ""
    token: str = ""
    version: str = ""
    house: bool = False

    def __post_init__(self) -> None:
        if self.kind not in SEAT_KINDS:
            raise SeatSpecError(f"kind: {self.kind!r} is not one of {', '.join(SEAT_KINDS)}")
        needed = {"builtin": "bot", "connected": "agent_id", "endpoint": "address"}[self.kind]
        if not getattr(self, needed):
            raise SeatSpecError(f"a {self.kind} seat needs {needed}")
        if self.kind == "builtin" and self.bot not in BOT_FACTORIES:
            raise SeatSpecError(f"bot: {self.bot[:80]!r} is not a built-in bot ({builtin_bots()})")

    @classmethod
    def builtin(cls, bot: str, name: str | None = None) -> SeatSpec:
        return cls("builtin", name or bot, bot=bot)

    @classmethod
    def connected(cls, agent_id: str, name: str | None = None) -> SeatSpec:
        return cls("connected", name or agent_id, agent_id=agent_id)

    @classmethod
    def endpoint(cls, address: str, name: str | None = None, token: str = "") -> SeatSpec:
        # not named by its address: the name is public (spectators, records, standings), the address the host's
        return cls("endpoint", name or ENDPOINT_NAME, address=address, token=token)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object the ladder store keeps with a match (empty fields left out)."""
        # not dataclasses.asdict: its deep copy was a fifth of a forming round's time
        return {key: value for key in _SEAT_FIELDS if (value := getattr(self, key))}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SeatSpec:
        unknown = sorted(set(data).difference(_SEAT_FIELDS))
        if unknown:
            raise SeatSpecError(f"unknown seat field(s): {', '.join(unknown)}")
        return cls(**data)

    def record_entry(self) -> dict[str, str]:
        """How the seat appears in the match record (never the token)."""
        entry = {"name": self.name, "kind": self.kind}
        for key in ("agent_id", "version", "bot", "address"):
            if getattr(self, key):
                entry[key] = getattr(self, key)
        return entry


def check_endpoint(address: str, field: str = "endpoint") -> str:
    """``address`` when it is host:port with a port from 1 to 65535 (what the platform can dial);
    SeatSpecError naming ``field`` otherwise. Where a caller gives one: a seat that can never be
    reached plays every decision as a fault."""
    if not ENDPOINT.fullmatch(address) or not 0 < int(address.rpartition(":")[2]) < 65536:
        raise SeatSpecError(f"{field}: {address[:80]!r} must look like host:port (a port from 1 to 65535)")
    return address


_SEAT_FIELDS = tuple(f.name for f in fields(SeatSpec))
ADDRESS_SHOWN = "(the endpoint)"  # what others read where a record named an endpoint's address


def without_addresses(record_text: str) -> str:
    """A match record's JSON as callers other than the host may read it: no endpoint seat's
    ``address``, nor the address in a seat's name (an unnamed endpoint seat was named by it) or in a
    fault's detail (as older records have them). A record with no endpoint address is returned as it is."""
    if '"address"' not in record_text:
        return record_text
    record = json.loads(record_text)
    addresses = [seat.pop("address") for seat in record.get("seats", []) if "address" in seat]
    for seat in record.get("seats", []):
        if seat.get("name") in addresses:
            seat["name"] = ADDRESS_SHOWN
    for fault in record.get("faults", []):
        for address in addresses:
            fault["detail"] = str(fault.get("detail", "")).replace(address, ADDRESS_SHOWN)
    return json.dumps(record, separators=(",", ":"))


def all_builtin(seats: Iterable[SeatSpec]) -> bool:
    """Whether every seat is a built-in bot: such a match is played in-process, with no network."""
    return all(seat.kind == "builtin" for seat in seats)


@dataclass(frozen=True)
class TimeControl:
    """Per-decision deadline plus a time bank for the match; forfeit after ``max_faults``."""

    decision_ms: int = 1_000
    time_bank_ms: int = 10_000
    max_faults: int = 10

    def __post_init__(self) -> None:
        for name, low in (("decision_ms", 1), ("time_bank_ms", 0), ("max_faults", 1)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 3_600_000:
                raise SeatSpecError(f"time_control.{name}: {value!r} must be an int from {low} to 3600000")

    def to_proto(self) -> match_pb2.TimeControl:
        return match_pb2.TimeControl(
            decision_ms=self.decision_ms, time_bank_ms=self.time_bank_ms, max_faults=self.max_faults
        )

    @classmethod
    def from_proto(cls, message: match_pb2.TimeControl, default: TimeControl | None = None) -> TimeControl:
        base = default or cls()
        return cls(
            decision_ms=message.decision_ms or base.decision_ms,
            time_bank_ms=message.time_bank_ms if message.time_bank_ms else base.time_bank_ms,
            max_faults=message.max_faults or base.max_faults,
        )
