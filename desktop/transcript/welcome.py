"""What a new chat shows before its first message: which model will answer and whether it
is ready, three example prompts as cards to click, and cards that open Settings, Models, the
Library and the keyboard shortcuts (qml/Welcome.qml draws it). A card says what it does as a
link would: `prompt:N` sends example N; `open:settings|models|library|shortcuts` opens that."""

from __future__ import annotations

from typing import TypedDict

EXAMPLES = (
    "Explain what a hash table is, with a short Python example.",
    "Write a friendly two-line reminder to water the plants.",
    "Give me three ideas for a rainy Sunday afternoon.",
)
PANELS = ("settings", "models", "library", "shortcuts")
# Each panel's card: its icon, its name, what it is for, and the key that opens it too.
CARDS = (
    ("settings", "Settings", "Add a backend: Ollama, llama-server, vLLM, OpenAI", "Ctrl+,"),
    ("models", "Models", "Pick, download and load models", ""),
    ("library", "Library", "Let the model search your own documents", ""),
    ("keyboard", "Keyboard shortcuts", "Every command's key", "F1"),
)
KEPT = (
    "Your chats are kept on this computer. A reply is saved as it is written, and kept even "
    "if you stop it or close the window."
)


class Card(TypedDict):
    link: str  # what a click does, as the transcript's links say it
    icon: str
    title: str
    hint: str
    key: str  # its keyboard shortcut ("" if none)


class WelcomePage(TypedDict):
    model: str  # "" while the server starts
    state: str  # the model's state in words ("ready", "loading…", an error)
    tone: str  # the palette's colour of that state: success, warning, danger or muted
    examples: list[Card]
    panels: list[Card]
    kept: str


def welcome_page(model: str | None, state: str) -> WelcomePage:
    """The page; `state`: the model's state in words, as the model picker says it."""
    return {
        "model": model or "",
        "state": state if model else "Parley is starting its server…",
        "tone": _tone(state) if model else "muted",
        "examples": [
            {"link": f"prompt:{n}", "icon": "message", "title": text, "hint": "", "key": ""}
            for n, text in enumerate(EXAMPLES)
        ],
        "panels": [
            {"link": f"open:{panel}", "icon": icon, "title": title, "hint": hint, "key": key}
            for panel, (icon, title, hint, key) in zip(PANELS, CARDS, strict=True)
        ],
        "kept": KEPT,
    }


def _tone(state: str) -> str:
    if state.startswith("error"):
        return "danger"
    if state.startswith("ready"):
        return "success"
    return "warning"


def welcome_text(page: WelcomePage) -> str:
    """The page as plain text (the transcript's text: Find, the accessible text)."""
    if page["model"]:
        status = f"Your next message goes to {page['model']} — {page['state']}."
    else:
        status = page["state"]
    lines = ["Parley", status, "Try one:"]
    lines += [card["title"] for card in page["examples"]]
    lines += [f"{card['title']}: {card['hint']}" for card in page["panels"]]
    return "\n".join([*lines, page["kept"]])


def example(link: str) -> str | None:
    """The example prompt a `prompt:N` link's path names."""
    return EXAMPLES[int(link)] if link.isdigit() and int(link) < len(EXAMPLES) else None
