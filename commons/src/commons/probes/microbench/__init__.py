"""In-process micro-benchmarks of the Pydantic paths, JSON encoders and study 002's container,
run in an arm's environment as `python -m commons.probes.microbench` (__main__.py)."""
