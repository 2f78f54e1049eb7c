"""Links in the root and summaries from the future (issue 35, "Links and bounds").

* RULES.md replaced by a symbolic link to a dotfile is never committed as a deletion
  (every other machine's sync would apply it, and its next write would commit the
  default rules), never followed by ``ctx start``, and named by ``ctx doctor``.
* A summary in sessions/ that is a link (to a key in the temporary HOME) is never
  followed by ``start``, ``brief`` or ``ctx summary``.
* A summary named for a date more than a day ahead is listed but not the newest.
"""

from __future__ import annotations

import os

import pytest

from support import relutil as R
from support.gitutil import git_out, tree_paths

pytestmark = pytest.mark.slow  # real ctx processes

KEY_TEXT = "-----BEGIN OPENSSH PRIVATE KEY-----\nvictim-key-material-not-to-be-shown\n"
RULES_TEXT = "# Rules\n\nThe operator's own rule: never push on Fridays.\n"


def _seeded(root, author="Agent Links"):
    env = R.ctx_env(root, author=author)
    assert R.run_ctx(["set", "k", "v"], env).returncode == 0
    (root / "RULES.md").write_text(RULES_TEXT)
    assert R.run_ctx(["set", "k2", "v2"], env).returncode == 0  # RULES.md committed (an outside change)
    assert "never push on Fridays" in git_out(root, "show", "HEAD:RULES.md")
    return env


def _victim(name: str, text: str):
    home = os.environ["HOME"]
    path = os.path.join(home, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)
    return path


@pytest.mark.parametrize("author", ["Agent Links", None], ids=["fast-way", "libgit2-way"])
def test_rules_replaced_by_a_link_is_never_committed_as_a_deletion(root, author):
    env = _seeded(root, author=author)
    bashrc = _victim(".bashrc", "export SECRET_TOKEN=from-the-bashrc\n")
    (root / "RULES.md").unlink()
    (root / "RULES.md").symlink_to(bashrc)
    done = R.run_ctx(["set", "k3", "v3"], env)
    assert done.returncode == 0, done.describe()
    assert "RULES.md" in tree_paths(root), "the link was committed as a deletion of RULES.md"
    assert "never push on Fridays" in git_out(root, "show", "HEAD:RULES.md")
    assert "from-the-bashrc" not in git_out(root, "log", "-p", "--all")
    assert "RULES.md" in done.stderr and "link" in done.stderr, done.describe()
    started = R.run_ctx(["start"], env)
    assert started.returncode == 0, started.describe()
    assert "from-the-bashrc" not in started.stdout
    assert "link" in started.stdout
    doctor = R.run_ctx(["doctor", "--check"], env)
    assert doctor.returncode == 1 and "RULES.md" in doctor.stdout and "link" in doctor.stdout, doctor.describe()
    repaired = R.run_ctx(["doctor"], env)  # a repair commits outside changes: never the link
    assert "RULES.md" in tree_paths(root), repaired.describe()
    assert (root / "RULES.md").is_symlink()


def test_a_summary_that_is_a_link_is_never_followed(root):
    env = _seeded(root)
    key = _victim(".ssh/id_ed25519", KEY_TEXT)
    sessions = root / "sessions"
    sessions.mkdir(exist_ok=True)
    (sessions / "2020-01-01_session.md").write_text("# Session\n\n## Open\n- the real one\n")
    (sessions / "2026-01-01_session.md").symlink_to(key)
    for args in (["start"], ["brief"], ["summary", "show"], ["summary", "list"],
                 ["summary", "show", "2026-01-01"]):
        done = R.run_ctx(args, env)
        assert "victim-key-material" not in done.stdout + done.stderr, f"{args}: {done.describe()}"
    assert "the real one" in R.run_ctx(["start"], env).stdout
    doctor = R.run_ctx(["doctor", "--check"], env)
    assert doctor.returncode == 1 and "sessions/2026-01-01_session.md" in doctor.stdout, doctor.describe()
    done = R.run_ctx(["set", "k4", "v4"], env)
    assert done.returncode == 0, done.describe()
    assert "sessions/2026-01-01_session.md" not in tree_paths(root)
    assert "victim-key-material" not in git_out(root, "log", "-p", "--all")


def test_a_summary_from_the_future_is_not_the_newest(root):
    env = _seeded(root)
    sessions = root / "sessions"
    sessions.mkdir(exist_ok=True)
    (sessions / "2020-01-01_session.md").write_text("# Session\n\n## Open\n- the real open item\n")
    (sessions / "2099-12-31_session.md").write_text("# Session\n\n## Open\n- planted from the future\n")
    started = R.run_ctx(["start"], env)
    assert "the real open item" in started.stdout and "planted from the future" not in started.stdout, \
        started.describe()
    brief = R.run_ctx(["brief"], env)
    assert "planted from the future" not in brief.stdout and "2020-01-01" in brief.stdout, brief.describe()
    shown = R.run_ctx(["summary", "show"], env)
    assert "the real open item" in shown.stdout, shown.describe()
    listed = R.run_ctx(["summary", "list"], env)
    assert "2099-12-31" in listed.stdout, listed.describe()
    doctor = R.run_ctx(["doctor", "--check"], env)
    assert doctor.returncode == 1 and "2099-12-31_session.md" in doctor.stdout, doctor.describe()
