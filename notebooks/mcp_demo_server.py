"""The MCP server of ``mcp.ipynb``: a tiny shop inventory, over stdio.

Written with the ``mcp`` SDK's ``MCPServer`` (once called FastMCP), as you
would write your own. Its answers never change, so the notebook's recorded
model conversation replays exactly.
"""

from __future__ import annotations

import base64

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations

server = MCPServer("inventory", version="1.0")

STOCK = {"widget": (42, "aisle 3"), "gadget": (0, "aisle 7"), "sprocket": (7, "aisle 1")}

# The shop's logo: a 2x2 orange PNG.
LOGO = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000002000000020802000000fdd49a73"
        "0000001049444154789c63f8dfc300440c100a002f3e062d98a374290000000049454e44ae426082"
    )
).decode()


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def stock(item: str) -> str:
    """How many of ``item`` are in stock, and where."""
    count, place = STOCK.get(item.lower(), (0, "not stocked"))
    return f"{item}: {count} in stock ({place})"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def logo() -> CallToolResult:
    """The shop's logo, as an image."""
    return CallToolResult(
        content=[
            TextContent(type="text", text="The shop logo:"),
            ImageContent(type="image", data=LOGO, mime_type="image/png"),
        ]
    )


@server.tool()
def restock(item: str, count: int) -> str:
    """Order ``count`` more of ``item`` (changes the inventory)."""
    return f"ordered {count} x {item}"


if __name__ == "__main__":
    server.run()
