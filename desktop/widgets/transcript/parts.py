"""A reply drawn whole from its parts (server/types PartJSON): its text, its tool steps as
compact lines (desktop/widgets/step_lines.py; a sub-agent's, with its own steps beneath:
sub_agent_lines.py), then its sources, each once, by number (issue 43 item 5): the ones it
cited, and the passages put in its prompt that it did not cite ("Passages given to the model",
item 7). Its "[n]" of a source are links to it, as the source's line is (item 6)."""

from __future__ import annotations

import html
import os

from desktop.markdown_render import MarkdownRenderer
from desktop.reply_events import with_inner_steps
from desktop.transcript.sources import place, sources
from desktop.widgets.step_lines import citation_line
from desktop.widgets.sub_agent_lines import tool_step_html
from desktop.widgets.transcript.colours import Colours
from desktop.widgets.transcript.links import Links
from server.types import CitationPartJSON, PartJSON, ToolPartJSON

GIVEN = "Passages given to the model"
OTHERS_GIVEN = "Other passages given to the model"


class PartsHtml:
    def __init__(self, renderer: MarkdownRenderer, colours: Colours, links: Links) -> None:
        self._renderer = renderer
        self._colours = colours
        self._links = links  # each step and citation drawn, for its link

    def step(self, step: ToolPartJSON, model: str | None = None) -> str:
        """A tool step's lines (`model`: the reply's, to say when a sub-agent's differs).
        Its sub-agent's steps are drawn too, each with its details link."""
        for inner in with_inner_steps(step):
            self._links.steps[inner["id"]] = inner
        colours = self._colours
        return tool_step_html(step, colours.muted, colours.error, colours.warning, model=model)

    def render(self, parts: list[PartJSON], model: str | None = None) -> str:
        """A reply drawn whole from its parts: text, its tool steps as lines, its sources."""
        listed = sources(parts)
        links = {n: self._links.cite(source) for n, source in listed.items()}
        pieces = []
        text: list[str] = []  # a reply drawn as it came has its sources among its text
        for part in parts:
            if part["type"] == "text":
                text.append(part["text"])
            elif part["type"] == "tool":
                pieces.append(self._text("".join(text), links))
                text = []
                pieces.append(self.step(part, model))
        pieces.append(self._text("".join(text), links))
        cited = [source for source in listed.values() if source.get("cited", True)]
        muted = self._colours.muted
        pieces.extend(citation_line(source, muted, links[source["n"]]) for source in cited)
        given = [source for source in listed.values() if not source.get("cited", True)]
        if given:
            pieces.append(self._given(given, OTHERS_GIVEN if cited else GIVEN, links))
        return "".join(pieces)

    def _text(self, text: str, links: dict[int, str]) -> str:
        return self._renderer.render(text, sources=links) if text.strip() else ""

    def _given(self, given: list[CitationPartJSON], heading: str, links: dict[int, str]) -> str:
        """The passages put in the prompt that the reply did not cite: one muted line."""
        muted = self._colours.muted
        entries = []
        for source in given:
            name = html.escape(os.path.basename(source["path"]) or source["path"])
            entries.append(
                f'[{source["n"]}] <a href="{links[source["n"]]}">{name}</a>'
                f"{html.escape(place(source))}"
            )
        return (
            f'<p style="margin:6px 0 2px 0;"><span style="color:{muted};">{heading}: '
            f"{' · '.join(entries)}</span></p>"
        )
