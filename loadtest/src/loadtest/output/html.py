"""Self-contained HTML pages (inline SVG charts, inline CSS, no script, no network): they open
offline, from disk, in any browser."""

from html import escape

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 75rem; color: #222;
       padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f2f2f2; }
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; }
.flags li { color: #8a4b00; } .note { color: #555; font-size: 0.9rem; }
.summary { font-size: 1.05rem; } .verdict { font-weight: 600; }
"""


def html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(cell)}</th>" for cell in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure(svg: str | None, caption: str) -> str:
    if svg is None:
        return ""
    caption_html = f'<figcaption class="note">{escape(caption)}</figcaption>'
    return f'<figure class="chart">{svg}{caption_html}</figure>'


def flags_section(flags: list[str], note: str) -> str:
    """The run's flags (if any) under their heading, then the note on how to read the page."""
    section = ""
    if flags:
        items = "".join(f"<li>{escape(flag)}</li>" for flag in flags)
        section = f'<h2>Flags</h2><ul class="flags">{items}</ul>'
    return section + f'<p class="note">{escape(note)}</p>'


def page(heading: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(heading)}</title><style>{STYLE}</style></head>"
        f"<body><h1>{escape(heading)}</h1>{body}</body></html>\n"
    )
