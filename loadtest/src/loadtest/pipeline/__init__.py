"""The benchmark's pipeline, which `./test.sh` (modes/benchmark) and `./test.sh compare FILE`
(modes/compare) both run: its settings, the records of a scenario's locust run, one scenario
measured on every arm (measure.py), the wrk cross-check, results.json's figures, and the report
(tables, charts, the HTML page, the terminal). `./test.sh report A B` draws two of its runs
side by side. The modes add their doors: the options, the run skeleton, which arms."""
