"""An MCP server over stdio written by hand, as a server in another language may write: its one
tool `cut` answers with text that ends in half of a surrogate pair (a JavaScript string cut
mid-emoji: `JSON.stringify` writes it as the escape \\ud83d, which is valid JSON).

    python -m tests.support.raw_mcp
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOL = {"name": "cut", "description": "Text cut mid-emoji.", "inputSchema": {"type": "object"}}


def answer(request_id: Any, result: dict[str, Any]) -> None:
    # json.dumps escapes every non-ASCII character, a lone surrogate as \\ud83d.
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            answer(request_id, {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            })  # fmt: skip
        elif method == "tools/list":
            answer(request_id, {"tools": [TOOL]})
        elif method == "tools/call":
            text = "a smile cut in half: \ud83d"
            answer(request_id, {"content": [{"type": "text", "text": text}], "isError": False})
        else:
            answer(request_id, {})


if __name__ == "__main__":
    main()
