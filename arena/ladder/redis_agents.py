"""``AgentStore``: the ``RedisStore`` part that registers agents and keeps their tokens."""

from __future__ import annotations

import secrets

from redis.typing import EncodableT, FieldT

from arena.clock import now_ms
from arena.keys import AGENT_ID, new_token, text, token_hash
from arena.ladder.limits import MAX_SELF_REGISTERED
from arena.ladder.model import AGENT_KINDS, AGENT_NAME, AGENT_NAME_RULE, HOUSE_PREFIX, Agent, name_skeleton
from arena.ladder.redis_base import StoreBase, parse_agent
from arena.ladder.store import AlreadyExists, LimitReached, PermissionDenied, StoreError, Unauthenticated, shown
from arena.play.specs import SeatSpecError, builtin_bots, check_endpoint
from ohell.bots import BOT_FACTORIES

FORMULA_START = ("=", "+", "-", "@")  # what makes a spreadsheet read a CSV cell as a formula


def check_version(version: str) -> None:
    """An agent sets its version itself, and the host sees it in a terminal (``ohell agent list``)
    and in the ladder export's CSV: plain printable text (no escape sequence, no bidi override, no
    line break), not starting like a formula."""
    if not 1 <= len(version) <= 64 or not version.isprintable() or version.startswith(FORMULA_START):
        raise StoreError("version must be 1-64 printable characters, not starting with = + - @", "version")


