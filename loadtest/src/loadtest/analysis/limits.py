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
