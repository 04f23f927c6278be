"""`--httperf`: one rate measured again with httperf, an open-loop generator written in C that
opens a connection per request, so the latency mode's percentiles can be checked against a tool
that shares none of its code."""

import math
import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

from loadtest.lab.errors import LabError

HTTPERF = "httperf"
# httperf polls its sockets without sleeping and keeps the load CPU busy: beside PostgreSQL it
# would slow the database it loads (READ's p99 under httperf came out 8 times the lab's), so
# the check runs where no database shares that CPU.
HTTPERF_SCENARIO = "synthetic"
HTTPERF_ELSEWHERE = (
    "the httperf check runs on READ synthetic, where no database shares the load CPU httperf "
    "keeps busy"
)
BUCKET_MS = 1.0  # httperf's histogram: 1 ms buckets (BIN_WIDTH in its stat/basic.c)
HISTOGRAM_TITLE = "Connection lifetime histogram (time in ms):"
# What one of httperf's latencies is, read from its source (stat/basic.c, gen/rate.c, timer.c,
# core.c of 0.9.0) and checked against a server that stalls its event loop.
WHAT_HTTPERF_MEASURES = (
    "httperf's connection lifetime: from the moment httperf opens a request's TCP connection "
    "(loopback) until it has read the whole reply and closed it, so every request pays a TCP "
    "connect, the server's accept and a close, which the lab's generator (keep-alive "
    "connections) does not. Arrivals are open-loop (the schedule never waits for replies: a "
    "stalled server keeps being sent new connections, and each one is timed), but the clock "
    "starts when httperf actually opens the connection, not at its scheduled time: httperf's "
    "own lateness (its 1 ms timer wheel, its busy loop falling behind, its 1024 open "
    "connections at most) is not counted, so it is free of coordinated omission for the "
    "server's stalls, not for its own. Only connections that got a reply (any status) are "
    "counted: timed-out and failed ones are left out, so errors cut the tail short. "
    "Percentiles are 1 ms bucket midpoints (+-0.5 ms)."
)
STATUS_CLASSES = ("1xx", "2xx", "3xx", "4xx", "5xx")
NUMBER = r"-?(?:[\d.]+|nan|inf)"  # httperf prints %.1f: nan or inf after a zero duration


def httperf_available() -> bool:
    return shutil.which(HTTPERF) is not None


def httperf_command(
    base_url: str,
    path: str,
    rate: float,
    duration_s: float,
    *,
    timeout_s: float = 10.0,
    poisson: bool = False,
) -> list[str]:
    """httperf sending GET `path` to `base_url` open-loop at `rate` a second for about
    `duration_s`, one request per connection, its connection-lifetime histogram printed."""
    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname:
        raise LabError(f"httperf is run here against plain http:// URLs only, not {base_url}")
    connections = round(rate * duration_s)
    if rate <= 0 or connections < 1:
        raise LabError(f"httperf at {rate:g} r/s for {duration_s:g}s would send no request")
    arrivals = (
        # A Poisson process: exponential gaps of mean 1/rate. httperf seeds it from --client
        # (0/1 by default), so every run is sent the same sequence.
        [f"--period=e{1 / rate:.9g}"] if poisson else ["--rate", f"{rate:.9g}"]
    )
    return [
        HTTPERF,
        "--server",
        parts.hostname,
        "--port",
        str(parts.port or 80),
        "--uri",
        parts.path.rstrip("/") + path,
        *arrivals,
        "--num-conns",
        str(connections),
        "--num-calls",
        "1",
        "--timeout",
        f"{timeout_s:g}",
        # No --hog: it makes httperf bind its client ports itself, from 1024 up, which takes
        # ports the lab's servers listen on and leaves them in TIME_WAIT for a minute. On Linux
        # the kernel's ephemeral range (32768-60999) is enough: on loopback it reuses ports in
        # TIME_WAIT (net.ipv4.tcp_tw_reuse = 2, the default).
        # Twice: the histogram is printed at verbosity 2 only (one --verbose prints the reply
        # rate every 5 s, no histogram).
        "--verbose",
        "--verbose",
    ]


