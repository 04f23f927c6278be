"""What every group of micro-benchmarks is made of (a Benchmark), the error they report in one
line, and the check that every JSON path answers the same posts before it is timed."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from commons.probes.ladder_check import rung_differences


class MicrobenchError(Exception):
    """A problem to report in one line, then exit non-zero."""


@dataclass(frozen=True)
class Benchmark:
    group: str
    name: str
    label: str
    call: Callable[[], object]
    # The benchmark of the same group that this one's per-round ratio is formed with.
    baseline: str
    details: dict[str, str] = field(default_factory=dict)  # the container's format, operation


def verify_same_posts(reference: bytes, benchmarks: Sequence[Benchmark]) -> None:
    """Every JSON path must answer the same posts (timestamps as instants) before it is timed:
    one that answered less would look faster for the wrong reason."""
    for benchmark in benchmarks:
        body = benchmark.call()
        if isinstance(body, str):
            body = body.encode("utf-8")
        if not isinstance(body, bytes):
            raise MicrobenchError(f"{benchmark.group}/{benchmark.name} gives no JSON")
        differences = rung_differences(reference, body)
        if differences:
            raise MicrobenchError(
                f"{benchmark.group}/{benchmark.name} does not answer the same posts as "
                f"{benchmark.baseline}: {'; '.join(differences)}"
            )
