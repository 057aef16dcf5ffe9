"""The allows given on approval cards for the rest of a chat (server/agent/grants.py), as the
tools' settings list and revoke them.

    GET    /api/tools/grants        {"grants": [...]}: every chat's, oldest first, each with its
                                    chat's title
    DELETE /api/tools/grants/{id}   revoke one (204): the next call it covered asks again;
                                    404 when there is no such grant (revoked already, its chat
                                    deleted, or Parley restarted since)

A call waiting now is not changed by a revoke; a call already allowed runs as it was allowed.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import NotFoundError
from server.routes.services import services
from server.types.tools import GrantJSON, GrantsJSON


async def list_grants(request: Request) -> JSONResponse:
    svc = services(request)
    titles: dict[str, str | None] = {}
    found: list[GrantJSON] = []
    for grant in svc.runs.grants.all():
        if grant.conversation_id not in titles:
            conversation = await svc.store.find_conversation(grant.conversation_id)
            titles[grant.conversation_id] = conversation["title"] if conversation else None
        found.append(
            {
                "id": grant.id,
                "conversation_id": grant.conversation_id,
                "conversation_title": titles[grant.conversation_id] or None,
                "server": grant.server,
                "tool": grant.tool,
                "scope": grant.scope,
                "argument": grant.argument,
                "under": grant.under,
                "granted_at": grant.granted_at,
            }
        )
    answer: GrantsJSON = {"grants": found}
    return JSONResponse(answer)


async def revoke_grant(request: Request) -> Response:
    grant_id: str = request.path_params["grant_id"]
    if not services(request).runs.grants.remove(grant_id):
        raise NotFoundError(f"no grant with id {grant_id!r}")
    return Response(status_code=204)


routes = [
    Route("/api/tools/grants", list_grants, methods=["GET"]),
    Route("/api/tools/grants/{grant_id}", revoke_grant, methods=["DELETE"]),
]