@dataclass(frozen=True)
class HttperfFigures:
    """One httperf run, as it printed it. p50/p90/p99 come from its histogram of 1 ms buckets:
    each is the midpoint of the first bucket at which the running count reaches that fraction
    of the completed connections (httperf's own rule for its median, so p50 is its `median`),
    so they are known to 1 ms (+-0.5 ms); max_ms is its exact maximum (to 0.1 ms)."""

    connections: int  # opened
    completed: int  # connections that got a reply: the histogram's count
    requests: int
    replies: int
    replies_by_status: dict[str, int]  # "2xx": count, ...
    errors: int
    error_counts: dict[str, int]  # "client-timo": count, ...
    error_lines: tuple[str, ...]  # httperf's two "Errors:" lines, as printed
    duration_s: float
    request_rate: float  # achieved, requests/s
    max_concurrent: int  # connections open at once, at most
    # Connections opened in one pass of httperf's loop, at most: above 1 at a constant rate,
    # httperf fell behind its schedule and caught up (a Poisson process does it by itself).
    max_connect_burst: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    histogram: dict[float, int]  # bucket midpoint in ms: connections
    connection_time_ms: dict[str, float]  # min, avg, max, median, stddev of the lifetimes
    connect_ms: float  # average TCP connect time
    # httperf prints averages only: request sent to first reply byte, first to last byte.
    reply_time_ms: dict[str, float]  # response, transfer
    what_it_includes: str = field(default=WHAT_HTTPERF_MEASURES)

    def as_dict(self) -> dict[str, Any]:
        figures = asdict(self)
        figures["error_lines"] = list(self.error_lines)
        # JSON keys are strings: the bucket midpoints as httperf prints them.
        figures["histogram"] = {f"{ms:.1f}": count for ms, count in self.histogram.items()}
        return figures


def histogram_percentile(histogram: dict[float, int], fraction: float) -> float:
    """The midpoint of the first bucket at which the running count reaches `fraction` of the
    total."""
    total = sum(histogram.values())
    needed = round(fraction * total, 9)  # 0.07 * 100 is 7.000000000000001
    running = 0
    for midpoint_ms in sorted(histogram):
        running += histogram[midpoint_ms]
        if running >= needed:
            return midpoint_ms
    raise ValueError("an empty histogram has no percentile")


def parse_httperf(output: str) -> HttperfFigures:
    """httperf's standard output (with --verbose twice) as figures; its percentiles have 1 ms
    resolution: they are midpoints of its 1 ms buckets (HttperfFigures)."""
    lines = output.splitlines()
    histogram = lifetime_histogram(lines)

    def line_of(prefix: str) -> str:
        found = next((line for line in lines if line.startswith(prefix)), None)
        if found is None:
            raise LabError(f"httperf's output has no {prefix!r} line")
        return found

    total = re.match(
        rf"Total: connections (\d+) requests (\d+) replies (\d+) test-duration ({NUMBER}) s",
        line_of("Total:"),
    )
    concurrency = re.search(r"<=(\d+) concurrent", line_of("Connection rate:"))
    burst = re.search(r"(\d+)$", line_of("Maximum connect burst length:"))
    request_rate = re.match(rf"Request rate: ({NUMBER}) req/s", line_of("Request rate:"))
    if total is None or concurrency is None or burst is None or request_rate is None:
        raise LabError("httperf's summary is not in the format of httperf 0.9")
    error_lines = (line_of("Errors: total"), line_of("Errors: fd-unavail"))
    error_counts = {
        name: int(count) for line in error_lines for name, count in named_numbers(line).items()
    }
    completed = sum(histogram.values())
    if completed == 0:
        raise LabError(f"httperf completed no connection ({'; '.join(error_lines)})")
    connection_time = named_numbers(line_of("Connection time [ms]: min"))
    status = named_numbers(line_of("Reply status:"))
    return HttperfFigures(
        connections=int(total[1]),
        completed=completed,
        requests=int(total[2]),
        replies=int(total[3]),
        replies_by_status={name: int(status[name]) for name in STATUS_CLASSES},
        errors=error_counts.pop("total"),
        error_counts=error_counts,
        error_lines=error_lines,
        duration_s=float(total[4]),
        request_rate=float(request_rate[1]),
        max_concurrent=int(concurrency[1]),
        max_connect_burst=int(burst[1]),
        p50_ms=histogram_percentile(histogram, 0.5),
        p90_ms=histogram_percentile(histogram, 0.9),
        p99_ms=histogram_percentile(histogram, 0.99),
        max_ms=connection_time["max"],
        histogram=histogram,
        connection_time_ms=connection_time,
        connect_ms=named_numbers(line_of("Connection time [ms]: connect"))["connect"],
        reply_time_ms=named_numbers(line_of("Reply time [ms]:")),
    )


