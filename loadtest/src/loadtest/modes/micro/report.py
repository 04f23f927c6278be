"""The micro mode's tables, in the terminal and in report.md, from results.json alone."""

from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.lab.files import write_text_safely
from loadtest.modes.micro.results import PER_ARM_GROUPS, SHAPES_GROUP, TITLES
from loadtest.output.text import format_number, format_ratio, markdown_table, print_table

CONTAINER_OPERATIONS = ("encode", "decode")


def format_microseconds(figures: dict[str, Any]) -> str:
    digits = 0 if figures["us_per_call"] >= 1000 else 1
    text = format_number(figures["us_per_call"], digits)
    if figures["stdev_us"] is not None:
        text += f" ± {format_number(figures['stdev_us'], digits)}"
    return text


def format_to_baseline(figures: dict[str, Any]) -> str:
    if figures["is_baseline"]:
        return "baseline"
    return format_ratio(figures["ratio_to_baseline"], mark=False)


def arm_versions(summary: dict[str, Any], arm: str) -> str:
    versions = summary["arms"][arm]["versions"]
    return f"Pydantic {versions.get('pydantic') or '–'}, FastAPI {versions.get('fastapi') or '–'}"


def pydantic_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    arms = list(summary["arms"])
    header = ["path"]
    for arm in arms:
        header += [f"{arm} µs ± sd", f"{arm} vs baseline"]
    comparisons = summary.get("across_arms")
    if comparisons:
        reference = comparisons["reference"]
        header += [f"{reference} ÷ {arm} [95% CI]" for arm in comparisons["speedup_over_reference"]]
    rows = []
    for name, figures in summary["arms"][arms[0]]["benchmarks"].items():
        row = [figures["label"]]
        for arm in arms:
            cell = summary["arms"][arm]["benchmarks"].get(name)
            row += [format_microseconds(cell), format_to_baseline(cell)] if cell else ["–", "–"]
        if comparisons:
            for speedups in comparisons["speedup_over_reference"].values():
                # The reference's time over this arm's: above 1, this arm is faster. The
                # baseline's is 1 by construction, so it is left out.
                speedup = speedups.get(name)
                shown = speedup and speedup["estimate"] and not figures["is_baseline"]
                row.append(format_ratio(speedup, mark=False) if shown else "–")
        rows.append(row)
    return header, rows


def single_arm(summary: dict[str, Any]) -> tuple[str, dict[str, dict]]:
    [(arm, figures)] = summary["arms"].items()
    return arm, figures["benchmarks"]


def encoder_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    _, benchmarks = single_arm(summary)
    header = ["encoder (to bytes)", "µs per call ± sd", "vs baseline"]
    rows = [
        [figures["label"], format_microseconds(figures), format_to_baseline(figures)]
        for figures in benchmarks.values()
    ]
    return header, rows


def container_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    _, benchmarks = single_arm(summary)
    header = [
        "format",
        "encode µs ± sd",
        "encode vs",
        "decode µs ± sd",
        "decode vs",
        "bytes",
        "zlib bytes",
    ]
    rows = []
    for name, facts in summary["formats"].items():
        row = [facts["label"]]
        for operation in CONTAINER_OPERATIONS:
            cell = benchmarks.get(f"{name}.{operation}")
            row += [format_microseconds(cell), format_to_baseline(cell)] if cell else ["–", "–"]
        row += [f"{facts['bytes']:,}", f"{facts['zlib_bytes']:,}"]
        rows.append(row)
    return header, rows


ROW_BUILDERS = {
    "pydantic": pydantic_rows,
    "shapes": pydantic_rows,
    "encoders": encoder_rows,
    "container": container_rows,
}


def baseline_label(group: str, summary: dict[str, Any]) -> str:
    if group == SHAPES_GROUP:
        return "each row's own: the dump without a union, the reused adapter"
    if group == "container":
        name = summary["baselines"][0].split(".")[0]
        return f"{summary['formats'][name]['label']}, the study's starting point"
    [baseline] = summary["baselines"]
    arms = list(summary["arms"])
    return f"{summary['arms'][arms[0]]['benchmarks'][baseline]['label']} (plain Python)"


def table_title(group: str, summary: dict[str, Any]) -> str:
    # Today's words for the group (an older run's results.json keeps the words it was written with).
    title = TITLES.get(group, summary["title"])
    return f"{title} — baseline: {baseline_label(group, summary)}"


def where_note(group: str, summary: dict[str, Any]) -> str:
    arms = summary["arms"]
    if group in PER_ARM_GROUPS:
        return "Each app in its own environment: " + "; ".join(
            f"{arm} in {figures['environment']} ({arm_versions(summary, arm)})"
            for arm, figures in arms.items()
        )
    [(arm, figures)] = arms.items()
    return f"Timed once, in {figures['environment']}'s environment (arm {arm}), without the app"


def caption(group: str, summary: dict[str, Any]) -> str:
    samples = max(
        figures["samples"]
        for arm in summary["arms"].values()
        for figures in arm["benchmarks"].values()
    )
    text = (
        f"{where_note(group, summary)}. µs: median of {samples} rounds ± std-dev. vs baseline: "
        "time over the baseline's time in the same round, median [95% CI]; below 1x is faster."
    )
    if group in PER_ARM_GROUPS and summary.get("across_arms"):
        reference = summary["across_arms"]["reference"]
        text += (
            f" {reference} ÷ other: {reference}'s time over the other's, each taken over the "
            "baseline of its own round, then paired round by round across the two processes; "
            "above 1x the other is faster."
        )
    return text


