# SPDX-License-Identifier: MIT
"""Archives read in a limited child process: bombs, huge headers, too many entries, odd names,
things that are not files; each is a reason, never a hang, a crash or the grader's memory."""

import bz2
import gzip
import io
import os
import tarfile
import time
import zipfile

from grading.archive import Limits, read_submission
from grading.submission import list_submission, take
from grading.tests.helpers import TempDirTest, make_fake_course

SMALL = Limits(total_bytes=8 << 20, entries=100, timeout_s=60)


class ArchiveTest(TempDirTest):
    def read(self, path, limits=SMALL, wanted=("fake.cu",)):
        start = time.monotonic()
        result = read_submission(path, set(wanted), limits)
        self.assertLess(time.monotonic() - start, 60)
        return result

    def tar_with(self, name: str, members: list[tuple[str, bytes]], mode: str = "w:gz"):
        path = self.tmp / name
        with tarfile.open(path, mode) as archive:
            for member, data in members:
                info = tarfile.TarInfo(member)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        return path

    def test_decompression_bombs_stop_at_the_cap(self):
        zeros = bytes(24 << 20)  # 24 MiB of zeros: a few KiB compressed, over the 8 MiB cap
        cases = [self.tar_with("bomb.tar.gz", [("labs/01-fake/fake.cu", b"x"), ("filler.bin", zeros)]),
                 self.tar_with("bomb.tar.bz2", [("filler.bin", zeros)], "w:bz2"),
                 self.tar_with("bomb.tar.xz", [("filler.bin", zeros)], "w:xz")]
        zipped = self.tmp / "bomb.zip"
        with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
            for i in range(3):  # each under the hashing cap, together over the total
                archive.writestr(f"filler{i}.bin", bytes(4 << 20))
        cases.append(zipped)
        for path in cases:
            with self.subTest(path=path.name):
                self.assertLess(path.stat().st_size, 200_000)
                result = self.read(path)
                self.assertIn("more than 8 MiB when decompressed", result.error)

    def test_a_huge_long_name_header_is_refused_without_the_memory(self):
        header = tarfile.TarInfo("././@LongLink")
        header.type, header.size = tarfile.GNUTYPE_LONGNAME, 1 << 30  # claims 1 GiB of name
        block = header.tobuf(format=tarfile.GNU_FORMAT)[:512]
        path = self.tmp / "longname.tar.xz"
        path.write_bytes(__import__("lzma").compress(block + bytes(4096)))
        self.assertLess(path.stat().st_size, 2000)
        result = self.read(path)
        self.assertTrue(result.error)
        self.assertEqual(result.entries, [])

    def test_too_many_entries(self):
        path = self.tar_with("many.tar.gz", [(f"f{i}", b"") for i in range(150)])
        self.assertIn("more than 100 files", self.read(path).error)

    def test_names_that_are_not_utf8_are_listed_not_read(self):
        path = self.tmp / "names.tar"
        with tarfile.open(path, "w", encoding="utf-8", errors="surrogateescape") as archive:
            for name, data in (("labs/01-fake/fake.cu", b"mine"), (b"caf\xe9.cu".decode("utf-8", "surrogateescape"), b"x")):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        result = self.read(path)
        self.assertEqual(result.error, "")
        self.assertEqual([e["path"] for e in result.entries], ["labs/01-fake/fake.cu"])
        self.assertIn("the name is not UTF-8", " ".join(result.rejected))

    def test_corrupt_and_truncated_archives_are_reasons(self):
        good = self.tar_with("good.tar.gz", [("labs/01-fake/fake.cu", os.urandom(100_000))])
        truncated = self.tmp / "truncated.tar.gz"
        truncated.write_bytes(good.read_bytes()[:30_000])
        corrupt = self.tmp / "corrupt.zip"
        corrupt.write_bytes(b"PK\x03\x04" + os.urandom(500))
        for path in (truncated, corrupt):
            with self.subTest(path=path.name):
                self.assertTrue(self.read(path).error)

    def test_not_a_file_nor_a_folder(self):
        fifo = self.tmp / "alice.zip"
        os.mkfifo(fifo)
        self.assertIn("neither a folder nor a regular file", self.read(fifo).error)
        link = self.tmp / "bob.zip"
        link.symlink_to("/etc/passwd")
        self.assertIn("symbolic link", self.read(link).error)

    def test_a_submission_over_the_size_cap(self):
        big = self.tmp / "big.zip"
        with open(big, "wb") as handle:
            handle.truncate(9 << 20)
        limits = Limits(total_bytes=8 << 20, submission_bytes=8 << 20)
        self.assertIn("larger than 8 MiB", self.read(big, limits).error)

    def test_only_the_lab_files_are_read_others_are_compared_by_digest(self):
        course = make_fake_course(self.tmp / "course")
        path = self.tar_with("repo.tar.gz", [("labs/01-fake/fake.cu", b"mine"),
                                             ("common/harness.cpp", b"// the course's harness\n"),
                                             ("labs/01-fake/test_fake.cpp", b"changed")])
        listing = list_submission(path, {"fake.cu"})
        data = {e.path: e.data for e in listing.entries}
        self.assertEqual(data["labs/01-fake/fake.cu"], b"mine")
        self.assertIsNone(data["common/harness.cpp"])
        taken = take(path, course, course.labs(), course.edition_files(["solutions/"]))
        ignored = "\n".join(taken.ignored)
        self.assertIn("labs/01-fake/test_fake.cpp: changed", ignored)
        self.assertNotIn("common/harness.cpp", ignored)  # identical to the course's

    def test_an_archive_that_holds_a_path_twice_is_refused_with_the_reason(self):
        import warnings
        course = make_fake_course(self.tmp / "course")
        zipped = self.tmp / "twice.zip"
        with warnings.catch_warnings(), zipfile.ZipFile(zipped, "w") as archive:
            warnings.simplefilter("ignore")  # zipfile warns of the duplicate name it writes
            archive.writestr("labs/01-fake/fake.cu", b"the first copy")
            archive.writestr("./labs/01-fake/fake.cu", b"the second copy")
        cases = [zipped, self.tar_with("twice.tar.gz", [("labs/01-fake/fake.cu", b"one"), ("notes.txt", b""),
                                                        ("labs/01-fake/fake.cu", b"two")])]
        for path in cases:
            with self.subTest(path=path.name):
                self.assertIn("holds 'labs/01-fake/fake.cu' twice", self.read(path).error)
                taken = take(path, course, course.labs(), course.edition_files(["solutions/"]))
                self.assertIn("holds 'labs/01-fake/fake.cu' twice", taken.error)
                self.assertIn("twice", taken.labs["01-fake"].problems[0])
        once = self.tar_with("once.tar.gz", [("labs/01-fake/fake.cu", b"one"), ("labs/fake.cu", b"two")])
        self.assertEqual(self.read(once).error, "")

    def test_the_reader_writes_nothing(self):
        path = self.tar_with("plain.tar.gz", [("../../escape.cu", b"x"), ("/abs.cu", b"y")])
        before = set(os.listdir(self.tmp))
        result = self.read(path)
        self.assertEqual(set(os.listdir(self.tmp)), before)
        listing_paths = [e["path"] for e in result.entries]
        self.assertEqual(sorted(listing_paths), ["../../escape.cu", "/abs.cu"])  # the parent rejects them

    def test_gzip_and_bzip2_members_are_streamed(self):
        data = gzip.compress(b"a" * 1000) + bz2.compress(b"b")
        path = self.tar_with("blob.tar", [("labs/01-fake/fake.cu", data)], "w")
        result = self.read(path)
        self.assertEqual(result.error, "")
        self.assertIsNotNone(result.entries[0]["data"])