class AgentStore(StoreBase):
    """Agents: registration, tokens, versions, pages of them."""

    max_self_registered = MAX_SELF_REGISTERED

    def register_agent(
        self,
        name: str,
        kind: str,
        version: str = "",
        bot: str = "",
        endpoint: str = "",
        house: bool = False,
        self_registered: bool = False,
    ) -> tuple[Agent, str]:
        if not AGENT_NAME.fullmatch(name) or (name.lower().startswith(HOUSE_PREFIX) and not house):
            raise StoreError(f"name {shown(name)} must be {AGENT_NAME_RULE}", "name")
        if kind not in AGENT_KINDS:
            raise StoreError(f"kind {kind!r} must be one of {', '.join(AGENT_KINDS)}", "kind")
        if kind == "builtin" and bot not in BOT_FACTORIES:
            raise StoreError(f"bot {shown(bot)} is not a built-in bot ({builtin_bots()})", "bot")
        if bot and kind != "builtin":  # it was kept nowhere, and the host thought the agent would play it
            raise StoreError(f"bot {shown(bot)} is for builtin agents only: a {kind} agent plays its own bot", "bot")
        if self_registered and kind != "connected":
            raise PermissionDenied(f"kind {kind!r}: a self-registered agent can only be connected", "kind")
        if kind == "endpoint":
            try:
                check_endpoint(endpoint)
            except SeatSpecError as error:
                raise StoreError(str(error), "endpoint") from None
        if version:
            check_version(version)
        if self_registered:
            self._count_self_registration()
        try:
            return self._create_agent(name, kind, version, bot, endpoint, house, self_registered)
        except BaseException:
            if self_registered:  # it registered no agent: its place under the cap is free again
                self.client.decr(self.keys.self_registered)
            raise

    def _count_self_registration(self) -> None:
        """Take a place under ``max_self_registered`` (LimitReached when none is left): counted before
        the agent is made, so that callers at once cannot all pass a check of the count."""
        if self.client.incr(self.keys.self_registered) > self.max_self_registered:
            self.client.decr(self.keys.self_registered)
            raise LimitReached(
                f"{self.max_self_registered} agents have registered themselves already (the limit):"
                " ask the host to register yours"
            )

    def _create_agent(
        self, name: str, kind: str, version: str, bot: str, endpoint: str, house: bool, self_registered: bool
    ) -> tuple[Agent, str]:
        number = self.client.incr(self.keys.agent_seq)
        token = new_token()
        agent = Agent(
            f"a{number}",
            name,
            kind,
            version,
            bot if kind == "builtin" else "",
            endpoint if kind == "endpoint" else "",
            house,
            now_ms(),
            self_registered,
            token if kind == "endpoint" else "",
        )
        holder = self._name(args=[self.keys.prefix, name, name_skeleton(name), agent.agent_id])
        if holder is not None:
            held_as = self.client.hget(self.keys.agent(text(holder)), "name")
            if held_as is None or text(held_as) == name:
                raise AlreadyExists(f"an agent named {name!r} exists", "name")
            raise AlreadyExists(
                f"an agent named {text(held_as)!r} exists ({name!r}: names are unique whatever their letter case"
                " and look-alike letters: I l 1 i, O 0, rn m, vv w)",
                "name",
            )
        fields: dict[FieldT, EncodableT] = {
            "agent_id": agent.agent_id,
            "name": name,
            "kind": kind,
            "version": version,
            "bot": agent.bot,
            "endpoint": agent.endpoint,
            "house": int(house),
            "created_ms": agent.created_ms,
            "token_sha": token_hash(token),
            "self_registered": int(self_registered),
            "dial_token": agent.dial_token,
        }
        with self.client.pipeline() as pipe:
            pipe.hset(self.keys.agent(agent.agent_id), mapping=fields)
            pipe.hset(self.keys.agent_tokens, token_hash(token), agent.agent_id)
            pipe.execute()
        return agent, token

    def authenticate(self, agent_id: str, token: str) -> Agent:
        stored = self.client.hget(self.keys.agent(agent_id), "token_sha")
        if stored is None or not secrets.compare_digest(text(stored), token_hash(token)):
            raise Unauthenticated(f"no agent {agent_id!r} with this token", "token")
        return self.get_agent(agent_id)

    def agent_for_token(self, token: str) -> Agent | None:
        agent_id = self.client.hget(self.keys.agent_tokens, token_hash(token))
        return self.get_agent(text(agent_id)) if agent_id else None

    def open_ladder_exists(self) -> bool:
        """Whether some ladder lets self-registered agents in (open self-registration)."""
        return any(ladder.entry == "open" for ladder in self.list_ladders())

    def set_token(self, agent_id: str, rotate: bool) -> str | None:
        """Replace (``rotate``) or remove the agent's token; returns the new token, or for a
        revocation the old hash (None when it had no token). The old token stops working at once.
        A revoked agent, of any kind, is seated nowhere: its tickets go (it is enrolled nowhere), the
        platform no longer holds a token to dial it with, and ``join`` refuses it until a rotation."""
        agent = self.get_agent(agent_id)
        old = self.client.hget(self.keys.agent(agent_id), "token_sha")
        token = new_token() if rotate else None
        ladders = [] if rotate else [text(name) for name in self.client.smembers(self.keys.ladders)]
        with self.client.pipeline() as pipe:
            for ladder in ladders:
                pipe.delete(self.keys.ticket(ladder, agent_id))
                pipe.zrem(self.keys.queue(ladder), agent_id)
                pipe.srem(self.keys.enrolled(ladder), agent_id)
            if old:
                pipe.hdel(self.keys.agent_tokens, text(old))
            if token is not None:
                pipe.hset(self.keys.agent_tokens, token_hash(token), agent_id)
                fields: dict[FieldT, EncodableT] = {"token_sha": token_hash(token)}
                if agent.kind == "endpoint":
                    fields["dial_token"] = token
                pipe.hset(self.keys.agent(agent_id), mapping=fields)
                pipe.hdel(self.keys.agent(agent_id), "revoked_ms")
            else:
                revoked: dict[FieldT, EncodableT] = {"token_sha": "", "dial_token": ""}
                if not agent.revoked:  # revoking again keeps the first time
                    revoked["revoked_ms"] = now_ms()
                pipe.hset(self.keys.agent(agent_id), mapping=revoked)
            pipe.execute()
        return token if rotate else (text(old) if old else None)

    def agent_names(self, agent_ids: list[str]) -> dict[str, str]:
        """The registered names of those of ``agent_ids`` that are agents, in one round trip."""
        ids = [agent_id for agent_id in dict.fromkeys(agent_ids) if AGENT_ID.fullmatch(agent_id)]
        with self.client.pipeline(transaction=False) as pipe:
            for agent_id in ids:
                pipe.hget(self.keys.agent(agent_id), "name")
            found = pipe.execute()
        return {agent_id: text(name) for agent_id, name in zip(ids, found, strict=True) if name}

    def list_agents(self, offset: int, limit: int) -> tuple[list[Agent], bool]:
        """Agents in registration order from the ``offset``-th; and whether more follow."""
        last = int(self.client.get(self.keys.agent_seq) or 0)
        numbers = range(offset + 1, min(last, offset + limit) + 1)
        with self.client.pipeline(transaction=False) as pipe:
            for number in numbers:
                pipe.hgetall(self.keys.agent(f"a{number}"))
            found = pipe.execute()
        return [parse_agent(raw) for raw in found if raw], offset + limit < last

    def set_version(self, agent_id: str, version: str) -> Agent:
        check_version(version)
        self.get_agent(agent_id)
        self.client.hset(self.keys.agent(agent_id), "version", version)
        return self.get_agent(agent_id)
