"""Helpers for the credential tests: realistic fake secrets, one per rule of
``ctx.credentials.RULES``, and ordinary notes that must not be flagged.

Every fake secret is built at import time from a fixed-seed random generator
over the character classes the real credential uses, so this file holds no
string that looks like a credential to a scanner (ctx's own, gitleaks…), and
a sample never trips the placeholder filter by accident (no ``example``, no
runs of one letter).
"""

from __future__ import annotations

import random
import string
import sys
from pathlib import Path

from support.gitutil import git

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = DIGITS + "abcdef"
URLSAFE = ALNUM + "_-"
BASE32 = UPPER + "234567"
PASSWORD_CHARS = ALNUM + "!#%&+-:?@^_~"

_rng = random.Random(20261130)


def chars(n: int, alphabet: str) -> str:
    """``n`` characters drawn from ``alphabet`` (a fixed seed: the same every run)."""
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _pem() -> str:
    body = "\n".join("MII" + chars(61, ALNUM + "+/") if i == 0 else chars(64, ALNUM + "+/")
                     for i in range(4))
    kind = "RSA " + "PRIVATE" + " KEY"
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


# rule id -> a realistic fake secret of that kind
SAMPLES: dict[str, str] = {
    "private-key": _pem(),
    "aws-access-token": "AK" + "IA" + chars(16, BASE32),
    "github-pat": "gh" + "p_" + chars(36, ALNUM),
    "github-oauth": "gh" + "o_" + chars(36, ALNUM),
    "github-app-token": "gh" + "s_" + chars(36, ALNUM),
    "github-refresh-token": "gh" + "r_" + chars(36, ALNUM),
    "github-fine-grained-pat": "github" + "_pat_" + "11A" + chars(19, UPPER + DIGITS) + "_" + chars(59, ALNUM),
    "gitlab-pat": "gl" + "pat-" + chars(20, URLSAFE),
    "slack-bot-token": "xo" + "xb-" + chars(13, DIGITS) + "-" + chars(13, DIGITS) + "-" + chars(24, ALNUM),
    "slack-user-token": ("xo" + "xp-" + chars(13, DIGITS) + "-" + chars(13, DIGITS) + "-"
                         + chars(13, DIGITS) + "-" + chars(32, HEX)),
    "slack-legacy-token": ("xo" + "xs-" + chars(10, DIGITS) + "-" + chars(11, DIGITS) + "-"
                           + chars(11, DIGITS) + "-" + chars(64, HEX)),
    "slack-app-token": ("xa" + "pp-1-A" + chars(10, UPPER + DIGITS) + "-" + chars(13, DIGITS) + "-"
                        + chars(64, HEX)),
    "anthropic-api-key": "sk" + "-ant-api03-" + chars(93, URLSAFE) + "AA",
    "openai-api-key": "sk" + "-proj-" + chars(74, URLSAFE) + "T3Blbk" + "FJ" + chars(74, URLSAFE),
    "gcp-api-key": "AI" + "za" + "Sy" + chars(33, URLSAFE),
    "stripe-access-token": "sk" + "_live_" + "51" + chars(22, ALNUM),
    "generic-api-key": "DB_PASS" + "WORD=" + chars(18, PASSWORD_CHARS),
}


def secret_body(rule: str) -> str:
    """The part of a sample a leak would show: for an assignment, what follows ``=``."""
    sample = SAMPLES[rule]
    return sample.split("=", 1)[1] if rule == "generic-api-key" else sample


def in_prose(secret: str) -> str:
    """A secret the way it slips into a note: inside an ordinary sentence."""
    return f"Staging deploy works again; the credential used was {secret} (rotate it monthly)"


def pieces(secret: str, size: int = 10) -> list[str]:
    """Every ``size``-character piece of a secret (newlines left out): no part of a
    leaked secret may show anywhere."""
    flat = secret.replace("\n", "")
    return [flat[i:i + size] for i in range(0, len(flat) - size + 1)]


