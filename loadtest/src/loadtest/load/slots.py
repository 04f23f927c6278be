"""A schedule slot: what one window loads. An arm (an app environment: commons/arms.py, or a
service a user names) and, where a mode loads one arm several ways, its variant (the ladder's
rung, the sweep's cell). One name for both, written `arm/variant` (the arm alone without a
variant: the benchmark's slots are its arms), and one codec."""

from dataclasses import dataclass

SEPARATOR = "/"


@dataclass(frozen=True)
class Slot:
    arm: str
    variant: str | None = None

    def __post_init__(self) -> None:
        if not self.arm or SEPARATOR in self.arm:
            raise ValueError(f"an arm's name cannot be empty or hold {SEPARATOR!r}: {self.arm!r}")

    @property
    def name(self) -> str:
        """In schedules, locust's request names and plan files."""
        return self.arm if self.variant is None else f"{self.arm}{SEPARATOR}{self.variant}"

    @classmethod
    def parse(cls, name: str) -> "Slot":
        arm, separator, variant = name.partition(SEPARATOR)
        return cls(arm, variant if separator else None)
