"""The Redis state of tournaments (keys in ``arena.keys``; atomic steps in ``scripts``).

Guarantees: a table is run by one live runner at a time (a lease it renews); each game is counted
once (the first result written wins); each table is finished and logged once; the next Swiss round
is opened once. The deal sets and the game records stay in Redis and are handed out only once the
tournament has ended, finished or cancelled (``deals``/``records`` refuse before). A cancelled
tournament records no further game and starts no table again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from arena.clock import now_ms
from arena.keys import Keys, stream_entries, text
from arena.play.specs import SeatSpec
from arena.redis_client import retrying_client
from arena.tournament import scripts
from arena.tournament.away import AwayReads, AwaySighting
from arena.tournament.creation import Creating
from arena.tournament.deals import DealSet
from arena.tournament.model import (
    TablePlan,
    Tournament,
    TournamentError,
    TournamentNotFound,
    TournamentRunning,
    TournamentSummary,
    table_id,
)
from arena.tournament.schedule import Table
from arena.tournament.standings import GameResult

TEXT_BATCH = 25  # records (some 20 KB each) read at once for an export: thousands are never all held
ENDED = ("finished", "cancelled")  # a tournament's states after which nothing changes


@dataclass(frozen=True)
class Progress:
    state: str
    round: int
    tables: int
    tables_done: int
    games_done: int
    created_ms: int
    finished_ms: int


class TournamentStore(Creating, AwayReads):
    def __init__(self, client: redis.Redis, keys: Keys | None = None) -> None:
        self.client = client
        self.keys = keys or Keys()
        self._create = client.register_script(Keys.lua(scripts.CREATE))
        self._start = client.register_script(Keys.lua(scripts.START))
        self._renew = client.register_script(scripts.RENEW)
        self._forfeits = client.register_script(Keys.lua(scripts.FORFEITS))
        self._game = client.register_script(Keys.lua(scripts.GAME))
        self._finish = client.register_script(Keys.lua(scripts.FINISH))
        self._next_round = client.register_script(Keys.lua(scripts.NEXT_ROUND))
        self._end = client.register_script(Keys.lua(scripts.END))
        self._cancel = client.register_script(Keys.lua(scripts.CANCEL))
        self._next_game = client.register_script(Keys.lua(scripts.NEXT_GAME))
        self._redeal = client.register_script(Keys.lua(scripts.REDEAL))

    @classmethod
    def connect(cls, redis_url: str, keys: Keys | None = None, retries: int = 10) -> TournamentStore:
        return cls(retrying_client(redis_url, retries, health_check_interval=10), keys)

    def _run(self, script: Any, *args: Any) -> Any:
        return script(args=[self.keys.prefix, *args])

    def open_round(self, tourney_id: str, completed: int, tables: list[Table]) -> list[TablePlan]:
        """The tables of round ``completed + 1``, or [] when someone else opened it first."""
        plans = [TablePlan(table_id(completed + 1, i), completed + 1, table) for i, table in enumerate(tables)]
        payload = json.dumps({plan.table_id: plan.to_json() for plan in plans})
        return plans if self._run(self._next_round, tourney_id, completed, payload) else []

    def end(self, tourney_id: str, last_round: int) -> bool:
        return bool(self._run(self._end, tourney_id, last_round, now_ms()))

    def cancel(self, tourney_id: str) -> tuple[str, int]:
        """('done', its tables not finished, now cancelled too) or, changing nothing, the state it was
        in: ('missing' | 'finished' | 'cancelled', 0)."""
        status, count = self._run(self._cancel, tourney_id, now_ms())
        return text(status), int(count)

    # reading ---------------------------------------------------------------------------------
    def ids(self) -> list[str]:
        return sorted(text(member) for member in self.client.smembers(self.keys.tourneys))

    def get(self, tourney_id: str) -> Tournament:
        spec = self.client.hget(self.keys.tourney(tourney_id), "spec")
        if spec is None:
            raise not_found(tourney_id)
        return Tournament.from_json(spec)

    def progress(self, tourney_id: str) -> Progress:
        data = _fields(tourney_id, self.client.hgetall(self.keys.tourney(tourney_id)))
        return _progress(data, self.client.hlen(self.keys.tourney_games(tourney_id)))

    def summaries(self, tourney_ids: list[str]) -> list[tuple[TournamentSummary, Progress]]:
        """The summary and ``progress`` of each tournament, in one round trip: not the full
        definition (200 entrants are tens of KB to read and a millisecond to check again)."""
        pipe = self.client.pipeline(transaction=False)
        for tourney_id in tourney_ids:
            pipe.hmget(self.keys.tourney(tourney_id), SUMMARY_FIELDS)
            pipe.hlen(self.keys.tourney_games(tourney_id))
        replies = pipe.execute()
        found = []
        for index, tourney_id in enumerate(tourney_ids):
            values = replies[2 * index]
            data = {name: text(value) for name, value in zip(SUMMARY_FIELDS, values, strict=True) if value is not None}
            if "state" not in data:
                raise not_found(tourney_id)
            # a tournament created before summaries were stored: read its full definition once
            summary = (
                TournamentSummary.from_json(data["summary"]) if "summary" in data else self.get(tourney_id).summary()
            )
            found.append((summary, _progress(data, replies[2 * index + 1])))
        return found

    def tables(self, tourney_id: str) -> dict[str, TablePlan]:
        raw = self.client.hgetall(self.keys.tourney_tables(tourney_id))
        plans = {}
        for key, value in raw.items():
            data = json.loads(value)
            plans[text(key)] = TablePlan(text(key), int(data["round"]), tuple(data["entrants"]))
        return dict(sorted(plans.items(), key=lambda item: (item[1].round, int(item[0].partition("t")[2]))))

    def table_state(self, tourney_id: str, table: str) -> dict[str, str]:
        return {text(k): text(v) for k, v in self.client.hgetall(self.keys.tourney_table(tourney_id, table)).items()}

    def table_states(self, tourney_id: str, tables: list[str]) -> dict[str, dict[str, str]]:
        """``table_state`` of many tables in one round trip."""
        pipe = self.client.pipeline(transaction=False)
        for table in tables:
            pipe.hgetall(self.keys.tourney_table(tourney_id, table))
        return {
            table: {text(k): text(v) for k, v in raw.items()} for table, raw in zip(tables, pipe.execute(), strict=True)
        }

    def unfinished_tables(self, tourney_id: str) -> list[str]:
        return list(self.unfinished_states(tourney_id, list(self.tables(tourney_id))))

    def unfinished_states(self, tourney_id: str, tables: list[str]) -> dict[str, dict[str, str]]:
        """``table_state`` of those of ``tables`` not finished, in one round trip."""
        states = self.table_states(tourney_id, tables)
        return {table: state for table, state in states.items() if state.get("state") != "finished"}

    def leases_alive(self, tourney_id: str, tables: list[str]) -> set[str]:
        """Those of ``tables`` whose lease is held (a live runner plays them), in one round trip."""
        pipe = self.client.pipeline(transaction=False)
        for table in tables:
            pipe.exists(self.keys.tourney_lease(tourney_id, table))
        return {table for table, held in zip(tables, pipe.execute(), strict=True) if held}

    def revoked_agents(self, agent_ids: Sequence[str]) -> set[str]:
        """Those of ``agent_ids`` that are registered agents whose token the host revoked."""
        pipe = self.client.pipeline(transaction=False)
        for agent_id in agent_ids:
            pipe.hget(self.keys.agent(agent_id), "token_sha")
        return {
            agent_id for agent_id, sha in zip(agent_ids, pipe.execute(), strict=True) if sha is not None and not sha
        }

    def registered_seat(self, entrant: SeatSpec) -> SeatSpec:
        """How an entrant given by agent id plays, as its registration says: an endpoint agent is
        dialled at its address with its own token, a registered built-in bot is played here; any
        other entrant (a connected agent, a bot, an address) is seated as given."""
        if entrant.kind != "connected":
            return entrant
        fields = ("kind", "endpoint", "dial_token", "bot", "version")
        kind, address, token, bot, version = (
            text(value) if value is not None else ""
            for value in self.client.hmget(self.keys.agent(entrant.agent_id), fields)
        )
        if kind == "endpoint" and address:
            return SeatSpec(
                "endpoint", entrant.name, agent_id=entrant.agent_id, address=address, token=token, version=version
            )
        if kind == "builtin" and bot:
            return SeatSpec("builtin", entrant.name, bot=bot, agent_id=entrant.agent_id, version=version)
        return entrant

    def table_deals(self, tourney_id: str, table: str) -> list[DealSet]:
        """For the runner of the table only (the deals are secret while the tournament runs)."""
        return self.dealt(tourney_id, table)[0]

    def dealt(self, tourney_id: str, table: str) -> tuple[list[DealSet], int]:
        """The table's deal sets and how many times one was redrawn (``redeal``), read at once."""
        pipe = self.client.pipeline(transaction=True)
        pipe.hget(self.keys.tourney_deals(tourney_id), table)
        pipe.hget(self.keys.tourney_table(tourney_id, table), "redealt")
        raw, redealt = pipe.execute()
        if raw is None:
            raise TournamentError(f"no deals for table {table!r} of {tourney_id!r}")
        return deal_sets(raw), int(redealt or 0)

    def mark_shown(self, tourney_id: str, table: str, deal: int) -> None:
        """A game of deal set ``deal``'s first rotation with an agent seated starts: its cards are shown."""
        self.client.hset(self.keys.tourney_table(tourney_id, table), shown_field(deal), "1")

    def shown_deals(self, tourney_id: str, table: str) -> list[int]:
        """The deal sets of the table marked by ``mark_shown`` and not redealt since."""
        fields = self.table_state(tourney_id, table)
        return sorted(int(name.removeprefix("shown:d")) for name in fields if name.startswith("shown:d"))

    def redeal(
        self, tourney_id: str, table: str, deal: int, games: Sequence[str], fresh: DealSet
    ) -> tuple[list[DealSet], int]:
        """Replace deal set ``deal`` by ``fresh`` if it was shown (``mark_shown``) and none of its
        ``games`` is recorded; ``dealt`` as stored after (of runners racing, one draw wins)."""
        raw = self.client.hget(self.keys.tourney_deals(tourney_id), table)
        if raw is None:
            raise TournamentError(f"no deals for table {table!r} of {tourney_id!r}")
        sets = json.loads(raw)
        sets[deal] = fresh.to_dict()
        after = (shown_field(deal), raw, json.dumps(sets), json.dumps(list(games)))
        stored, redealt = self._run(self._redeal, tourney_id, table, *after)
        return deal_sets(stored), int(redealt)

    def game_results(self, tourney_id: str) -> list[GameResult]:
        raw = self.client.hgetall(self.keys.tourney_games(tourney_id))
        results = []
        for key in sorted(raw, key=text):
            data = json.loads(raw[key])
            results.append(
                GameResult(data["unit"], tuple(data["seats"]), tuple(data["scores"]), tuple(data["forfeited"]))
            )
        return results

    def finished_games(self, tourney_id: str) -> set[str]:
        return {text(key) for key in self.client.hkeys(self.keys.tourney_games(tourney_id))}

    def logged_tables(self, tourney_id: str) -> list[str]:
        entries = stream_entries(self.client.xrange(self.keys.tourney_log(tourney_id)))
        return [text(fields[b"table"] if b"table" in fields else fields["table"]) for _, fields in entries]

    def _published(self, tourney_id: str) -> str:
        """The tournament's state once it has ended; TournamentRunning while it runs."""
        state = self.progress(tourney_id).state
        if state not in ENDED:
            raise TournamentRunning(f"tournament {tourney_id!r} is still running: its deals and records are secret")
        return state

    def record_text(self, tourney_id: str, game: str) -> str | None:
        """One game's record as stored JSON once the tournament has ended (None: not recorded);
        TournamentRunning before, and for a cancelled tournament's table still in play (its last
        game, unrecorded, deals cards of the deal sets its recorded games show: as ``deal_texts``)."""
        if self._published(tourney_id) == "cancelled":
            table = game.partition("/")[0]
            if self.leases_alive(tourney_id, [table]):
                raise TournamentRunning(
                    f"game_id: table {table} of the cancelled tournament {tourney_id!r} still plays its last "
                    "game: its records are secret until it stops"
                )
        raw = self.client.hget(self.keys.tourney_records(tourney_id), game)
        return None if raw is None else text(raw)

    def records(self, tourney_id: str) -> dict[str, dict[str, Any]]:
        return {game: json.loads(raw) for game, raw in self.record_texts(tourney_id)}

    def deals(self, tourney_id: str) -> dict[str, list[dict[str, Any]]]:
        return {table: json.loads(raw) for table, raw in self.deal_texts(tourney_id)}

    def record_texts(self, tourney_id: str) -> Iterator[tuple[str, str]]:
        """(game id, its record as stored JSON) in game order, read a batch at a time. The games of a
        cancelled tournament's table whose runner still holds it are left out until it lets go, as
        its deals are (``deal_texts``): they show the deal set of the game it still plays."""
        key = self.keys.tourney_records(tourney_id)
        if self._published(tourney_id) != "cancelled":
            return self._texts(key)
        games = [text(field) for field in self.client.hkeys(key)]
        in_play = self.leases_alive(tourney_id, sorted({game.partition("/")[0] for game in games}))
        return self._texts(key, {game for game in games if game.partition("/")[0] in in_play})

    def deal_texts(self, tourney_id: str) -> Iterator[tuple[str, str]]:
        """(table id, its deal sets as stored JSON) in table order, read a batch at a time. A table of
        a cancelled tournament whose runner still holds it is left out until it lets go: the game in
        play goes on to its end (unrecorded), its agents holding cards the deals would show."""
        key = self.keys.tourney_deals(tourney_id)
        if self._published(tourney_id) != "cancelled":
            return self._texts(key)
        in_play = self.leases_alive(tourney_id, [text(field) for field in self.client.hkeys(key)])
        return self._texts(key, in_play)

    def _texts(self, key: str, leave_out: set[str] | frozenset[str] = frozenset()) -> Iterator[tuple[str, str]]:
        fields = sorted(text(field) for field in self.client.hkeys(key) if text(field) not in leave_out)
        for start in range(0, len(fields), TEXT_BATCH):
            batch = fields[start : start + TEXT_BATCH]
            for field, raw in zip(batch, self.client.hmget(key, batch), strict=True):
                if raw is not None:
                    yield field, text(raw)

    def running_ids(self) -> list[str]:
        return [t for t in self.ids() if self.client.hget(self.keys.tourney(t), "state") == b"running"]

    def mark_dispatched(self, tourney_id: str, table: str, attempts: int = 0, unstarted: int = 0) -> None:
        """The table's task was sent now, after ``attempts`` runs of it had started and ``unstarted``
        copies had been sent since the last start."""
        key = self.keys.tourney_table(tourney_id, table)
        self.client.hset(
            key,
            mapping={"dispatched_ms": str(now_ms()), "dispatched_after": str(attempts), "unstarted": str(unstarted)},
        )

    # running ---------------------------------------------------------------------------------
    def start_table(self, tourney_id: str, table: str, runner: str, lease_s: float) -> str:
        return text(self._run(self._start, tourney_id, table, runner, int(lease_s * 1000), now_ms())[0])

    def renew_table(self, tourney_id: str, table: str, runner: str, lease_s: float) -> bool:
        keys = [self.keys.tourney_lease(tourney_id, table)]
        return bool(self._renew(keys=keys, args=[runner, int(lease_s * 1000)]))

    def next_game(self, tourney_id: str, table: str, runner: str, lease_s: float) -> str:
        """Before each game: 'run' (the lease renewed), 'lost' (another runner's now) or 'cancelled'
        (the lease released)."""
        return text(self._run(self._next_game, tourney_id, table, runner, int(lease_s * 1000)))

    def set_waiting(self, tourney_id: str, table: str, names: Sequence[str], until_ms: int) -> None:
        """The table waits for ``names`` (connected entrants not online) until ``until_ms``; cleared
        once its forfeits are decided (``decide_forfeits``)."""
        waiting = json.dumps({"names": list(names), "until_ms": until_ms})
        self.client.hset(self.keys.tourney_table(tourney_id, table), "waiting", waiting)

    def decide_forfeits(
        self,
        tourney_id: str,
        table: str,
        forfeits: list[str],
        away: Sequence[AwaySighting] = (),
        online: Sequence[str] = (),
    ) -> list[str]:
        """The table's forfeits, decided once (a resumed table keeps the first decision, returned). With
        the first decision only, at once: the marks of ``away`` set (``away_marks``; a mark there keeps
        its time), each only if no table cleared that entrant's mark since it was seen away, and the
        marks of the agents ``online`` cleared (their clear counts raised)."""
        marks = json.dumps({seen.mark.agent_id: {"mark": seen.mark.to_json(), "clears": seen.clears} for seen in away})
        decided = self._run(self._forfeits, tourney_id, table, json.dumps(forfeits), marks, json.dumps(list(online)))
        return list(json.loads(decided))

    def record_game(
        self, tourney_id: str, game: str, result: dict[str, Any], record: dict[str, Any], redealt: int | None = None
    ) -> bool:
        """``redealt``: the table's redeal count when its deal sets were read (``dealt``); a runner
        whose deals were redealt since records nothing."""
        extra = () if redealt is None else (game.partition("/")[0], redealt)
        return bool(self._run(self._game, tourney_id, game, json.dumps(result), json.dumps(record), *extra))

    def finish_table(self, tourney_id: str, table: str, games: Sequence[str]) -> tuple[str, int, int, int]:
        """(first|duplicate|missing|incomplete|cancelled, tables done, tables so far, current round): the
        table is finished only when every one of ``games`` (its game ids) is recorded."""
        status, done, tables, current = self._run(self._finish, tourney_id, table, now_ms(), json.dumps(list(games)))
        return text(status), int(done), int(tables), int(current)


SUMMARY_FIELDS = ("summary", "state", "round", "tables", "tables_done", "created_ms", "finished_ms")


def deal_sets(raw: str | bytes) -> list[DealSet]:
    return [DealSet.from_dict(data) for data in json.loads(raw)]


def shown_field(deal: int) -> str:
    return f"shown:d{deal}"


def not_found(tourney_id: str) -> TournamentNotFound:
    """NOT_FOUND naming the request's field, as every tournament RPC calls it."""
    return TournamentNotFound(f"tournament_id: no tournament {tourney_id!r}")


def _fields(tourney_id: str, raw: dict[Any, Any]) -> dict[str, str]:
    """A tournament's hash as text; NOT_FOUND when there is none."""
    if not raw:
        raise not_found(tourney_id)
    return {text(k): text(v) for k, v in raw.items()}


def _progress(data: dict[str, str], games: int) -> Progress:
    return Progress(
        state=data["state"],
        round=int(data["round"]),
        tables=int(data["tables"]),
        tables_done=int(data["tables_done"]),
        games_done=int(games),
        created_ms=int(data["created_ms"]),
        finished_ms=int(data.get("finished_ms", 0)),
    )
