# SPDX-License-Identifier: MIT
"""The secret seed of each harness run.

Default: a fresh random seed per run (secrets), never stored anywhere the submission can reach
before the run; the harness receives it in its environment only, after the student's code is built.
The harness process holds the student's code, so the seed cannot be hidden from that run itself:
it is one-time instead, and learning it afterwards (the report prints it) helps no later run.

With an instructor key (--seed-key FILE): HMAC-SHA256(key, submission id, lab, digest of the lab's
files), so a regrade of the same files reproduces the same sizes, and any change to the files
draws new ones. Without the key the seed cannot be derived from the submission or the course.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

SEED_LIMIT = 1 << 53  # exact in JSON numbers and doubles


class Seeds:
    def __init__(self, key: bytes | None = None, fixed: int | None = None):
        if key is not None and len(key) < 16:
            raise ValueError("the seed key must hold at least 16 bytes")
        self.key = key
        self.fixed = fixed

    @property
    def mode(self) -> str:
        return "fixed" if self.fixed is not None else "keyed" if self.key else "random"

    def for_run(self, submission_id: str, lab: str, digest: str) -> int:
        if self.fixed is not None:
            return self.fixed
        if self.key:
            message = f"{submission_id}\0{lab}\0{digest}".encode()
            value = int.from_bytes(hmac.new(self.key, message, hashlib.sha256).digest()[:8], "big")
            return value % (SEED_LIMIT - 1) + 1
        return secrets.randbelow(SEED_LIMIT - 1) + 1


def perf_seed(seed: int, index: int) -> int:
    """The seed of perf pair `index` of a lab's grading (the student's and the reference's run of the
    pair share it): the lab's seed for the first pair, then seeds derived from it, each in 1..2^53-1."""
    if index == 0:
        return seed
    value = int.from_bytes(hashlib.sha256(f"perf pair {index}\0{seed}".encode()).digest()[:8], "big")
    return value % (SEED_LIMIT - 1) + 1
