"""The open-loop load generator: requests sent at scheduled times whatever the answers do, and
their latency counted from those times (the latency mode's; wrk2's way, in Python)."""
