"""The one error every part of the harness raises for a problem the user can act on, and the
way a watcher thread hands one to the main thread."""

import _thread


class LabError(Exception):
    """A problem to report in one line (`./test.sh: error: ...`), then exit non-zero."""


# Problems found by a watcher thread (the embedded PostgreSQL died mid-run): the main thread is
# interrupted, tears everything down as on Ctrl-C, and reports this instead of "interrupted".
raised_elsewhere: list[LabError] = []


def interrupt_main_with(error: LabError) -> None:
    raised_elsewhere.append(error)
    _thread.interrupt_main()  # a KeyboardInterrupt in the main thread: every cleanup runs
