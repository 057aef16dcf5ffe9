"""A reply drawn whole from its parts (server/types PartJSON): its text, its tool steps as
compact lines (desktop/widgets/step_lines.py; a sub-agent's, with its own steps beneath:
sub_agent_lines.py), the sources it cited."""

from __future__ import annotations

from desktop.markdown_render import MarkdownRenderer
from desktop.reply_events import with_inner_steps
from desktop.widgets.step_lines import citation_line
from desktop.widgets.sub_agent_lines import tool_step_html
from desktop.widgets.transcript.colours import Colours
from desktop.widgets.transcript.links import Links
from server.types import PartJSON, ToolPartJSON


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
        """A reply drawn whole from its parts: text, and its tool steps as lines."""
        pieces = []
        for part in parts:
            if part["type"] == "text":
                if part["text"].strip():
                    pieces.append(self._renderer.render(part["text"]))
            elif part["type"] == "tool":
                pieces.append(self.step(part, model))
            else:
                link = self._links.cite(part)
                pieces.append(citation_line(part, self._colours.muted, link))
        return "".join(pieces)
