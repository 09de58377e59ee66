"""``ArchiveStore``: the ``RedisStore`` part over the archive's backlog (``arena.ladder.archiving``
moves finished matches to the SQL archive, then Redis forgets them but their log entry)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from arena.keys import text
from arena.ladder.model import MatchInfo
from arena.ladder.redis_base import StoreBase, parse_match

ARCHIVE_REQUEST_MS = 500  # finished matches ask for an archive run at most this often


@dataclass(frozen=True)
class ArchiveItem:
    """A finished match as Redis holds it for the archive: ``record`` is zlib-compressed JSON of
    ``record_bytes`` bytes; ``rating`` is '' until the match is rated; ``summary`` its log entry."""

    info: MatchInfo
    record: bytes
    record_bytes: int
    rating: str
    summary: str


class ArchiveStore(StoreBase):
    """The backlog: what waits, what the archive needs of it, forgetting it, and the archive's locks."""

    def archive_backlog(self) -> int:
        """Finished matches the archive does not hold yet."""
        return int(self.client.zcard(self.keys.unarchived))

    def oldest_unarchived_ms(self) -> int:
        """When the oldest match of the backlog finished (0: none)."""
        oldest = self.client.zrange(self.keys.unarchived, 0, 0, withscores=True)
        return int(oldest[0][1]) if oldest else 0

    def unarchived(self, limit: int) -> list[str]:
        """The oldest ``limit`` matches of the archive's backlog."""
        return [text(m) for m in cast(list[bytes], self.client.zrange(self.keys.unarchived, 0, limit - 1))]

    def for_archive(self, match_ids: Sequence[str]) -> list[ArchiveItem | None]:
        """What the archive needs of each match, one round trip; None when its hash is gone
        (archived and forgotten already)."""
        with self.client.pipeline(transaction=False) as pipe:
            for match_id in match_ids:
                pipe.hgetall(self.keys.match(match_id))
                pipe.get(self.keys.record(match_id))
                pipe.hget(self.keys.rating_changes(match_id.rpartition("-")[0]), match_id)
            replies = pipe.execute()
        out: list[ArchiveItem | None] = []
        for raw, record, change in zip(replies[::3], replies[1::3], replies[2::3], strict=True):
            if not raw or b"seats" not in raw or record is None:
                out.append(None)
                continue
            rating, summary = text(change or b""), text(raw.get(b"summary", b""))
            out.append(ArchiveItem(parse_match(raw), record, int(raw.get(b"record_bytes", 0)), rating, summary))
        return out

    def forget_archived(self, match_ids: Sequence[str]) -> None:
        """Drop the record and hash of matches the archive holds (safe to repeat)."""
        if match_ids:
            self._forget(args=[self.keys.prefix, *match_ids])

    def set_aside_refused(self, match_ids: Sequence[str], now_ms: int) -> None:
        """Move matches the archive refused (another match holds their id there) out of the backlog
        into ``archive_refused``, keeping their hash and record: the next runs do not meet them again."""
        if match_ids:
            with self.client.pipeline() as pipe:
                pipe.zadd(self.keys.archive_refused, dict.fromkeys(match_ids, now_ms))
                pipe.zrem(self.keys.unarchived, *match_ids)
                pipe.execute()

    def refused_by_archive(self) -> list[str]:
        """The matches the archive refused, oldest first (``set_aside_refused``)."""
        return [text(m) for m in cast(list[bytes], self.client.zrange(self.keys.archive_refused, 0, -1))]

    def raise_match_seq(self, at_least: int) -> int:
        """Raise the match counter to ``at_least`` unless it is higher already; returns it as it is
        then (the next match id's number is one more)."""
        return int(self._raise_match_seq(args=[self.keys.prefix, int(at_least)]))

    def hold(self, which: str, holder: str, ttl_s: float) -> bool:
        """Take or renew ``which`` ("archive_lock" or "archive_retry") for ``holder``; False if
        another holds it."""
        return bool(self._hold(args=[self.keys.prefix, which, holder, max(1, int(ttl_s * 1000))]))

    def release(self, which: str, holder: str) -> None:
        key = self.keys.archive_lock if which == "archive_lock" else self.keys.archive_retry
        self._release_if_held(keys=[key], args=[holder])

    def request_archive(self, every_ms: int = ARCHIVE_REQUEST_MS) -> bool:
        """True for the first caller in each ``every_ms``: it sends the archive task, so a busy
        ladder archives in batches (one run per window) rather than one run per match."""
        return bool(self.client.set(self.keys.archive_requested, 1, nx=True, px=every_ms))

    def archive_waiting(self) -> bool:
        """Whether an archive task is waiting for the database to come back."""
        return bool(self.client.exists(self.keys.archive_retry))
