"""The plain fields of a server's entry (server/tools/config.py), checked: strings, lists and
maps of strings, and text that can be written back to the file."""

from __future__ import annotations

import math
import re
from typing import Any

from server.errors import ConfigEntryError
from server.types.tools import ToolServerOAuthJSON


def check_text(value: object, where: str) -> None:
    """Every string is text that can be written (no lone surrogates); no NaN or Infinity."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ConfigEntryError(f"{where} holds text that is not valid Unicode") from exc
    elif isinstance(value, float) and not math.isfinite(value):
        raise ConfigEntryError(f"{where} holds a number that is not finite")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(key, where)
            check_text(item, f"'{key}'")
    elif isinstance(value, list):
        for item in value:
            check_text(item, where)


def string(entry: dict[str, Any], key: str, *, required: bool = False) -> str:
    value = entry.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise ConfigEntryError(f"'{key}' must be a non-empty string")
    return value


def strings(entry: dict[str, Any], key: str) -> None:
    value = entry.get(key, [])
    if not (isinstance(value, list) and all(isinstance(v, str) and "\x00" not in v for v in value)):
        raise ConfigEntryError(f"'{key}' must be a list of strings")


def string_map(entry: dict[str, Any], key: str) -> None:
    value = entry.get(key, {})
    if not (
        isinstance(value, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        and not any("\x00" in k + v for k, v in value.items())
    ):
        raise ConfigEntryError(f"'{key}' must be an object of strings")


OAUTH_KEYS = tuple(ToolServerOAuthJSON.__annotations__)  # every key is optional


def check_oauth(entry: dict[str, Any]) -> None:
    """A remote server's `oauth`, as its sign-in reads it (server/tools/sign_in.py)."""
    value = entry.get("oauth", {})
    if not isinstance(value, dict) or not set(value) <= set(OAUTH_KEYS):
        raise ConfigEntryError("'oauth' must be an object of " + ", ".join(OAUTH_KEYS))
    for key in OAUTH_KEYS:
        if key in value and not (isinstance(value[key], str) and value[key].strip()):
            raise ConfigEntryError(f"'oauth.{key}' must be a non-empty string")
    if "clientSecret" in value and "clientId" not in value:
        raise ConfigEntryError("'oauth.clientSecret' needs the 'oauth.clientId' it belongs to")
    # The SDK takes a metadata document's URL as a client ID only over HTTPS, with a path.
    url = value.get("clientMetadataUrl")
    if url is not None and not re.match(r"^https://[^\s/]+/\S+$", url):
        raise ConfigEntryError("'oauth.clientMetadataUrl' must be an https:// address with a path")
