"""README.md and docs/: the v1 -> v2 diff of schemas.py is the real one, every relative link
resolves (to a file, and to a heading where it names one), and the README stays short."""

import difflib
import re
import unicodedata
from pathlib import Path

import pytest

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
V1, V2 = "app_v1/src/app_v1/schemas.py", "app_v2/src/app_v2/schemas.py"
README = REPOSITORY_ROOT / "README.md"
DOCS = REPOSITORY_ROOT / "docs"
# Issue 23: the README answers first and leaves the rest to docs/.
README_MAX_LINES = 250

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target) and ![alt](target), with an optional "title"; autolinks <http://...> are not
# relative links and are not matched.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, ...


def test_readme_shows_the_real_schemas_diff() -> None:
    readme = README.read_text()
    [shown] = re.findall(r"```diff\n(.*?)\n```", readme, flags=re.DOTALL)
    v1 = (REPOSITORY_ROOT / V1).read_text().splitlines()
    v2 = (REPOSITORY_ROOT / V2).read_text().splitlines()
    assert shown == "\n".join(difflib.unified_diff(v1, v2, V1, V2, lineterm=""))


def test_readme_stays_short() -> None:
    lines = len(README.read_text().splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move the rest to docs/"


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, with inline code spans blanked out: a link or a
    heading shown as code is not one."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else INLINE_CODE.sub("", line))
    return lines


def heading_text(markdown: str) -> str:
    """A heading's text as GitHub renders it: links become their text, code and emphasis
    marks go."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    return re.sub(r"[`*]", "", text)


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading (github-slugger): lower case, punctuation and symbols
    dropped, each space a hyphen."""
    text = heading_text(heading).strip().lower()
    kept = "".join(
        character
        for character in text
        if character in " -_" or unicodedata.category(character)[0] in "LNM"
    )
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor in a Markdown file; a repeated heading gets -1, -2, ..."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match is None:
            continue
        slug = github_slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(path: Path) -> list[str]:
    """Every relative link or image in `path` whose file does not exist, or whose #anchor is
    no heading of the file it names."""
    problems = []
    for number, line in enumerate(prose_lines(path.read_text()), start=1):
        for target in LINK.findall(line):
            if EXTERNAL.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.name}:{number}: {target}"
            if not linked.exists():
                problems.append(f"{where} (no such file)")
            elif anchor and linked.suffix != ".md":
                problems.append(f"{where} (an anchor into a file that is not Markdown)")
            elif anchor and anchor not in anchors(linked):
                problems.append(f"{where} (no heading #{anchor} in {linked.name})")
    return problems


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


@pytest.mark.parametrize(
    "path", markdown_files(), ids=lambda path: str(path.relative_to(REPOSITORY_ROOT))
)
def test_every_relative_link_resolves(path: Path) -> None:
    assert broken_links(path) == []


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## Where the time goes: a ladder\n")
    (tmp_path / "chart.svg").write_text("<svg/>")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n## Same heading\n\n## Same heading\n\n"
        "[fine](other.md) [fine](other.md#where-the-time-goes-a-ladder) ![fine](chart.svg)\n"
        "[fine](#same-heading-1) [external](https://example.org/x) `[in code](missing.md)`\n"
        "```\n[in a block](missing.md)\n```\n"
        "[gone](missing.md) ![gone](missing.svg) [no heading](other.md#nowhere)\n"
        "[no heading here](#same-heading-2)\n"
    )
    assert broken_links(page) == [
        "page.md:12: missing.md (no such file)",
        "page.md:12: missing.svg (no such file)",
        "page.md:12: other.md#nowhere (no heading #nowhere in other.md)",
        "page.md:13: #same-heading-2 (no heading #same-heading-2 in page.md)",
    ]


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Pydantic v1 vs v2: behaviour differences", "pydantic-v1-vs-v2-behaviour-differences"),
        ("Start an app by hand and browse `/docs`", "start-an-app-by-hand-and-browse-docs"),
        ("results.json", "resultsjson"),
        ("9303427: the README's answer", "9303427-the-readmes-answer"),
        ("2026-11-22, AMD EPYC, two arms", "2026-11-22-amd-epyc-two-arms"),
        ("kind: ladder", "kind-ladder"),
    ],
)
def test_headings_get_githubs_anchors(heading: str, slug: str) -> None:
    assert github_slug(heading) == slug
