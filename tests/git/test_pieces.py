"""A store's loose blob compressed in pieces (ctxgit/plumbing/pieces.py): whatever the
edits, the object is exactly zlib of its bytes, and unchanged pieces are reused."""

from __future__ import annotations

import hashlib
import random
import zlib

from ctxgit.plumbing import pieces


def _write(git, content: bytes, old: bytes | None, old_blob: str | None):
    header = b"blob %d\0" % len(content)
    blob = hashlib.sha1(header + content).hexdigest()
    data, chart = pieces.compress(git, "memory/shared.json", blob, header, content, old, old_blob)
    assert zlib.decompress(data) == header + content
    path = git / "objects" / blob[:2] / blob[2:]
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_bytes(data)
        pieces.remember(git, "memory/shared.json", chart)
    return blob, chart


def test_random_edits_always_make_the_exact_stream_and_reuse_what_they_did_not_touch(tmp_path):
    git = tmp_path / ".git"
    (git / "ctx").mkdir(parents=True)
    rng = random.Random(5)
    words = [bytes(rng.choice(b"abcdefgh \n") for _ in range(rng.randint(1, 9))) for _ in range(300)]
    content = b"".join(rng.choice(words) for _ in range(60000))
    old = blob = None
    reused = 0
    for trial in range(30):
        blob, chart = _write(git, content, old, blob)
        if trial:
            reused += chart["reused"] >= len(chart["pieces"]) - 3  # the edits' pieces, the top, the end
        old = content
        at = rng.randrange(len(content))
        content = content[:at] + bytes(rng.choice(b"xyz\n") for _ in range(rng.randint(0, 900))) + \
            content[at + rng.randint(0, 900):]
        if trial % 4 == 0:
            content = b"{" + content[1:]  # a second change, at the top (last_updated)
    assert reused == 29


def test_a_map_that_does_not_match_the_old_object_is_not_used(tmp_path):
    git = tmp_path / ".git"
    (git / "ctx").mkdir(parents=True)
    first = b"a" * 200000 + b"b" * 200000
    blob, _ = _write(git, first, None, None)
    path = git / "objects" / blob[:2] / blob[2:]
    path.chmod(0o644)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(first) + first, 6))  # rewritten by another git
    second = first[:-1] + b"c"
    blob, chart = _write(git, second, first, blob)  # asserts the stream is exact
    assert chart["reused"] == 0
    _, chart = _write(git, second + b"d", b"x" + second[1:], blob)  # not the old content: Adler-32 differs
    assert chart["reused"] == 0


def test_the_adler32_of_two_joined_strings_is_combined_from_each_ones():
    """The new object's Adler-32 is combined from its pieces' (the reused ones' were
    computed checking the old object): the same as zlib's over the joined bytes, for
    lengths around the modulus (65,521) and bytes that make the sums large."""
    rng = random.Random(11)
    for length in (0, 1, 4096, 65520, 65521, 65522, 1 << 16, 200000):
        for fill in (None, 0xFF):
            first = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 3000)))
            second = bytes([fill]) * length if fill is not None else rng.randbytes(length)
            assert pieces._combine(zlib.adler32(first), zlib.adler32(second), len(second)) == \
                zlib.adler32(first + second)
