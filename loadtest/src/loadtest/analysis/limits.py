"""Every limit a flag is raised at, in one place (docs/results.md, "Flags", explains each)."""

# A ratio is published to within about ±5%: a wider 95% interval is flagged.
CI_HALF_WIDTH_LIMIT = 0.05
# Where the app alone should be the limit (the benchmark's READ synthetic, every ladder rung): a
# window in which it kept less than this share of its CPUs busy was limited by something else
# (the load generator, or the machine).
SATURATION_LIMIT = 0.90
# Locust's CPU over a run (start-up included) in % of one core, per load process that has a core
# of its own: above this, the load generator, not the app, may be what limits the windows.
LOCUST_CPU_LIMIT_PERCENT = 80
# The other arms should be idle in a window's counted span. More than this share of the span
# on their CPU (over two 10 ms ticks in a 0.4 s span) means the previous arm's requests were
# still running: the settling time was too short for them.
SPILL_LIMIT = 0.05
# ... flagged, like FOREIGN_LIMIT, when more than this share of windows show it.
SPILL_WINDOWS_LIMIT = 0.10
# Programs other than the arms on the (pinned) app CPUs: on a quiet machine about 1% of a CPU
# (kernel work for loopback traffic), up to ~10% in a few windows; more, in more windows,
# means another program (another benchmark?) took the arms' CPU.
FOREIGN_LIMIT = 0.15
# locust's and wrk's ratios (--cross-check) should agree to within this share of locust's.
AGREEMENT_LIMIT = 0.10
# Where more ratios than this are flagged for one reason, one line counts them and names the
# widest few, instead of naming all.
NAMED_RATIOS_LIMIT = 6
# The latency mode: a ratio of percentiles with a 95% interval wider than this is flagged (a
# tail's interval is wide by nature: a p99 of 2,000 requests stands on its 20 slowest).
LATENCY_CI_HALF_WIDTH_LIMIT = 0.25
# ... and the open-loop generator fell behind in a window (or did not hold a rate on the
# near-free endpoint) when 1% of its requests went out more than this late.
LATE_LIMIT_MS = 2.0
# ... and httperf's p50 and p99 agree with the lab's when they are this close, or within this
# share of the lab's figure where that is more (docs/latency.md: its 1 ms buckets, a connection
# per request, its clock starting when it sends).
HTTPERF_TOLERANCE_MS = 1.0
HTTPERF_TOLERANCE_SHARE = 0.25


def within_text(limit: float) -> str:
    """A relative half-width as the flags say it: 0.05 is "±5%", 0.025 "±2.5%"."""
    return f"±{limit * 100:g}%"
