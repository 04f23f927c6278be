"""`./test.sh losses RUN_DIR...`: where Pydantic 2 costs more, read from runs (never measured
here): every figure whose v2/v1 interval lies on the losing side of 1 in two runs or more."""
