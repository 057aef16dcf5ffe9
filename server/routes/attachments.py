"""Files attached to messages: `POST /api/attachments?name=` with the file's bytes
as the body (any Content-Type: what the file is comes from its bytes), `GET
/api/attachments/{id}` gives them back. A message carries them by id (`attachments` in a
send or an edit: see conversations.py)."""

from __future__ import annotations

import anyio
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import BadRequestError, PayloadTooLargeError, RequestTimeoutError
from server.http.jsonbody import JSONObject, check_text, string_list
from server.routes.services import Services, services


async def upload(request: Request) -> JSONResponse:
    svc = services(request)
    name = request.query_params.get("name")
    if not name:
        raise BadRequestError("give the file's name: ?name=", code="invalid_field")
    check_text(name, "name")
    data = await _body(request, svc.attachments.limits.max_file_bytes, svc)
    attachment = await svc.attachments.upload(name, data)
    return JSONResponse(attachment, status_code=201)


async def _body(request: Request, max_bytes: int, svc: Services) -> bytes:
    too_big = PayloadTooLargeError(
        f"the file is larger than the {max_bytes >> 20} MB an attachment may be",
        code="attachment_too_large",
    )
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise too_big
    body = bytearray()
    timeout = svc.attachments.limits.upload_time
    try:
        with anyio.fail_after(timeout):
            async for chunk in request.stream():
                body += chunk
                if len(body) > max_bytes:
                    raise too_big
    except TimeoutError as exc:
        raise RequestTimeoutError(f"the file was not sent within {timeout:g} s") from exc
    except ClientDisconnect as exc:
        raise BadRequestError("the client went away while sending", code="client_gone") from exc
    if not body:
        raise BadRequestError("the file is empty", code="attachment_unreadable")
    return bytes(body)


async def download(request: Request) -> Response:
    attachment_id: str = request.path_params["attachment_id"]
    check_text(attachment_id, "attachment id")
    attachment, data = await services(request).attachments.content(attachment_id)
    return Response(
        data,
        media_type=attachment["mime"],
        headers={"Content-Disposition": "attachment", "X-Content-Type-Options": "nosniff"},
    )


def attachment_ids(body: JSONObject, svc: Services) -> tuple[str, ...] | None:
    """A send's or an edit's `attachments`: a list of upload ids (None: not given)."""
    value = body.get("attachments")
    if value is None:
        return None
    most = svc.settings.limits.attachments.max_per_message
    expected = f"a list of at most {most} attachment ids"
    return tuple(string_list(value, "attachments", most=most, max_chars=64, expected=expected))


routes = [
    Route("/api/attachments", upload, methods=["POST"]),
    Route("/api/attachments/{attachment_id}", download, methods=["GET"]),
]
