"""Credential detection (§11): the one pattern table ctx and its hooks share.

Each rule is named after the matching gitleaks rule id where one exists, so
a finding can be looked up there. A rule only runs its regular expression
when one of its keywords occurs in the lower-cased text: most values hold
none, and then a scan costs a few substring searches.

Placeholders (``EXAMPLE``, ``REDACTED``, ``YOUR_API_KEY_HERE``, ``$VAR``,
``<...>``, ``{...}``) are documentation, not secrets, and are not reported.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing is for the checker; importing it costs ~3 ms at every start
if TYPE_CHECKING:
    from typing import Callable, Iterable


class Rule:
    """One pattern; its expression is compiled on first use (start-up stays cheap)."""

    __slots__ = ("id", "description", "keywords", "_pattern", "check", "_gate")

    def __init__(self, id: str, description: str, keywords: tuple[str, ...], pattern,
                 check: Callable[[re.Match[str]], bool] | None = None, gate: str | None = None) -> None:
        self.id, self.description, self.keywords = id, description, tuple(keywords)
        self._pattern, self.check, self._gate = pattern, check, gate

    def gated_out(self, lowered: str) -> bool:
        """True when a cheap look at each keyword shows the full expression cannot match."""
        if self._gate is None:
            return False
        if isinstance(self._gate, str):
            self._gate = re.compile(self._gate)
        for word in self.keywords:
            at = lowered.find(word)
            while at >= 0:
                if self._gate.match(lowered, at + len(word)):
                    return False
                at = lowered.find(word, at + 1)
        return True

    @property
    def pattern(self):
        if isinstance(self._pattern, str):
            self._pattern = re.compile(self._pattern)
        return self._pattern


class Finding:
    """A credential found: the rule, where, and a preview that never shows it whole."""

    __slots__ = ("rule", "description", "line", "column", "preview", "secret")

    def __init__(self, rule: str, description: str, line: int, column: int, preview: str,
                 secret: str = "") -> None:
        self.rule, self.description, self.line, self.column = rule, description, line, column
        self.preview, self.secret = preview, secret  # the secret itself is never printed

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Finding) and (self.rule, self.description, self.line, self.column,
                                               self.preview) == (other.rule, other.description,
                                                                 other.line, other.column, other.preview)

    def __hash__(self) -> int:
        return hash((self.rule, self.line, self.column, self.preview))

    def __repr__(self) -> str:
        return (f"Finding(rule={self.rule!r}, description={self.description!r}, line={self.line}, "
                f"column={self.column}, preview={self.preview!r})")

    def describe(self) -> str:
        return f"{self.description} ({self.rule}) at line {self.line}: {self.preview}"


def _rule(id: str, description: str, keywords: Iterable[str], pattern: str,
          check: Callable[[re.Match[str]], bool] | None = None, gate: str | None = None) -> Rule:
    return Rule(id, description, tuple(keywords), pattern, check, gate)


_VALUE = r"[^\s\"'`<>{}\[\](),;]{8,200}"  # bounded: a long run never costs quadratic time
# a name holding one of the words, joined to others only by _ . - (DB_PASSWORD, SECRET_KEY)
_NAME = (r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]{1,32}[_.-]){0,4}"
         r"(?:password|passwd|pwd|token|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret)"
         r"(?:[_.-][A-Za-z0-9]{1,32}){0,4}(?![A-Za-z0-9])")
_CODE_REFERENCE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def _generic_check(match: re.Match[str]) -> bool:
    """An assignment whose value is a literal, not code or a number."""
    value = next(g for g in match.groups() if g)
    if value.isdigit():
        return False
    quoted = match.group(3) is not None or match.group(4) is not None
    if not quoted:
        after = match.string[match.end():match.end() + 1]
        if after in ("(", "[") or _CODE_REFERENCE.fullmatch(value):
            return False
    if match.group(5) is not None and not re.search(r"[^A-Za-z]", value):
        return False  # `Secret: classified` is prose; a YAML secret has a digit or a symbol
    return True

RULES: tuple[Rule, ...] = (
    _rule("private-key", "a PEM private key", ["private key"],
          r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"),
    _rule("aws-access-token", "an AWS access key id", ["akia", "asia", "abia", "acca", "a3t"],
          r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Za-z0-9])"),
    _rule("github-pat", "a GitHub personal access token", ["ghp_"], r"ghp_[0-9A-Za-z]{36}"),
    _rule("github-oauth", "a GitHub OAuth token", ["gho_"], r"gho_[0-9A-Za-z]{36}"),
    _rule("github-app-token", "a GitHub app token", ["ghu_", "ghs_"], r"(?:ghu|ghs)_[0-9A-Za-z]{36}"),
    _rule("github-refresh-token", "a GitHub refresh token", ["ghr_"], r"ghr_[0-9A-Za-z]{36}"),
    _rule("github-fine-grained-pat", "a GitHub fine-grained token", ["github_pat_"],
          r"github_pat_[0-9A-Za-z_]{22,}"),
    _rule("gitlab-pat", "a GitLab personal access token", ["glpat-"], r"glpat-[0-9A-Za-z_-]{20,}"),
    _rule("slack-bot-token", "a Slack bot token", ["xoxb-"], r"xoxb-[0-9A-Za-z-]{10,}"),
    _rule("slack-user-token", "a Slack user token", ["xoxp-", "xoxe-"], r"xox[pe](?:\.[0-9A-Za-z]+)?-[0-9A-Za-z-]{10,}"),
    _rule("slack-legacy-token", "a Slack legacy token", ["xoxa-", "xoxo-", "xoxr-", "xoxs-"],
          r"xox[aors]-[0-9A-Za-z-]{10,}"),
    _rule("slack-app-token", "a Slack app token", ["xapp-"], r"xapp-\d-[0-9A-Za-z-]{10,}"),
    _rule("anthropic-api-key", "an Anthropic API key", ["sk-ant-"], r"sk-ant-[0-9A-Za-z_-]{20,}"),
    _rule("openai-api-key", "an OpenAI API key", ["sk-"],
          r"(?<![A-Za-z0-9_-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z_-]*[0-9])[0-9A-Za-z_-]{20,}"),
    _rule("gcp-api-key", "a Google API key", ["aiza"], r"AIza[0-9A-Za-z_-]{35}"),
    _rule("stripe-access-token", "a Stripe secret key", ["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
          r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}"),
    _rule("generic-api-key", "a password, token or secret assignment",
          ["password", "passwd", "pwd", "token", "secret", "api_key", "apikey", "api-key", "access_key",
           "access-key", "private_key", "private-key"],
          r"(?i)" + _NAME + r"(?:"
          r"[ \t]*=(" + _VALUE + r")"                                   # name=value
          r"|[ \t]*=[ \t]+(?=[^\s\"']*[0-9])(?=[^\s\"']*[A-Za-z])(" + _VALUE + r")"  # name = v4lue (ini)
          r"|[ \t]*=[ \t]*[\"'](" + _VALUE + r")[\"']"                   # name = "value"
          r"|[\"'][ \t]*:[ \t]*[\"'](" + _VALUE + r")[\"']"             # "name": "value"
          r"|[ \t]*:[ \t]*[\"']?(" + _VALUE + r")[\"']?[ \t]*(?=\n|$))",  # name: value (a whole line)
          _generic_check,
          # after a keyword: the rest of a name, then '=' or ':' (prose that mentions a token: no)
          r"[a-z0-9_.-]{0,64}[\"']?[ \t]*[=:]"),
)

_PLACEHOLDER = re.compile(
    r"(?i)example|redacted|placeholder|your[_-]|changeme|dummy|xxxxxxxx|\*{4}|\.\.\."
    r"|^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$|^%[A-Za-z_][A-Za-z0-9_]*%$")


def _is_placeholder(text: str) -> bool:
    return bool(_PLACEHOLDER.search(text)) or len(set(text)) <= 2


def redact(secret: str) -> str:
    """Enough of a secret to find it again, never the whole of it."""
    keep = 4 if len(secret) > 12 else 2
    return secret[:keep] + "…" + f"({len(secret)} chars)"


def scan(text: str) -> list[Finding]:
    """Every credential-looking string in ``text``, in order of position."""
    if not text:
        return []
    lowered = text.lower()
    findings: list[Finding] = []
    for rule in RULES:
        if not any(word in lowered for word in rule.keywords) or rule.gated_out(lowered):
            continue
        for match in rule.pattern.finditer(text):
            secret = next((g for g in match.groups() if g), None) if rule.pattern.groups else match.group(0)
            if secret is None or _is_placeholder(secret) or (rule.check and not rule.check(match)):
                continue
            start = match.start()
            line = text.count("\n", 0, start) + 1
            column = start - (text.rfind("\n", 0, start) + 1) + 1
            findings.append(Finding(rule.id, rule.description, line, column, redact(secret), secret))
    findings.sort(key=lambda f: (f.line, f.column))
    return findings
