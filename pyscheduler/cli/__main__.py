"""`python -m pyscheduler.cli ...` runs the `dollymp` command (pyproject's console script)."""

import sys

from pyscheduler.cli import main

sys.exit(main())
