"""In-process micro-benchmarks of the Pydantic paths, JSON encoders and a container of records
(the App Engine pickle-versus-marshal study's), run in an arm's environment as
`python -m commons.probes.microbench` (__main__.py)."""
