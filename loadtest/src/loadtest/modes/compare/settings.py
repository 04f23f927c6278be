"""compare's settings: the benchmark's (its defaults, its --quick), the file's plan in place of
the registry's, and what the file and the command line allow."""

from dataclasses import dataclass, field
from typing import ClassVar

from loadtest.load.plan import PairedPlan
from loadtest.modes.benchmark.settings import BenchmarkSettings
from loadtest.modes.compare.file import ArmOptions, CompareFile


@dataclass(frozen=True)
class CompareSettings(BenchmarkSettings):
    file: CompareFile | None = None
    allow_different: bool = False  # time arms whose answers differ from the baseline's
    NOT_IN_RESULTS: ClassVar[tuple[str, ...]] = (
        *BenchmarkSettings.NOT_IN_RESULTS,
        "file",
        "docker",
        "cross_check",
        "ports",
        "arm_options",  # settings.services says each arm's own_process
    )
    arm_options: dict[str, ArmOptions] = field(default_factory=dict)

    @property
    def plan(self) -> PairedPlan:
        assert self.file is not None, "a compare run's settings come from its file"
        return self.file.plan
