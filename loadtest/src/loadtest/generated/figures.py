"""How the figures of a generated app's process are shown (Metric), and the phases a process
measures them in (PHASES): scale reports them, workers shows its own the same way, and losses
reads a scale run's by phase."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    label: str
    unit: str  # "s" or "MiB"
    digits: int


# What a process measures, phase by phase (modes/scale/runner.py); each phase has the bound
# to itself, and a phase that does not finish leaves out the phases after it.
PHASES = {
    "start": ("import_s", "to_health_s", "rss_idle_mib", "uss_idle_mib"),
    "routes": ("routes_s", "rss_routes_mib", "uss_routes_mib"),
    "openapi": ("openapi_s", "rss_openapi_mib"),
}
