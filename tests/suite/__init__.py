"""The test suite's own tooling: `make test`'s stage runner and its timing table (stages.py)."""
