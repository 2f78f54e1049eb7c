"""The credential scanner, reusable on its own: files, store files, staged changes.

``ctx-scan FILES...`` scans files (a store file entry by entry, anything
else line by line) and exits 1 with findings: the pre-commit framework's
entry. ``ctx-scan --staged`` scans only the lines a git commit adds, plus the
repository guard: the git pre-commit hook ``ctx hooks install`` writes. The
patterns are ctx's own table (``ctx.credentials``); a finding never prints the
secret whole.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from ctx.credentials import scan
from ctx.model import value_text
from ctx.storage.textlayout import entry_line
from hooks.newsecrets import Hit, entry_findings, is_store_path
from hooks.unsafe_paths import forbidden

__all__ = ["Hit", "is_store_path", "scan_file", "scan_lines", "scan_store_text", "scan_text"]


_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def decoded_strings(line: str) -> str:
    """The JSON string literals of a line, unescaped: a secret after ``\\n`` or inside
    ``\\"…\\"`` in a store file is seen as the text it stands for."""
    out = []
    for match in _JSON_STRING.finditer(line):
        if "\\" in match.group(1):
            try:
                out.append(json.loads(match.group(0)))
            except ValueError:
                pass
    return "\n".join(out)


def scan_lines(path: str, lines: Iterable[tuple[int, str]]) -> list[Hit]:
    """Scan numbered lines, each on its own (a store file's lines unescaped too)."""
    hits: list[Hit] = []
    store = is_store_path(path)
    for number, text in lines:
        seen = set()
        extra = decoded_strings(text) if store and "\\" in text else ""
        for finding in scan(text) + (scan(extra) if extra else []):
            if (finding.rule, finding.secret) in seen:
                continue
            seen.add((finding.rule, finding.secret))
            hits.append(Hit(path, number, finding))
    return hits


def scan_text(path: str, text: str) -> list[Hit]:
    return [Hit(path, f.line, f) for f in scan(text)]


def scan_store_text(path: str, text: str) -> list[Hit]:
    """A store file, entry by entry, naming the key and field of each finding."""
    try:
        data = json.loads(text)
        entries = data.get("entries") if isinstance(data, dict) else None
    except ValueError:
        entries = None
    if not isinstance(entries, dict):
        return scan_text(path, text)
    store = Path(path).stem
    hits: list[Hit] = []
    for name, value in data.items():  # top-level keys another implementation keeps
        if name != "entries":
            hits += [Hit(path, 1, f, f"{store} (top-level {name})") for f in scan(value_text(value))]
    for key, entry in entries.items():
        for field, finding in entry_findings(key, entry):
            hits.append(Hit(path, entry_line(text, key), finding, f"{store}/{key}" + (f" {field}" if field else "")))
    return hits


def scan_file(path: str) -> list[Hit]:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except (IsADirectoryError, FileNotFoundError):
        return []
    if is_store_path(path):
        return scan_store_text(path, text)
    return scan_text(path, text)


# --- staged changes (the git pre-commit hook) -------------------------------------------

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def parse_added_lines(diff_text: str) -> Iterator[tuple[str, int, str]]:
    """(path, line number, text) of every added line in a unified diff (-U0)."""
    path = None
    number = 0
    in_header = True
    for line in diff_text.splitlines():
        if line.startswith("diff --git "):
            in_header = True
        elif in_header and line.startswith("+++ "):
            target = line[4:]
            path = None if target == "/dev/null" else target[2:] if target.startswith("b/") else target
        elif line.startswith("@@"):
            in_header = False
            match = _HUNK.match(line)
            number = int(match.group(1)) if match else 0
        elif not in_header and line.startswith("+") and path is not None:
            yield path, number, line[1:]
            number += 1


def _git(*args: str) -> str:
    result = subprocess.run(["git", *args], capture_output=True, text=True, encoding="utf-8",
                            errors="replace", check=False)
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip() or f"git {' '.join(args)} failed")
    return result.stdout


def check_staged() -> tuple[list[str], list[Hit]]:
    """What a commit would add: forbidden paths, and credentials in added lines."""
    names = [n for n in _git("diff", "--cached", "--name-only", "--diff-filter=ACMR", "-z").split("\0") if n]
    refused = [f"{n}: {forbidden(n)} must never be committed" for n in names if forbidden(n)]
    diff = _git("diff", "--cached", "--no-color", "--no-ext-diff", "--unified=0",
                "--diff-filter=ACMR", "--src-prefix=a/", "--dst-prefix=b/")
    by_path: dict[str, list[tuple[int, str]]] = {}
    for path, number, text in parse_added_lines(diff):
        by_path.setdefault(path, []).append((number, text))
    hits: list[Hit] = []
    for path, lines in by_path.items():
        hits += scan_lines(path, lines)
    return refused, hits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="ctx-scan",
        description="Scan files, or a commit's staged changes, for credentials (ctx's pattern table).",
        epilog="Examples: ctx-scan memory/*.json sessions/*.md | ctx-scan --staged (a git pre-commit hook)")
    parser.add_argument("files", nargs="*", help="files to scan")
    parser.add_argument("--staged", action="store_true",
                        help="scan the lines the next git commit adds, and refuse the lock file and temporary files")
    args = parser.parse_args(argv)
    refused: list[str] = []
    hits: list[Hit] = []
    if args.staged:
        try:
            refused, hits = check_staged()
        except (RuntimeError, FileNotFoundError) as exc:
            print(f"ctx-scan: cannot read the staged changes: {exc}", file=sys.stderr)
            return 2
    for name in args.files:
        hits += scan_file(name)
    for line in refused:
        print(f"ctx-scan: refused: {line}", file=sys.stderr)
    for hit in hits:
        print(f"ctx-scan: {hit.describe()}", file=sys.stderr)
    if refused or hits:
        if hits:
            print("ctx-scan: credentials must not be committed; remove them "
                  "(a false positive: commit with --no-verify)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
