"""The ladder's settings: the paired protocol's, with the ladder's own defaults."""

from dataclasses import dataclass

from loadtest.load.settings import PairedLoadSettings

# The ladder compares the two Pydantic majors unless --apps says otherwise.
LADDER_APPS = ("v1", "v2")
# 6 rounds: the fewest with a 95% interval.
QUICK_PAIRS = 6


@dataclass(frozen=True)
class LadderSettings(PairedLoadSettings):
    apps: tuple[str, ...] = LADDER_APPS
    # Rounds; each holds 4 windows per rung above response_model. 20 keep most intervals within
    # about ±5-10% in about six minutes.
    pairs: int = 20
    # One warm-up window per ladder arm, not counted: the apps are already running, and each
    # route only needs its first requests (and Pydantic's first serialisation) behind it.
    warmup_s: float = 0.5
