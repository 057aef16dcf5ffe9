"""After a compaction, is the system prompt evaluated again? On the bundled model.

    python -m bench.compaction_cache

Parley puts a summary after the conversation's system prompt, inside its system message
(server/agent/prompt.py `system_text`), so the prompt after a compaction begins with the
same tokens as before it: llama.cpp's prompt cache (on by default in its server engine) keeps
them, and only what follows is evaluated. This asks the engine itself (its own
`/v1/chat/completions`, non-streamed, one token) for three prompts in turn on one slot:

1. the chat before compaction: system prompt + 12 turns + the question;
2. the same chat compacted as Parley sends it: system prompt + summary + last turn + question;
3. for comparison, the summary put before the system prompt (what Parley does not do).

and prints the engine's `timings`: `cache_n` (tokens taken from the cache) and `prompt_n`
(tokens evaluated), with the system prompt's own token count. Token counts, not times: the
figures do not depend on the machine's load.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import httpx

from server.agent.prompt import system_text
from server.models.local import LocalBackend
from tests.support.parley import Parley, wait_model_ready

SYSTEM = (
    "You are Parley's assistant on the user's own computer. Answer briefly and plainly. "
    "When the user names a file, a place or a person, use their words. "
) * 6
SUMMARY = (
    "The user is planning a garden: tomatoes along the south fence, basil between them, a "
    "compost heap by the shed; they asked about watering twice a week and mulching in June. "
) * 3


def history() -> list[dict[str, str]]:
    turns: list[dict[str, str]] = []
    for n in range(12):
        turns.append({"role": "user", "content": f"Question {n}: what about bed {n}? " * 4})
        turns.append({"role": "assistant", "content": f"Bed {n} wants sun and compost. " * 5})
    return turns


def ask(engine: Any, messages: list[dict[str, str]]) -> dict[str, int]:
    reply = httpx.post(
        f"{engine.url}/v1/chat/completions",
        headers={"Authorization": f"Bearer {engine.key}"},
        json={"messages": messages, "max_tokens": 1, "id_slot": 0},
        timeout=300,
    )
    reply.raise_for_status()
    timings = reply.json()["timings"]
    return {"cache_n": int(timings.get("cache_n", 0)), "prompt_n": int(timings["prompt_n"])}


def tokens(engine: Any, text: str) -> int:
    reply = httpx.post(
        f"{engine.url}/tokenize",
        headers={"Authorization": f"Bearer {engine.key}"},
        json={"content": text},
        timeout=60,
    )
    return len(reply.json()["tokens"])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = Parley(Path(tmp) / "data").start()
        try:
            wait_model_ready(server)
            backend = server.services.models.resolve(None).backend
            assert isinstance(backend, LocalBackend)
            httpx.post(  # the engine starts with the first reply
                f"http://127.0.0.1:{server.port}/v1/chat/completions",
                headers={"Authorization": f"Bearer {server.token}"},
                json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1},
                timeout=300,
            )
            engine = backend.engine
            assert engine is not None
            system = {"role": "system", "content": SYSTEM}
            question = {"role": "user", "content": "And what should I plant next to the basil?"}
            turns = history()
            before = [system, *turns, question]
            compacted = system_text(SYSTEM, None, SUMMARY)
            assert compacted is not None
            after = [{"role": "system", "content": compacted}, *turns[-2:], question]
            wrong = [
                {"role": "system", "content": f"{SUMMARY}\n\n{SYSTEM}"},
                *turns[-2:],
                question,
            ]
            print(f"system prompt: {tokens(engine, SYSTEM)} tokens (its text alone)")
            for name, messages in (
                ("before compaction", before),
                ("compacted, as Parley sends it", after),
                ("before compaction again", before),
                ("compacted, summary before the system prompt", wrong),
            ):
                figures = ask(engine, messages)
                print(f"{name:46} cache_n {figures['cache_n']:5}  prompt_n {figures['prompt_n']:5}")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