def print_report(results: dict[str, Any], console: Console) -> None:
    for group, summary in results["micro"]["groups"].items():
        header, rows = ROW_BUILDERS[group](summary)
        print_table(
            console,
            header,
            rows,
            title=table_title(group, summary),
            caption=caption(group, summary),
        )


def write_reports(run_dir: Path, results: dict[str, Any]) -> list[Path]:
    return [write_report(run_dir, results)]


REPORT_NOTES = {
    "pydantic": (
        "Every path starts from the ladder's 100 attribute objects (commons/synthetic.py) and, "
        "where it ends in JSON, was checked to give the same posts as the baseline before it "
        "was timed. *serialise only* dumps a model validated once beforehand; *construct* "
        "skips validation; FastAPI's response_model path is `serialize_response` and the "
        "response's body, as a route with `response_model=PostsOut` does it, without the "
        "thread pool of a `def` route. Pydantic's `dump_json` gives a str, the plain paths "
        "bytes. The majors do `is_published` at different steps: Pydantic 1 computes it in a "
        "validator (in *construct*, the app's own code does), Pydantic 2 as a computed field "
        "while serialising; so between *validate only*, *construct only* and *serialise only* "
        "that cost moves from one row to another, and only the rows that end in JSON compare "
        "the same work. The rounds of all processes count as pairs: the interval does not "
        "widen for differences between processes."
    ),
    "shapes": (
        "Two shapes users reported after moving to Pydantic 2, spelt in each arm's idiom: a "
        "model whose field holds a member of 10,000 ints, dumped to JSON (`.json()` in "
        "Pydantic 1, `model_dump_json()` in 2) with the field as the member itself, as a plain "
        "union of three tagged members, and as the same union discriminated by the tag "
        "(pydantic#12912); and one row validated by `parse_obj_as(List[Row], ...)` at every "
        "call, against the reusable way, a module-level `TypeAdapter` in Pydantic 2 "
        "(Pydantic 1.10 caches the model parse_obj_as builds, so there both rows are the "
        "same call; fern-api/fern#16013). The three dumps were checked to give the same JSON, "
        "the two validations the same rows, before timing."
    ),
    "encoders": (
        "The same 100 post dicts (the plain function's output, datetimes as `datetime`), "
        "checked to encode the same posts before timing; every encoder ends in bytes (ujson's "
        "str is encoded, as stdlib json's is; both write non-ASCII as is). orjson and msgspec "
        "render datetimes natively (msgspec writes UTC as `Z`), json and ujson cannot and call "
        "the Python `default` (ujson raises TypeError without one); *json, datetimes already "
        "strings* is the json-vs-orjson study's variant without `default`, so its distance to "
        "the baseline is what calling back costs json."
    ),
    "container": (
        "A dict of 2,000 records keyed by name (ints, floats, short strings, booleans, None, "
        "a list of three ints), deterministic. Every format gave back exactly what it was "
        "given (values and types) before it was timed; string keys keep JSON's round trip "
        "exact. bytes after zlib: `zlib.compress` at its default level, measured once. "
        "Encode and decode are each compared with pickle's, highest protocol, of the same "
        "round. Decoding builds 2,000 dicts and lists, and the garbage collector (left on) "
        "passes over them while they are built: part of every decoder's time, which draws the "
        "fast decoders closer together than the encoders."
    ),
}


def versions_line(micro: dict[str, Any]) -> str:
    """Every environment's versions, once each."""
    seen: dict[str, dict[str, Any]] = {}
    for summary in micro["groups"].values():
        for figures in summary["arms"].values():
            seen.setdefault(figures["environment"], figures["versions"])
    return "; ".join(
        f"{environment}: "
        + ", ".join(f"{package} {version}" for package, version in versions.items() if version)
        for environment, versions in seen.items()
    )


def write_report(run_dir: Path, results: dict[str, Any]) -> Path:
    micro, settings, host = results["micro"], results["settings"], results["host"]
    sections = []
    for group, summary in micro["groups"].items():
        header, rows = ROW_BUILDERS[group](summary)
        sections.append(
            f"## {table_title(group, summary)}\n\n{markdown_table(header, rows)}\n\n"
            f"{caption(group, summary)}\n\n{REPORT_NOTES.get(group, '')}\n"
        )
    text = f"""# Micro-benchmarks (in-process, no HTTP)

Run {results["started_at"][:19]} → {results["finished_at"][:19]} UTC \
({results["elapsed_s"]:.0f}s){" with --quick" if settings["quick"] else ""}, on \
{host["cpu_model"]} ({host["cores_available"]} CPUs available), {host["os"]}.

Each environment ran {settings["processes"]} fresh processes per group, {settings["rounds"]} \
rounds each ({settings["pairs_per_benchmark"]} rounds per benchmark). A round times every \
benchmark of a group once, in an order rotated round by round; a measurement is timeit's loop \
of calls, calibrated per process to last at least about {settings["min_time_s"]:g}s, with the \
garbage collector left on (timeit turns it off; collecting what the paths allocate is part of \
their cost). A ratio to the baseline is formed per round, so the machine's drift cancels out, \
and is the median over rounds with its exact 95% confidence interval. Pinning: \
{settings["pinning"]["note"]}.

Versions: {versions_line(micro)}.

{chr(10).join(sections)}"""
    path = run_dir / "report.md"
    write_text_safely(path, text)
    return path