def shows_part(text: str, secret: str, size: int = 10) -> list[str]:
    """The pieces of ``secret`` that ``text`` shows (empty: none)."""
    return [p for p in pieces(secret, size) if p in text]


# ordinary notes: none may be flagged
ORDINARY_NOTES: dict[str, str] = {
    "commit hash": "Fixed in 3f2a91c0d4e5b6a7980112233445566778899aabb, see the PR",
    "commit hash upper": "Reverted 3F2A91C0D4E5B6A7980112233445566778899AABB",
    "short hash": "Regression came with 3f2a91c; bisected to e5439d9",
    "uuid": "Run id 123e4567-e89b-12d3-a456-426614174000 failed at the upload step",
    "url with query": "https://example.com/search?q=upload+timeout&page=2&sort=desc",
    "url with many params": "https://grafana.internal/d/abc123/uploads?orgId=1&from=now-6h&to=now&var-host=web-03",
    "base64 snippet": "The header decodes from dGhpcyBpcyBhIHRlc3Qgb2YgYmFzZTY0IGVuY29kaW5n",
    "base64 with padding": "Body was eyJ1c2VyIjoiYWxpY2UiLCJyb2xlIjoiYWRtaW4ifQ== before the fix",
    "prose token=": "The callback URL takes token= as its first query parameter",
    "prose password=": "set password= in the config before deploying",
    "prose secret=": "Remember: secret= values are read from the vault at start",
    "max_tokens": "Use max_tokens=4096 for the summariser",
    "max_tokens big": "Raised max_tokens=100000 and token_budget=1500000 for long runs",
    "sk-learn": "We compare against the sk-learn baseline (sk-learn 1.5)",
    "file paths": "Edited /etc/passwd handling in src/auth/token_refresh.py:42 and ~/.ssh/config",
    "secret-store path": "Config lives in /var/lib/secret-store/config.yaml and secrets/README.md",
    "api key prose": "The API key rotation runs monthly; api-key headers are logged redacted",
    "aws region words": "ASIA pacific latency is 180ms; AKIA and ASIA prefixes mean AWS keys",
    "password policy": "password_min_length=12 and passwd_history=5 per the policy",
    "numbers": "p95 went from 1830ms to 412ms after raising the pool to 20",
    "markdown table": "| key | value |\n|-----|-------|\n| timeout | 30s |",
    "json config": '{"timeout": 30, "retries": 5, "pool": {"size": 20}}',
    "placeholder EXAMPLE": "api_key=EXAMPLE_KEY_1234567890",
    "placeholder REDACTED": "token=REDACTED_REDACTED",
    "placeholder YOUR_API_KEY_HERE": "api_key=YOUR_API_KEY_HERE",
    "placeholder $VAR": "password=$DB_PASSWORD",
    "placeholder %VAR%": "password=%DB_PASSWORD%",
    "placeholder <token>": "token=<token>",
    "placeholder {secret}": "secret={secret}",
    "placeholder ${TOKEN}": "token=${TOKEN}",
    "placeholder export": "export API_KEY=${API_KEY}",
    "placeholder stars": "password=********",
    "placeholder xxx": "token=xxxxxxxxxxxxxxxx",
    "placeholder changeme": "password=changeme123",
    "placeholder aws docs": "AK" + "IAIOSFODNN7" + "EXAMPLE",
    "placeholder ellipsis": "Set sk-... and ghp_... from the vault",
    "placeholder json": '{"api_key": "<your key>", "token": "${TOKEN}"}',
}


def ctx_scan_exe() -> Path:
    """The installed console script ``ctx-scan`` (the pre-commit framework's entry)."""
    return Path(sys.executable).parent / "ctx-scan"


def manual_commit(root: Path, *args: str, message: str = "manual edit"):
    """The real git CLI, as the operator would commit by hand (hooks run)."""
    return git(root, "-c", "user.name=Hand Operator", "-c", "user.email=hand@example.invalid",
               "commit", "-m", message, *args, check=False)
