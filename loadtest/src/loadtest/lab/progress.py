"""A live progress line on a terminal; plain timestamped lines in logs and CI."""

import sys
import time

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn


class ProgressDisplay:
    """Tracks planned load seconds: `begin(step, seconds)`, `tick()` while it runs."""

    def __init__(self, total_seconds: float, console: Console) -> None:
        self.console = console
        self.live = console.is_terminal
        self.done_seconds = 0.0
        self.step_seconds = 0.0
        self.step_started = time.monotonic()
        self._progress = Progress(
            TextColumn("{task.description}", markup=False),  # labels from files, as they are
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._task = self._progress.add_task("starting", total=total_seconds)

    def __enter__(self) -> "ProgressDisplay":
        if self.live:
            self._progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.live:
            self._progress.stop()

    def note(self, message: str) -> None:
        """A line that stays (set-up steps, verification outcomes)."""
        self.console.print(message, highlight=False)

    def begin(self, step: str, seconds: float) -> None:
        self.done_seconds += self.step_seconds
        self.step_seconds = seconds
        self.step_started = time.monotonic()
        if self.live:
            self._progress.update(self._task, description=step, completed=self.done_seconds)
        else:
            print(f"[{time.strftime('%H:%M:%S')}] {step} ({seconds:.0f}s)", file=sys.stderr)

    def tick(self) -> None:
        if self.live:
            elapsed = min(time.monotonic() - self.step_started, self.step_seconds)
            self._progress.update(self._task, completed=self.done_seconds + elapsed)
