"""A reply drawn whole from its parts (server/types PartJSON): its text, its tool steps as
compact lines (desktop/widgets/step_lines.py), the sources it cited."""

from __future__ import annotations

from desktop.markdown_render import MarkdownRenderer
from desktop.widgets.step_lines import citation_line, step_line
from desktop.widgets.transcript.colours import Colours
from desktop.widgets.transcript.links import Links
from server.types import PartJSON, ToolPartJSON


class PartsHtml:
    def __init__(self, renderer: MarkdownRenderer, colours: Colours, links: Links) -> None:
        self._renderer = renderer
        self._colours = colours
        self._links = links  # each step and citation drawn, for its link

    def step(self, step: ToolPartJSON) -> str:
        """A tool step's line."""
        colours = self._colours
        return step_line(step, colours.muted, colours.error, colours.warning)

    def render(self, parts: list[PartJSON]) -> str:
        """A reply drawn whole from its parts: text, and its tool steps as lines."""
        pieces = []
        for part in parts:
            if part["type"] == "text":
                if part["text"].strip():
                    pieces.append(self._renderer.render(part["text"]))
            elif part["type"] == "tool":
                self._links.steps[part["id"]] = part
                pieces.append(self.step(part))
            else:
                link = self._links.cite(part)
                pieces.append(citation_line(part, self._colours.muted, link))
        return "".join(pieces)
