"""Numbers as text, the same in the terminal, report.md and report.html; and tables for both."""

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from loadtest.analysis.ratio import PairedRatio

FLAG_MARK = " ⚠"


def format_number(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def bytes_label(value: float) -> str:
    """`397 B`, `39.1 KB`, `1.2 MB`: three significant digits past a kilobyte."""
    for unit, size in (("MB", 1e6), ("KB", 1e3)):
        if value >= size:
            return f"{value / size:,.3g} {unit}"
    return f"{value:,.0f} B"


def format_factor(value: float | None, digits: int = 2) -> str:
    """A bare factor: 2.00x."""
    return "–" if value is None else f"{value:.{digits}f}x"


def as_ratio(figures: PairedRatio | Mapping[str, Any] | None) -> PairedRatio | None:
    if figures is None or isinstance(figures, PairedRatio):
        return figures
    return PairedRatio.from_dict(figures)


def format_ratio(
    figures: PairedRatio | Mapping[str, Any] | None, digits: int = 2, *, mark: bool = True
) -> str:
    """`2.02x [1.95–2.08]`: the estimate with its 95% CI, and ⚠ when the ratio is flagged."""
    ratio = as_ratio(figures)
    if ratio is None or ratio.estimate is None:
        return "–"
    text = format_factor(ratio.estimate, digits)
    if ratio.ci95_low is not None and ratio.ci95_high is not None:
        text += f" [{ratio.ci95_low:.{digits}f}–{ratio.ci95_high:.{digits}f}]"
    # A ratio read from results.json keeps the flags its run gave it (compare's are against
    # its --precision); one without them is judged here, against the benchmark's ±5%.
    recorded = figures.get("flags") if isinstance(figures, Mapping) else None
    flagged = bool(recorded) if recorded is not None else bool(ratio.flags)
    return text + (FLAG_MARK if mark and flagged else "")


def format_share(figures: PairedRatio | Mapping[str, Any] | None, mark: str = "") -> str:
    """A ratio read as a share: `55% [50%–61%]` (no interval on a share of exactly 1)."""
    ratio = as_ratio(figures)
    if ratio is None or ratio.estimate is None:
        return "–"
    text = f"{ratio.estimate:.0%}"
    if ratio.ci95_low is not None and ratio.ci95_high is not None and ratio.estimate != 1:
        text += f" [{ratio.ci95_low:.0%}–{ratio.ci95_high:.0%}]"
    return text + mark


def format_spread(figures: Mapping[str, Any] | None, key: str, digits: int) -> str:
    """`median (min–max)` of a summarised figure, e.g. the start-up seconds."""
    if not figures or figures.get(key) is None:
        return "–"
    text = format_number(figures[key], digits)
    low, high = figures[f"{key}_min"], figures[f"{key}_max"]
    if low != high:
        text += f" ({format_number(low, digits)}–{format_number(high, digits)})"
    return text


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def longest_word(text: str) -> int:
    return max((len(word) for word in text.split()), default=0)


# What a column adds to its text's width: one space of padding each side and its left border;
# the table adds one border at its right.
COLUMN_FRAME = 3


def column_groups(widths: Sequence[int], room: int) -> list[list[int]]:
    """The columns after the first (the row names), in groups that fit `room` characters each
    beside the first column, every column at least as wide as its longest word; a column that
    cannot fit even alone gets a group of its own (its words then fold)."""
    groups: list[list[int]] = [[]]
    used = widths[0] + COLUMN_FRAME + 1 if widths else 0
    for index in range(1, len(widths)):
        needed = widths[index] + COLUMN_FRAME
        if groups[-1] and used + needed > room:
            groups.append([])
            used = widths[0] + COLUMN_FRAME + 1
        groups[-1].append(index)
        used += needed
    return groups


def fitted_widths(least: Sequence[int], most: Sequence[int], room: int) -> list[int]:
    """Each column's width: every column its longest line where they fit in `room` (frames
    included); else its longest word, and what is left goes first to the columns that want
    least more (a figure unwrapped), then shared by the rest as far as it goes."""
    available = room - (COLUMN_FRAME * len(least) + 1)
    if sum(most) <= available:
        return list(most)
    widths = list(least)
    spare = max(available - sum(least), 0)
    wanting = sorted(range(len(least)), key=lambda index: most[index] - least[index])
    for position, index in enumerate(wanting):
        share = -(-spare // (len(wanting) - position))  # an even share of what is left
        given = min(most[index] - least[index], share)
        widths[index] += given
        spare -= given
    return widths


def print_table(
    console: Console,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    caption: str | None = None,
) -> None:
    """A terminal table: the first column (the row's name) left, the figures right. Cells wrap
    between words, never inside one; a table too wide for the terminal is printed as several,
    each with the row names, the figures' columns in order ("continued" in the title)."""
    columns = [(column, *(row[index] for row in rows)) for index, column in enumerate(header)]
    least = [max(longest_word(text) for text in texts) for texts in columns]
    most = [
        max(len(line) for text in texts for line in text.splitlines() or [""]) for texts in columns
    ]
    groups = column_groups(least, console.width)
    for number, group in enumerate(groups):
        part = title if number == 0 or title is None else f"{title} (continued)"
        table = Table(title=part, caption=caption if number == len(groups) - 1 else None)
        shown = (0, *group)
        widths = fitted_widths(
            [least[index] for index in shown], [most[index] for index in shown], console.width
        )
        for index, width in zip(shown, widths, strict=True):
            table.add_column(
                header[index],
                justify="left" if index == 0 else "right",
                width=width,
                overflow="fold",
            )
        for row in rows:
            table.add_row(*(row[index] for index in shown))
        console.print(table)


def print_flags(console: Console, flags: Sequence[str]) -> None:
    for flag in flags:
        console.print(Text(f"⚠ {flag}", style="bold yellow"))


def pydantic_heading(versions: dict[str, Any]) -> str:
    """`Pydantic 2.14.3`, or for Pydantic 1 code on Pydantic 2 (v1-shim) `Pydantic 2.14.3,
    v1 API` (its pydantic.v1 is 1.10's source, pure Python)."""
    shimmed = versions.get("pydantic_v1") not in (None, versions["pydantic"])
    return f"Pydantic {versions['pydantic']}" + (", v1 API" if shimmed else "")


def versions_sentence(versions: dict[str, dict[str, Any]]) -> str:
    """`v1: Pydantic 1.10.27, FastAPI 0.125.0; v2: Pydantic 2.14.3 (pydantic-core 2.50.4),
    FastAPI 0.125.0.`: per arm, what its /health reported ("" for none)."""
    parts = [
        f"{arm}: Pydantic {found.get('pydantic', '?')}"
        + (f" (pydantic-core {found['pydantic_core']})" if found.get("pydantic_core") else "")
        + f", FastAPI {found.get('fastapi', '?')}"
        for arm, found in versions.items()
    ]
    return "; ".join(parts) + "." if parts else ""
