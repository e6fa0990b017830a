# SPDX-License-Identifier: MIT
"""python3 -m labcli ARGS: `./lab ARGS` (labcli/cli.py)."""

import sys

from .cli import main

sys.exit(main(sys.argv[1:]))
