"""The benchmark's report, as the registry finds every mode's: the pipeline's (compare's report
is the same plus its differences)."""

from loadtest.pipeline.report import print_report, write_reports

__all__ = ["print_report", "write_reports"]
