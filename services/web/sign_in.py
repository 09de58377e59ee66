"""Sign-ins with a wrong host token (services/web/host.py ``login``): limited per visitor address (an
IPv6 one by its /64) and for all visitors together, and said in the log at most once a minute (the
count of a minute's flood when the minute ends, or when the app stops).

The right token is never refused: the limits are keyed by address, and behind a proxy not named by
``--trusted-proxies`` every visitor has the proxy's, so a stranger's wrong guesses held the host
out (the token was not even compared past the limit). Guessing is stopped by the token itself (at
least ``arena.rpc.auth.MIN_HOST_TOKEN`` characters, 43 random ones from ``ohell up``), as on the
matchmaker's port; these limits keep a flood of wrong guesses cheap and the log short.
"""

from __future__ import annotations

import asyncio
import logging
import time

from arena.rpc.ratelimit import LocalLimiter, RateLimit, network_of

log = logging.getLogger(__name__)
# a few typos from one address pass, then one every 5 s
PER_ADDRESS = RateLimit(rate=0.2, burst=10)
# every address together: a flood from many addresses is answered 429 past this
EVERYONE = RateLimit(rate=1.0, burst=30)
LOG_EVERY_S = 60.0


class WrongTokens:
    """Counts wrong tokens and says them in the log: the first after a quiet minute at once, those
    that follow it within the minute in one line when the minute ends (or when the app stops, ``close``)."""

    def __init__(
        self, per_address: RateLimit = PER_ADDRESS, everyone: RateLimit = EVERYONE, log_every_s: float = LOG_EVERY_S
    ) -> None:
        self.per_address = LocalLimiter(per_address)
        self.everyone = LocalLimiter(everyone)
        self.log_every_s = log_every_s
        self.unlogged = 0
        self.latest = ""  # the address of the latest wrong token not logged
        self.logged_at = -log_every_s
        self._flush: asyncio.TimerHandle | None = None

    def wait_ms(self, client: str) -> float:
        """A wrong token from ``client`` (its address): 0 when it is within the limits (it counts
        then), else the ms to wait."""
        address = network_of(client) or client
        wait = self.per_address.wait_ms(address) or self.everyone.wait_ms("")
        self.unlogged += 1
        self.latest = address[:64]
        left = self.logged_at + self.log_every_s - time.monotonic()
        if left <= 0:
            self.log()
        elif self._flush is None:
            try:  # the rest of this minute's count, when it ends: a flood that stops is said in full
                self._flush = asyncio.get_running_loop().call_later(left, self._log_rest)
            except RuntimeError:  # no event loop (a caller outside the app): the next line says them
                pass
        return wait

    def log(self) -> None:
        """Log the wrong tokens not logged yet, if any."""
        if not self.unlogged:
            return
        now = time.monotonic()
        since = "" if self.logged_at < 0 else f" in the last {now - self.logged_at:.0f} s"
        log.warning("host sign-in: %d wrong host token(s)%s, the latest from %r", self.unlogged, since, self.latest)
        self.unlogged, self.logged_at = 0, now

    def _log_rest(self) -> None:
        self._flush = None
        self.log()

    def close(self) -> None:
        """The app stops: log what is not logged yet."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        self.log()
