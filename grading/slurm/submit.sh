#!/bin/bash
# SPDX-License-Identifier: MIT
# `python3 -m grading slurm-submit` (grading/slurm_submit.py; docs/grading.md, "On a cluster"), from any folder:
#   grading/slurm/submit.sh SUBMISSIONS_DIR OUT_DIR [extra `grade` arguments...]
PYTHONPATH="$(cd "$(dirname "$0")/../.." && pwd)${PYTHONPATH:+:$PYTHONPATH}" exec "${PYTHON:-python3}" -m grading slurm-submit "$@"
