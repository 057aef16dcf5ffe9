"""What a new chat shows before its first message: which model will answer and whether it
is ready, three example prompts to click, and where Settings, Models and the Library are.
Links: `prompt:N` sends example N; `open:settings|models|library|shortcuts` opens that."""

from __future__ import annotations

import html

EXAMPLES = (
    "Explain what a hash table is, with a short Python example.",
    "Write a friendly two-line reminder to water the plants.",
    "Give me three ideas for a rainy Sunday afternoon.",
)
PANELS = ("settings", "models", "library", "shortcuts")


def welcome_html(model: str | None, state: str, muted: str) -> str:
    """The page; `state`: the model's state in words ("ready", "loading…", an error)."""
    if model:
        status = f"Your next message goes to <b>{html.escape(model)}</b> — {html.escape(state)}."
    else:
        status = "Parley is starting its server…"
    examples = "".join(
        f'<p style="margin:4px 0 4px 12px;">→ <a href="prompt:{n}">{html.escape(text)}</a></p>'
        for n, text in enumerate(EXAMPLES)
    )
    return (
        '<p style="margin-top:24px; font-size:x-large;"><b>Parley</b></p>'
        f"<p>{status}</p>"
        f'<p style="margin-top:16px; color:{muted};">Try one:</p>{examples}'
        f'<p style="margin-top:18px; color:{muted};">'
        '<a href="open:settings">Settings</a> (Ctrl+,) add a backend — Ollama, '
        "llama-server, vLLM, OpenAI. "
        '<a href="open:models">Models</a> picks and loads models. '
        'The <a href="open:library">Library</a> lets the model search your own documents. '
        '<a href="open:shortcuts">Keyboard shortcuts</a> (F1).</p>'
        f'<p style="color:{muted};">Your chats are kept on this computer. A reply is saved as it '
        "is written, and kept even if you stop it or close the window.</p>"
    )


def example(link: str) -> str | None:
    """The example prompt a `prompt:N` link's path names."""
    return EXAMPLES[int(link)] if link.isdigit() and int(link) < len(EXAMPLES) else None
