import sys

from pyscheduler.cli import main

sys.exit(main())
