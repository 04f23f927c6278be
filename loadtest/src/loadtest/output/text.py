"""Numbers as text, the same in the terminal, report.md and report.html; and tables for both."""

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from loadtest.analysis.ratio import PairedRatio

FLAG_MARK = " ⚠"


def format_number(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


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
    return text + (FLAG_MARK if mark and ratio.flags else "")


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


def print_table(
    console: Console,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    caption: str | None = None,
) -> None:
    """A terminal table: the first column (the row's name) left, the figures right."""
    table = Table(title=title, caption=caption)
    for index, column in enumerate(header):
        table.add_column(column, justify="left" if index == 0 else "right", no_wrap=index == 0)
    for row in rows:
        table.add_row(*row)
    console.print(table)


def print_flags(console: Console, flags: Sequence[str]) -> None:
    for flag in flags:
        console.print(f"[bold yellow]⚠ {flag}[/]", highlight=False)


def pydantic_heading(versions: dict[str, Any]) -> str:
    """`Pydantic 2.14.3`, or for Pydantic 1 code on Pydantic 2 (v1-shim) `Pydantic 2.14.3,
    v1 API` (its pydantic.v1 is 1.10's source, pure Python)."""
    shimmed = versions.get("pydantic_v1") not in (None, versions["pydantic"])
    return f"Pydantic {versions['pydantic']}" + (", v1 API" if shimmed else "")
