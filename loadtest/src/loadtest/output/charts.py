"""Charts drawn with matplotlib, as SVG text, in the arms' own colours (commons/arms.py).

SVG with the text drawn as paths needs no font and no script: inlined in report.html, the
charts render offline, opened from disk, in any browser.
"""

import io
import re
from collections.abc import Callable
from typing import Literal

import matplotlib

matplotlib.use("Agg")  # no display: draw to files only

import matplotlib.pyplot as plt  # noqa: E402 - after choosing the backend
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from loadtest.lab.arms import ARMS  # noqa: E402

__all__ = ["Axes", "Figure", "plt"]
OTHER_COLOUR = "#8172b3"  # an arm that is not (or no longer) in the registry
REFERENCE_COLOUR = "#bbbbbb"


def colour(arm: str) -> str:
    return ARMS[arm].colour if arm in ARMS else OTHER_COLOUR


def to_svg(figure: Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    text = buffer.getvalue()
    text = text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE: it is inlined
    return re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.DOTALL)  # RDF: no use here


def finish(
    ax: Axes,
    *,
    ylabel: str,
    title: str,
    legend: Literal["upper left", "lower right"],
    fontsize: int = 8,
) -> None:
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(fontsize=fontsize, loc=legend)
    ax.set_title(title)


def error_bars(value: float, low: float | None, high: float | None) -> list[list[float]]:
    if low is None or high is None:
        return [[0.0], [0.0]]
    return [[value - low], [high - value]]


def grouped_bars(
    ax: Axes, arms: list[str], groups: list[str], value: Callable[[str, str], float | None]
) -> None:
    """One group of bars per arm, one bar per group entry (lighter for later entries)."""
    width = 0.8 / len(groups)
    for index, arm in enumerate(arms):
        for position, group in enumerate(groups):
            height = value(arm, group)
            if height is None:
                continue
            ax.bar(
                index + (position - (len(groups) - 1) / 2) * width,
                height,
                width,
                color=colour(arm),
                alpha=1.0 - 0.25 * position,
                edgecolor="white",
                label=group if index == 0 else None,
            )
    ax.set_xticks(range(len(arms)), arms)
