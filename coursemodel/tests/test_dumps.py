# SPDX-License-Identifier: MIT
"""coursemodel.dumps: the one reader of the harnesses' output dumps (common/output_dump.cpp)."""

import json
import math
import unittest

from coursemodel import dumps


def line(**changes) -> str:
    record = {"key": "time 3 256 threads run 7", "n": 0, "count": 5000, "block": 4096, "non_finite": 0,
              "blocks": [[1.5, -2.5, 0.0, 9.0, 0.25], [0.5, 0.5, None, None, 0.0]]}
    record.update(changes)
    return json.dumps(record)


class DumpsTest(unittest.TestCase):
    def test_records_are_read_by_key_in_order(self):
        raw = "\n".join([line(), line(n=1), "", line(key="check 3")]).encode()
        records, problem = dumps.parse(raw)
        self.assertEqual(problem, "")
        self.assertEqual(sorted(records), ["check 3", "time 3 256 threads run 7"])
        first, second = records["time 3 256 threads run 7"]
        self.assertEqual((first.number, second.number, first.count, first.block), (0, 1, 5000, 4096))
        self.assertEqual(first.blocks[0], dumps.Block((1.5, -2.5), 0.0, 9.0, 0.25))
        self.assertTrue(math.isnan(first.blocks[1].low))  # null: no finite output in the block
        self.assertTrue(dumps.step_key("3") in records and "time 3 256 threads run 7".startswith(dumps.timed_prefix("3")))

    def test_a_dump_that_breaks_the_format_gives_no_records(self):
        cases = [(None, "no output dump"), (b"x" * (dumps.DUMP_MAX + 1), "implausibly large"),
                 (b"\n" * (dumps.RECORDS_MAX + 1), "implausibly many"), (b"{", "not well-formed"),
                 (line(count=-1).encode(), "not well-formed"), (line(n=True).encode(), "not well-formed"),
                 (line(blocks=[[1, 2, 3, 4]]).encode(), "not well-formed"),
                 (line(blocks=[[1, 2, 3, 4, "5"]]).encode(), "not well-formed"),
                 (line(blocks=[[0, 0, 0, 0, 0]] * (dumps.BLOCKS_MAX + 1)).encode(), "not well-formed")]
        for raw, why in cases:
            with self.subTest(why=why):
                records, problem = dumps.parse(raw)
                self.assertEqual(records, {})
                self.assertIn(why, problem)

    def test_blocks_hold_at_least_block_min_outputs_and_at_most_blocks_max_of_them(self):
        self.assertEqual(dumps.block_size(10), dumps.BLOCK_MIN)
        self.assertEqual(dumps.block_size(dumps.BLOCKS_MAX * dumps.BLOCK_MIN * 3 + 1), dumps.BLOCK_MIN * 3 + 1)


if __name__ == "__main__":
    unittest.main()
