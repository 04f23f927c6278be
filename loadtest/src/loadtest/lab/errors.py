"""The one error every part of the harness raises for a problem the user can act on."""


class LabError(Exception):
    """A problem to report in one line (`./test.sh: error: ...`), then exit non-zero."""
