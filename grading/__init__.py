# SPDX-License-Identifier: MIT
"""The course's autograder: grades student submissions with the labs' own harnesses.

Entry point: ``python3 -m grading --help``. Instructor documentation: docs/grading.md.
Python 3 standard library only.
"""

__version__ = "1.0"
