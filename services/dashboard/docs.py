"""The project's Markdown docs as HTML pages, so an alert card's runbook link
(`docs/operations.md#connectorpausedtoolong`, its rule's `runbook` annotation) opens its
section on the local stack, offline. Headings get the anchors GitHub gives them."""

import re
from html import escape
from itertools import pairwise
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

from onceflow.paths import ROOT

DOCS = ROOT / "docs"
# A served doc runs no script and loads nothing but its own inline style (and images of this
# origin): whatever a Markdown file holds, the page cannot act on the dashboard's API.
HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'",
    "X-Content-Type-Options": "nosniff",
}
NAME = re.compile(r"\A[a-z0-9][a-z0-9_-]*\.md\Z")
STYLE = """
body { font: 15px/1.55 system-ui, sans-serif; max-width: 920px; margin: 24px auto;
       padding: 0 20px; color-scheme: light dark; }
pre { padding: 10px 12px; overflow-x: auto; background: rgba(127, 127, 127, 0.12); }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.92em; }
table { border-collapse: collapse; }
td, th { border: 1px solid rgba(127, 127, 127, 0.4); padding: 3px 8px; }
:target { background: rgba(255, 200, 0, 0.25); }
"""


def anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _with_anchors(tokens: list[Token]) -> None:
    seen: dict[str, int] = {}
    for opening, inline in pairwise(tokens):
        if opening.type == "heading_open":
            slug = anchor(inline.content)
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            opening.attrSet("id", slug if count == 0 else f"{slug}-{count}")


def _html(title: str, body: str) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>{body}</body></html>"
    )


def page(path: Path) -> str:
    """One Markdown file as a whole HTML page. Raw HTML in the Markdown is shown as text, not
    passed through (CommonMark's default): the page carries no script or markup of its own."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(path.read_text())
    _with_anchors(tokens)
    return _html(f"Onceflow · docs/{path.name}", md.renderer.render(tokens, md.options, {}))


def index() -> str:
    """Every Markdown file of docs/, linked."""
    names = sorted(p.name for p in DOCS.glob("*.md") if NAME.match(p.name))
    items = "".join(f'<li><a href="/docs/{escape(n)}">docs/{escape(n)}</a></li>' for n in names)
    return _html("Onceflow · docs", f"<h1>Onceflow docs</h1><ul>{items}</ul>")


def find(name: str) -> Path | None:
    """docs/<name> when `name` is a Markdown file name that exists there."""
    if not NAME.match(name):
        return None
    path = DOCS / name
    # A link in docs/ that leads out of it is not served either.
    return path if path.is_file() and path.resolve().parent == DOCS.resolve() else None
