"""A tool's result (MCP content blocks) as the text the model and the user see."""

from __future__ import annotations

import json

import mcp_types


def result_text(result: mcp_types.CallToolResult) -> str:
    pieces = [_block_text(block) for block in result.content]
    if not pieces and result.structured_content is not None:
        pieces.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(pieces)


def _block_text(block: mcp_types.ContentBlock) -> str:
    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.ImageContent):
        return f"[an image ({block.mime_type}), not shown to the model]"
    if isinstance(block, mcp_types.AudioContent):
        return f"[audio ({block.mime_type}), not given to the model]"
    if isinstance(block, mcp_types.ResourceLink):
        return f"[a resource: {block.name} <{block.uri}>]"
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return resource.text
        return f"[a binary resource <{resource.uri}>]"
    return f"[{getattr(block, 'type', 'unknown')} content]"
