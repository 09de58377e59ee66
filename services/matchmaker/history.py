"""Match history for the matchmaker's RPCs: the archive, plus the matches finished so recently that
only Redis holds them (the archive's backlog). Plain functions; the servicer calls them in a thread."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Engine

from arena.archive import queries
from arena.ladder.model import MatchInfo
from arena.ladder.redis_store import RedisStore
from arena.ladder.store import NotFound

ArchiveEngine = Callable[[], Engine]


@dataclass(frozen=True)
class MatchView:
    """A match as the RPCs show it, from either source."""

    match_id: str
    ladder: str
    state: str
    agent_ids: list[str]
    agent_names: list[str]
    created_ms: int
    finished_ms: int
    attempts: int
    totals: list[int] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)
    archived: bool = False
    faults: list[int] = field(default_factory=list)

    @property
    def cursor(self) -> str:
        return f"{self.finished_ms}:{self.match_id}"

    def key(self) -> tuple[int, str]:
        return self.finished_ms, self.match_id


def from_archive(match: queries.Match) -> MatchView:
    return MatchView(
        match.match_id,
        match.ladder,
        "finished",
        [seat.agent_id for seat in match.seats],
        [seat.agent_name for seat in match.seats],
        match.created_ms,
        match.finished_ms,
        match.attempts,
        match.totals,
        match.winners,
        archived=True,
        faults=[seat.faults for seat in match.seats],
    )


def from_redis(info: MatchInfo) -> MatchView:
    return MatchView(
        info.match_id,
        info.ladder,
        info.state,
        [seat.agent_id for seat in info.seats],
        [seat.name for seat in info.seats],
        info.created_ms,
        info.finished_ms,
        info.attempts,
        list(info.totals),
        list(info.winners),
        faults=list(info.faults),
    )


def get_match(store: RedisStore, archive: ArchiveEngine, match_id: str) -> tuple[MatchView, str]:
    """(the match, its record JSON or '' while unfinished): Redis while hot, else the archive.
    Raises NotFound, or SQLAlchemyError when the archive is needed and away."""
    try:
        info = store.get_match(match_id)
    except NotFound:
        info = None
    if info is not None and info.state != "finished":
        return from_redis(info), ""
    if info is not None:
        try:
            return from_redis(info), store.get_record_json(match_id)
        except NotFound:  # archived and forgotten between the two reads
            pass
    engine = archive()
    archived = queries.get_match(engine, match_id)
    record = queries.get_record_json(engine, match_id)
    if archived is None or record is None:
        raise NotFound(f"no match {match_id!r}", "match_id")
    return from_archive(archived), record


def list_matches(
    store: RedisStore,
    archive: ArchiveEngine,
    ladder: str,
    agent_id: str,
    since_ms: int,
    until_ms: int,
    size: int,
    before: str,
) -> tuple[list[MatchView], str, int]:
    """One page, newest first, the next page's token ('' on the last page) and how many matches
    the filters select in all pages (counted up to ``COUNT_CAP`` + 1: more than ``COUNT_CAP`` past
    it). The two sources are merged by (finished time, match id), so a match moving to the archive
    meanwhile is shown and counted once. Raises queries.BadCursor for a
    token this service did not give."""
    bound = queries.parse_cursor(before) if before else None
    hot = [
        view
        for view in map(from_redis, store.list_matches(ladder, agent_id, 0, queries.MAX_PAGE))
        if view.finished_ms >= since_ms and (not until_ms or view.finished_ms < until_ms)
    ]
    engine = archive()
    archived = queries.list_matches(engine, ladder, agent_id, since_ms, until_ms, size + 1, before)
    recent = {view.match_id: view for view in hot if bound is None or view.key() < bound}
    merged = recent | {m.match_id: from_archive(m) for m in archived}
    page = sorted(merged.values(), key=MatchView.key, reverse=True)
    more = len(page) > size
    page = page[:size]
    hot_ids = [view.match_id for view in hot]
    total = queries.count_matches(engine, ladder, agent_id, since_ms, until_ms, cap=queries.COUNT_CAP)
    total += len(set(hot_ids) - queries.archived(engine, hot_ids))
    return page, page[-1].cursor if more and page else "", min(total, queries.COUNT_CAP + 1)


RUNNING_TOKEN = "running-after:"


def running_page(running: list[MatchInfo], size: int, token: str) -> tuple[list[MatchInfo], str]:
    """One page of the matches in play (``running``, by id) and the next page's token ('' on the
    last page). The token names the last id shown, not a position: a match ending meanwhile moves
    no other match onto a page already read. Raises queries.BadCursor for a token this service did
    not give."""
    after, sep, last_id = token.partition(RUNNING_TOKEN)
    if token and (after or not sep or not last_id or len(last_id) > 128):
        raise queries.BadCursor(f"token {token[:80]!r} is not one of a running list")
    rest = [match for match in running if match.match_id > last_id] if token else running
    page = rest[:size]
    return page, RUNNING_TOKEN + page[-1].match_id if len(rest) > size else ""


def rating_history(
    archive: ArchiveEngine, ladder: str, agent_id: str, since_ms: int, size: int, after: str, newest_first: bool = False
) -> tuple[list[queries.RatingPoint], str]:
    points = queries.rating_history(archive(), ladder, agent_id, since_ms, size + 1, after, newest_first)
    more = len(points) > size
    points = points[:size]
    return points, points[-1].cursor if more and points else ""