def lifetime_histogram(lines: list[str]) -> dict[float, int]:
    """httperf's connection-lifetime histogram (printed with -v -v): bucket ms -> count."""
    stripped = [line.strip() for line in lines]
    if HISTOGRAM_TITLE not in stripped:
        raise LabError("httperf printed no connection-lifetime histogram (it needs -v -v)")
    histogram: dict[float, int] = {}
    for line in stripped[stripped.index(HISTOGRAM_TITLE) + 1 :]:
        if not line:
            break
        if line == ":":  # a run of empty buckets left out
            continue
        bucket = re.fullmatch(r"([\d.]+)\s+(\d+)", line)
        if bucket is None:
            raise LabError(f"httperf's histogram has a line not understood: {line!r}")
        histogram[float(bucket[1])] = int(bucket[2])
    return histogram


def named_numbers(line: str) -> dict[str, float]:
    """`name value` and `name=value` pairs: `min 0.1 avg 3.9`, `2xx=528`."""
    return {
        name: float(value)
        for name, value in re.findall(rf"\b([a-z0-9][\w-]*)[ =]({NUMBER})(?=[ )%]|$)", line)
    }


def below_the_database(cpus: tuple[int, ...] | None) -> None:
    """In httperf's process before it starts: on `cpus`, at the lowest priority. It polls
    without sleeping, and beside PostgreSQL at an equal priority it would take half the CPU the
    database needs to answer it; at the lowest it yields to the database, and only its own
    sending is delayed, which its figures do not count (WHAT_HTTPERF_MEASURES)."""
    if cpus:
        os.sched_setaffinity(0, cpus)
    os.nice(19)


def run_httperf(
    base_url: str,
    path: str,
    rate: float,
    duration_s: float,
    *,
    cpus: tuple[int, ...] | None = None,
    timeout_s: float = 10.0,
    poisson: bool = False,
) -> HttperfFigures:
    """One httperf run, pinned to `cpus` if given: the load generator's, never the app's, as
    httperf polls its sockets without sleeping and keeps a CPU busy for the whole run."""
    if not httperf_available():
        raise LabError(
            "the httperf check needs httperf, which is not installed; install it "
            "(Debian/Ubuntu: apt-get install httperf) and retry"
        )
    command = httperf_command(
        base_url, path, rate, duration_s, timeout_s=timeout_s, poisson=poisson
    )
    url = base_url + path
    # The last connection opens about duration_s in; its connect, its send and its reply may
    # each take up to --timeout.
    limit_s = duration_s + 3 * timeout_s + 30
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=limit_s,
            preexec_fn=lambda: below_the_database(cpus),
        )
    except subprocess.TimeoutExpired:
        raise LabError(
            f"httperf did not finish {duration_s:g}s at {rate:g} r/s against {url} "
            f"within {math.ceil(limit_s)}s"
        ) from None
    except (OSError, subprocess.SubprocessError) as error:  # or pinning to `cpus` failed
        raise LabError(f"httperf does not start (CPUs {cpus}): {error}") from None
    if done.returncode != 0:
        # It always warns that it limits itself to FD_SETSIZE descriptors: not the reason.
        reasons = [
            line
            for line in done.stderr.strip().splitlines()
            if line.strip() and "FD_SETSIZE" not in line
        ]
        reason = reasons[-1] if reasons else f"exit status {done.returncode}"
        raise LabError(f"httperf failed against {url}: {reason}")
    return parse_httperf(done.stdout)
