"""In-process micro-benchmarks in one app's locked environment, timed in interleaved rounds;
`./test.sh micro` (loadtest/.../modes/micro/runner.py) runs several of these processes and
pairs their rounds.

Unlike the rest of commons it reaches Pydantic, through the app named by --app: it runs only in
an app's environment, never in the apps themselves."""

import argparse
import json
import math
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

from commons.probes.microbench.benchmark import MicrobenchError
from commons.probes.microbench.container import container_group
from commons.probes.microbench.encoders import encoder_group
from commons.probes.microbench.pydantic_paths import pydantic_group
from commons.probes.microbench.reported_shapes import shapes_group
from commons.probes.microbench.timing import time_group

GROUPS = ("pydantic", "encoders", "container", "shapes")
VERSION_PACKAGES = ("pydantic", "pydantic-core", "fastapi", "orjson", "ujson", "msgspec")


def environment_versions() -> dict[str, str | bool | None]:
    versions: dict[str, str | bool | None] = {"python": platform.python_version()}
    for package in VERSION_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def run(arguments: argparse.Namespace) -> dict[str, Any]:
    groups = list(dict.fromkeys(arguments.groups))  # each group once, in the order given
    results: dict[str, Any] = {
        "app": arguments.app,
        "process": arguments.process,
        "versions": environment_versions(),
        "settings": {
            "groups": groups,
            "rounds": arguments.rounds,
            "min_time_s": arguments.min_time,
            "gc_enabled_during_timing": True,
        },
        "benchmarks": [],
    }
    for group in groups:
        if group == "pydantic":
            benchmarks = pydantic_group(arguments.app)
        elif group == "encoders":
            benchmarks = encoder_group()
        elif group == "shapes":
            benchmarks = shapes_group(arguments.app)
        else:
            benchmarks, results["container"] = container_group()
        print(f"{arguments.app} process {arguments.process}: timing {group}", file=sys.stderr)
        results["benchmarks"] += time_group(
            benchmarks,
            rounds=arguments.rounds,
            min_time_s=arguments.min_time,
            process=arguments.process,
        )
    return results


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line (no usage block), like the runner's errors."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(text)
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m commons.probes.microbench", description=__doc__)
    parser.add_argument("--app", required=True, help="the app package: app_v1 or app_v2")
    parser.add_argument("--groups", nargs="+", choices=GROUPS, default=list(GROUPS))
    parser.add_argument("--rounds", type=positive_int, default=5, help="rounds per group")
    parser.add_argument(
        "--min-time", type=positive_float, default=0.05, help="seconds per measurement"
    )
    parser.add_argument(
        "--process", type=int, default=0, help="this process's number (rotates the order)"
    )
    parser.add_argument("--output", type=Path, required=True, help="where the raw JSON goes")
    return parser


def main(argv: list[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    try:
        results = run(arguments)
    except MicrobenchError as error:
        print(f"microbench: error: {error}", file=sys.stderr)
        return 1
    try:
        arguments.output.write_text(json.dumps(results, indent=1) + "\n")
    except OSError as error:
        print(f"microbench: error: cannot write {arguments.output}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
