# SPDX-License-Identifier: MIT
"""`./lab`, the course's application: its commands (cli.py), a student's progress (status.py) and a
lab's run on a Slurm cluster (slurm.py). It reads the course through the course model
(coursemodel/), which imports nothing from here."""
