# SPDX-License-Identifier: MIT
"""The course model: what every Python and shell entry point of the course knows about it.

Labs and their lab.json, the results files the harnesses write, the Meson build, the
compute-sanitizer command line and its output, and the ids of submissions are read and written
here, and only here: `./lab` (labcli/), the tools, the docs build and the grader use this package,
which imports none of them.
"""
