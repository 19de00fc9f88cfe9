"""Which files the dashboard serves as docs, and what a served doc may do: only docs/*.md by
name (nothing outside docs/, however the name is spelled), raw HTML shown as text."""

from pathlib import Path

import pytest

from services.dashboard import docs


@pytest.mark.parametrize(
    "name",
    [
        "../pyproject.toml",
        "..",
        "../README.md",  # a Markdown file, but not one of docs/
        "%2e%2e%2fREADME.md",
        "..%2fREADME.md",
        "/etc/passwd",
        "operations.md/",
        "operations.md\x00.png",
        ".hidden.md",
        "dashboard.png",  # in docs/, not Markdown
        "nothing.md",
        "",
    ],
)
def test_only_a_markdown_file_of_docs_is_found(name: str) -> None:
    assert docs.find(name) is None


def test_every_markdown_file_of_docs_is_found_by_its_name() -> None:
    names = sorted(p.name for p in docs.DOCS.glob("*.md"))
    assert "operations.md" in names
    assert [docs.find(n) for n in names] == [docs.DOCS / n for n in names]


def test_a_link_out_of_docs_is_not_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("# secret\n")
    inside = tmp_path / "docs"
    inside.mkdir()
    (inside / "secret.md").symlink_to(outside)
    (inside / "runbook.md").write_text("# runbook\n")
    monkeypatch.setattr(docs, "DOCS", inside)
    assert docs.find("secret.md") is None
    assert docs.find("runbook.md") == inside / "runbook.md"


def test_raw_html_in_a_doc_is_shown_as_text(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text('# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">\n')
    html = docs.page(doc)
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img" not in html
    assert '<h1 id="title">Title</h1>' in html
