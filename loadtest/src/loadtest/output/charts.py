"""Charts drawn with matplotlib, as SVG text, in the arms' own colours (commons/arms.py).

SVG with the text drawn as paths needs no font and no script: inlined in report.html, the
charts render offline, opened from disk, in any browser.
"""

import io
import re
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: draw to files only
# Labels come from files the lab reads: "$5 vs $10" is text, not mathematics, and a label such as
# "$\\undefinedcmd{x}$" must not stop a run from drawing its report (issue 53).
matplotlib.rcParams["text.parse_math"] = False

import matplotlib.pyplot as plt  # noqa: E402 - after choosing the backend
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.legend_handler import HandlerTuple  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import NullFormatter, ScalarFormatter  # noqa: E402

from loadtest.lab.arms import ARMS, VERSION_ARMS, arm_named  # noqa: E402

__all__ = ["Axes", "Figure", "plt"]
OTHER_COLOUR = "#8172b3"  # an arm that is not (or no longer) in the registry
REFERENCE_COLOUR = "#bbbbbb"
# Text sizes: a legend reads as large as the axis labels (matplotlib's "medium", 10 pt).
LEGEND_FONTSIZE = 10
# How far past an interval's end a bar's value is written, in points: clear of the cap.
VALUE_OFFSET_PT = 7


# Arms of a compare file that the registry does not name: the next colour of these, in the order
# the charts first meet them (their arms' order), so no two share one.
OTHER_COLOURS = (OTHER_COLOUR, "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd")
OTHER_ARMS: dict[str, str] = {}


def colour(arm: str) -> str:
    if arm in ARMS or arm in VERSION_ARMS:
        return arm_named(arm).colour
    if arm not in OTHER_ARMS:
        OTHER_ARMS[arm] = OTHER_COLOURS[len(OTHER_ARMS) % len(OTHER_COLOURS)]
    return OTHER_ARMS[arm]


def log_scale(ax: Axes, *, x: bool = False, y: bool = False) -> None:
    """A log axis labelled in plain numbers (1, 10, 100): matplotlib's own log labels are
    mathematics (10 to the power), which text.parse_math, off above, would print as typed."""
    if x:
        ax.set_xscale("log")
    if y:
        ax.set_yscale("log")
    for axis in [ax.xaxis] * x + [ax.yaxis] * y:
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_formatter(NullFormatter())


def to_svg(figure: Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    text = buffer.getvalue()
    text = text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE: it is inlined
    return re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.DOTALL)  # RDF: no use here


def error_bars(value: float, low: float | None, high: float | None) -> list[list[float]]:
    if low is None or high is None:
        return [[0.0], [0.0]]
    return [[value - low], [high - value]]


def bar_with_value(
    ax: Axes,
    position: float,
    value: float,
    low: float | None,
    high: float | None,
    text: str,
    *,
    width: float = 0.8,
    horizontal: bool = False,
    fontsize: int = 8,
    **style: Any,
) -> None:
    """A bar with its interval (if any) and its value, written just past the interval's far
    end, so the label never sits on the error bar."""
    errors = error_bars(value, low, high) if low is not None and high is not None else None
    if horizontal:
        ax.barh(position, value, width, xerr=errors, capsize=3, **style)
        end = high if high is not None else value
        ax.annotate(
            text,
            (end, position),
            xytext=(VALUE_OFFSET_PT, 0),
            textcoords="offset points",
            va="center",
            fontsize=fontsize,
        )
    else:
        ax.bar(position, value, width, yerr=errors, capsize=3, **style)
        end = high if high is not None else value
        ax.annotate(
            text,
            (position, end),
            xytext=(0, VALUE_OFFSET_PT),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=fontsize,
        )


def legend_outside(ax: Axes, fontsize: int = LEGEND_FONTSIZE, **options: Any) -> None:
    """The legend to the right of the plotting area: it can cover no bar and no value."""
    ax.legend(
        fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, **options
    )


def shade_handles(arms: list[str], shades: list[tuple[str, float]]) -> dict[str, Any]:
    """Legend entries for bars in each arm's colour, one shade per measure: each entry shows
    its shade in every arm's colour, so the legend names every arm's bars (for ax.legend)."""
    handles = [
        tuple(Patch(facecolor=colour(arm), alpha=alpha, edgecolor="white") for arm in arms)
        for _, alpha in shades
    ]
    return {
        "handles": handles,
        "labels": [label for label, _ in shades],
        "handler_map": {tuple: HandlerTuple(ndivide=None, pad=0)},
    }
