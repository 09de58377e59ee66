"""The web app's connections before the app sees a request: uvicorn's HTTP/1.1 protocol (h11) with
two bounds it lacks, so that a visitor cannot hold the app's sockets without sending requests
(slowloris).

- A request's head (its line and headers) must arrive within ``HEAD_DEADLINE_S`` of the
  connection opening, or of the previous response's end on a kept-alive one; else the
  connection is closed. uvicorn had no such deadline: its keep-alive timer is cancelled by the
  first byte, so a connection sending ``GET / HTTP/1.1\\r\\n`` and then nothing (or a byte a
  minute) was held for ever, as was one that sent nothing at all.
- One address (an IPv6 one by its /64, as the visitors' rate limit counts them) holds at most
  ``MAX_CONNECTIONS_PER_ADDRESS`` connections at once; another is answered 429 and closed.
  Without it one address could open connections until the process ran out of file descriptors,
  and the app then accepted no one's. A proxy named by ``--trusted-proxies`` carries many
  visitors' connections and is not bounded.

Requests themselves (their rate, live views, bodies) are bounded in ``services.web.visitors``.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Sequence

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from arena.rpc.ratelimit import network_of

HEAD_DEADLINE_S = 10.0
MAX_CONNECTIONS_PER_ADDRESS = 64  # a browser opens about 6 per site, plus up to 4 live views
TOO_MANY = b"too many connections from your address: close some first\n"
REFUSAL = (
    b"HTTP/1.1 429 Too Many Requests\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: " + str(len(TOO_MANY)).encode() + b"\r\n\r\n" + TOO_MANY
)


def guarded_protocol(trusted_proxies: Sequence[str]) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the head deadline and the per-address bound, for one server (its
    own count of open connections); ``trusted_proxies``: networks whose connections are not bounded."""
    exempt = [ipaddress.ip_network(network) for network in trusted_proxies]
    open_by_address: dict[str, int] = {}

    def bounded_address(host: str) -> str | None:
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            return None  # a unix socket's peer: not a visitor's address
        if any(ip in network for network in exempt):
            return None
        return network_of(host)

    class GuardedH11Protocol(H11Protocol):
        counted: str | None = None
        head_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = bounded_address(self.client[0]) if self.client else None
            if address is not None and open_by_address.get(address, 0) >= MAX_CONNECTIONS_PER_ADDRESS:
                transport.write(REFUSAL)
                transport.close()
                return
            if address is not None:
                open_by_address[address] = open_by_address.get(address, 0) + 1
                self.counted = address
            self._await_head()

        def connection_lost(self, exc: Exception | None) -> None:
            if self.head_deadline is not None:
                self.head_deadline.cancel()
            if self.counted is not None:
                left = open_by_address[self.counted] - 1
                if left:
                    open_by_address[self.counted] = left
                else:
                    del open_by_address[self.counted]
                self.counted = None
            super().connection_lost(exc)

        def on_response_complete(self) -> None:
            self._await_head()  # before uvicorn reads a pipelined request, which may come at once
            super().on_response_complete()

        def _await_head(self) -> None:
            if self.head_deadline is not None:
                self.head_deadline.cancel()
            self.head_deadline = self.loop.call_later(HEAD_DEADLINE_S, self._head_overdue)

        def _head_overdue(self) -> None:
            self.head_deadline = None
            # IDLE: no request's head has been read since the timer was set (a request being
            # read, handled or answered has moved the client's side on)
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol
