"""The matchmaker's agent RPCs: a mixin of ``MatchmakerServicer``. Registering needs the host
token (or open self-registration); token rotation, revocation and the agent list are the host's."""

from __future__ import annotations

from typing import Any

import grpc

from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.rpc.ratelimit import caller_of, refuse
from services.matchmaker.base import ServicerBase, page_bounds
from services.matchmaker.messages import KIND_OF, agent_to_proto, standing_to_proto


class AgentRpcs(ServicerBase):
    """RegisterAgent, SetAgentVersion, GetAgent, RotateAgentToken, RevokeAgentToken, ListAgents."""

    async def RegisterAgent(self, request: pb.RegisterAgentRequest, context: Any) -> pb.RegisterAgentResponse:
        host = await self._host(context, self_registration=True)
        if not host and self.registrations is not None:
            wait_ms = await self.registrations.wait_ms("register:" + caller_of(context))
            if wait_ms > 0:
                await refuse(context, wait_ms, "self-registration limit reached")
        if request.kind not in KIND_OF:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"kind: {request.kind} must be BUILTIN, CONNECTED or ENDPOINT"
            )
        agent, token = await self._call(
            context,
            self.store.register_agent,
            request.name,
            KIND_OF[request.kind],
            request.version,
            request.bot,
            request.endpoint,
            False,
            not host,
        )
        return pb.RegisterAgentResponse(agent=agent_to_proto(agent), token=token)

    async def SetAgentVersion(self, request: pb.SetAgentVersionRequest, context: Any) -> pb.SetAgentVersionResponse:
        agent = await self._caller(context, request.agent_id)
        updated = await self._call(context, self.store.set_version, agent.agent_id, request.version)
        return pb.SetAgentVersionResponse(agent=agent_to_proto(updated))

    async def GetAgent(self, request: pb.GetAgentRequest, context: Any) -> pb.GetAgentResponse:
        agent = await self._call(context, self.store.get_agent, request.agent_id)
        response = pb.GetAgentResponse(agent=agent_to_proto(await self._shown_agent(context, agent)))
        if request.ladder:
            await self._call(context, self.store.get_ladder, request.ladder)
            standing = await self._call(context, self.store.standing, request.ladder, request.agent_id)
            response.standing.CopyFrom(standing_to_proto(standing))
        return response

    async def RotateAgentToken(self, request: pb.RotateAgentTokenRequest, context: Any) -> pb.RotateAgentTokenResponse:
        await self._host(context)
        token = await self._call(context, self.store.set_token, request.agent_id, True)
        agent = await self._call(context, self.store.get_agent, request.agent_id)
        return pb.RotateAgentTokenResponse(agent=agent_to_proto(agent), token=token or "")

    async def RevokeAgentToken(self, request: pb.RevokeAgentTokenRequest, context: Any) -> pb.RevokeAgentTokenResponse:
        await self._host(context)
        old = await self._call(context, self.store.set_token, request.agent_id, False)
        return pb.RevokeAgentTokenResponse(revoked=old is not None)

    async def ListAgents(self, request: pb.ListAgentsRequest, context: Any) -> pb.ListAgentsResponse:
        await self._host(context)
        offset, size = await page_bounds(context, request.page_token, request.page_size)
        agents, more = await self._call(context, self.store.list_agents, offset, size)
        return pb.ListAgentsResponse(
            agents=[agent_to_proto(a) for a in agents], next_page_token=str(offset + size) if more else ""
        )
