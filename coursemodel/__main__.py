# SPDX-License-Identifier: MIT
"""python3 -m coursemodel ARGS: `./lab ARGS` (coursemodel/cli.py)."""

import sys

from .cli import main

sys.exit(main(sys.argv[1:]))
