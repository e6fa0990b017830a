# SPDX-License-Identifier: MIT
"""Submission ids (coursemodel.submission_ids), the one definition the folder grader and the Slurm
scripts share: names that give one plain id are all kept, under distinct ids, in a stable order;
`python3 -m grading ids` prints them for the Slurm scripts."""

import os
import subprocess
import sys
from pathlib import Path

from coursemodel import submission_ids
from grading import collect
from grading.__main__ import RESERVED_OUTPUTS, plan_batch
from grading.tests.helpers import REPO, TempDirTest


class SubmissionIdsTest(TempDirTest):
    def folder(self, *names: str) -> Path:
        folder = self.tmp / "subs"
        folder.mkdir(exist_ok=True)
        for name in names:
            (folder / name).mkdir() if "." not in name else (folder / name).write_bytes(b"")
        return folder

    def test_colliding_names_get_distinct_ids(self):
        folder = self.folder("alice.zip", "alice", "alice.tar.xz", "ALICE.tgz", "bob.tar.gz")
        listed = submission_ids.of_folder(folder)
        self.assertEqual([(i.index, i.id, i.path.name) for i in listed],
                         [(0, "ALICE", "ALICE.tgz"), (1, "alice-2", "alice"), (2, "alice-3", "alice.tar.xz"),
                          (3, "alice-4", "alice.zip"), (4, "bob", "bob.tar.gz")])
        self.assertEqual(len({i.id.lower() for i in listed}), len(listed))
        self.assertIn("the name 'alice.zip' gives the same id as ALICE.tgz, alice, alice.tar.xz: graded as 'alice-4'",
                      listed[3].note)
        self.assertEqual(listed[4].note, "")

    def test_a_made_up_id_never_takes_another_entrys_own(self):
        # 'alice-2' is a student's own name: alice.zip's made-up id skips it.
        listed = submission_ids.of_folder(self.folder("alice", "alice.zip", "alice-2"))
        self.assertEqual({i.path.name: i.id for i in listed}, {"alice": "alice", "alice-2": "alice-2", "alice.zip": "alice-3"})

    def test_names_of_the_graders_outputs_and_odd_names(self):
        listed = submission_ids.of_folder(self.folder("gradebook.csv", "summary.md", ".hidden", "x y!.zip"),
                                          RESERVED_OUTPUTS)
        self.assertEqual({i.path.name: i.id for i in listed},
                         {"gradebook.csv": "gradebook.csv-2", "summary.md": "summary.md-2", "x y!.zip": "x_y_"})
        self.assertEqual(submission_ids.plain_id(Path(".zip")), "submission")
        self.assertEqual(submission_ids.plain_id(Path("...x.zip")), "x")
        self.assertEqual(len(submission_ids.plain_id(Path("a" * 300))), submission_ids.MAX_ID_LENGTH)

    def test_the_folder_grader_uses_the_same_function(self):
        folder = self.folder("alice", "alice.zip", "gradebook.csv")
        entries = submission_ids.entries(folder)
        planned = plan_batch(entries, self.tmp / "out")
        listed = submission_ids.assign(entries, RESERVED_OUTPUTS)
        self.assertEqual([(sid, path, note) for sid, path, _, note in planned], [(i.id, i.path, i.note) for i in listed])
        self.assertEqual([out.name for _, _, out, _ in planned], ["alice", "alice-2", "gradebook.csv-2"])


class IdsCommandTest(TempDirTest):
    def ids(self, folder: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "grading", "ids", str(folder)], cwd=REPO, capture_output=True)

    def test_index_id_and_path_tab_separated(self):
        folder = self.tmp / "subs"
        folder.mkdir()
        for name in ("alice", "bob"):
            (folder / name).mkdir()
        for name in ("alice.zip", "alice.tar.xz", os.fsdecode(b"caf\xe9.tar")):
            (folder / name).write_bytes(b"")
        result = self.ids(folder)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = [line.split(b"\t") for line in result.stdout.splitlines()]
        self.assertEqual([(i, sid) for i, sid, _ in lines],
                         [(b"0", b"alice"), (b"1", b"alice-2"), (b"2", b"alice-3"), (b"3", b"bob"), (b"4", b"caf_")])
        self.assertEqual([path for _, _, path in lines],
                         [os.fsencode(folder.resolve() / name) for name in
                          ("alice", "alice.tar.xz", "alice.zip", "bob", os.fsdecode(b"caf\xe9.tar"))])
        self.assertIn(b"graded as 'alice-3'", result.stderr)
        self.assertEqual(self.ids(folder).stdout, result.stdout)  # the same folder, the same lines

    def test_a_name_a_line_cannot_carry_is_listed_escaped_under_a_safe_id_with_a_note(self):
        folder = self.tmp / "subs"
        folder.mkdir()
        for name in ("alice\nbob.zip", "carol\t%.tar", "dave"):
            (folder / name).write_bytes(b"")
        result = self.ids(folder)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual([line.split(b"\t")[:2] for line in lines],
                         [[b"0", b"alice_bob"], [b"1", b"carol__"], [b"2", b"dave"]])
        self.assertTrue(lines[0].split(b"\t")[2].startswith(b"escaped:"))
        self.assertIn(b"holds a control character", result.stderr)
        manifest = self.tmp / "submissions.tsv"
        manifest.write_bytes(result.stdout)
        self.assertEqual([item.path for item in collect.read_manifest(manifest)],
                         [folder.resolve() / name for name in ("alice\nbob.zip", "carol\t%.tar", "dave")])
        entry = collect.entry_of(manifest, 1)
        self.assertEqual((entry.id, entry.path.name), ("carol__", "carol\t%.tar"))
        self.assertIn("holds a control character", entry.note)
        self.assertEqual(collect.entry_of(manifest, 2).note, "")
        self.assertEqual(self.ids(self.tmp / "empty-missing").returncode, 2)
