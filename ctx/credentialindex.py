"""The prefilter of ``ctx.credentials.scan``: which rules a text's keywords point to.

Built from the rule tuple on first use, in two parts: ``Index`` (the TEXT rules'
probes, the translation that marks runs of token characters), and ``Runs`` (the
RUN rules' keywords by their first letters), built only when a text first holds
a run: most values hold none, and a write checks only its new entry's text.
"""

from __future__ import annotations

from ctx import credential_rules as _data
from ctx.credential_rules import TEXT

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from ctx.credential_rules import Rule

_TOKEN_BYTES = bytes(c for c in range(0x21, 0x7F) if chr(c) not in "\"'`()[]{}<>,;\\?")
_ALNUM_BYTES = b"abcdefghijklmnopqrstuvwxyz0123456789"
_BOUNDED = ("(?<![A-Za-z0-9", "(?<![0-9])")   # how an expression that needs a left boundary starts


class Index:
    """What ``scan`` needs, built from a rule tuple on first use: the TEXT probes at once,
    the RUN keywords' tables (``runs``) when a text first holds a run (most values hold
    none: a write checks its new entry's text, and builds no more than that needs)."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        # translation table: token characters -> "a", the rest -> " "
        self.mask = bytes(97 if c in _TOKEN_BYTES else 32 for c in range(256))
        self._runs: Runs | None = None
        self._order: dict[Rule, int] | None = None
        self._probes(rules)

    @property
    def runs(self) -> Runs:
        if self._runs is None:
            self._runs = Runs(self.rules)
        return self._runs

    @property
    def order(self) -> dict[Rule, int]:
        if self._order is None:
            self._order = {rule: i for i, rule in enumerate(self.rules)}
        return self._order

    def _probes(self, rules: tuple[Rule, ...]) -> None:
        # TEXT keywords: looked for with bytes.find; one that holds another (authorization,
        # auth) is checked only where the shorter stands
        text: dict[bytes, list[Rule]] = {}
        for rule in rules:
            if rule.scope == TEXT:
                for word in rule.keywords:
                    text.setdefault(word.encode(), []).append(rule)
        for word in _data.PROBE_PARENTS:
            text.setdefault(word.encode(), [])
        parents = {}
        for word in text:
            inside = [p for p in text if p != word and p in word]
            if inside:
                parents[word] = min(inside, key=len)
        self.probes = []
        for word, group in text.items():
            if word not in parents:
                children = [(child, child.index(word), tuple(text[child]))
                            for child, parent in parents.items() if parent == word]
                self.probes.append((word, tuple(group), tuple(children)))


class Runs:
    """The RUN rules' keywords, as ``_scan_runs`` looks for them."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        # letters and digits kept, the rest -> " "
        self.words = bytes(c if c in _ALNUM_BYTES else 32 for c in range(256))
        # RUN keywords -> their rules. Most start the credential and a word: found by the first
        # three letters of the words in the runs and matched where they stand; ANCHORED_KEYWORDS
        # ("://") are matched where they stand too; SEARCH_KEYWORDS, MID_KEYWORDS and those that
        # start with punctuation stand inside the credential, whose run is searched
        direct: dict[bytes, list[Rule]] = {}
        for rule in rules:
            if rule.scope != TEXT:
                for word in rule.keywords:
                    direct.setdefault(word.encode(), []).append(rule)
        self.direct = direct
        # keywords whose every rule needs a left boundary: where the keyword follows a letter
        # or digit (inside a long word, a run of one character), nothing can match
        self.bounded = frozenset(word for word, group in direct.items()
                                 if all(r.source.startswith(_BOUNDED) for r in group))
        self.by_head: dict[bytes, list[bytes]] = {}
        self.mids: list[bytes] = []
        self.anchored = [word for word in direct if word.decode() in _data.ANCHORED_KEYWORDS]
        for word in direct:
            if word in self.anchored:
                continue
            if word[:1].isalnum() and word.decode() not in _data.MID_KEYWORDS:
                # keyed by its first three letters or digits (fewer if it has fewer); a word of
                # two that goes on (sk, 00) under every third character as well
                lead = word[:3].translate(self.words).split(b" ", 1)[0]
                self.by_head.setdefault(lead, []).append(word)
                if word == lead and len(lead) == 2:
                    for c in _ALNUM_BYTES:
                        self.by_head.setdefault(lead + bytes([c]), []).append(word)
            else:
                self.mids.append(word)
        self.heads = frozenset(self.by_head)
        self.floating = frozenset(word.encode() for word in _data.SEARCH_KEYWORDS)
        self.plans: dict[bytes, tuple[bool, list[tuple[str, list[Rule]]]]] = {}

    def plan(self, word: bytes) -> tuple[bool, list[tuple[str, list[Rule]]]]:
        """For a keyword found in a run: whether its rules all need a left boundary, and its
        expressions, each with the characters every match of it starts with (none after a
        lookbehind) and the rules that share it (a URL's and a connection string's)."""
        plan: dict[str, tuple[str, list[Rule]]] = {}
        for rule in self.direct[word]:
            if rule.source not in plan:
                plan[rule.source] = (_literal_prefix(rule.source), [])
            plan[rule.source][1].append(rule)
        known = self.plans[word] = (word in self.bounded, list(plan.values()))
        return known


def _literal_prefix(source: str) -> str:
    """The characters an expression matches first, as they are (empty after a lookbehind)."""
    chars: list[str] = []
    at = 0
    while at < len(source):
        char = source[at]
        if char == "\\" and source[at + 1:at + 2] in _ESCAPED:
            chars.append(source[at + 1])
            at += 2
        elif char == "\\" or char in ".^$*+?{}[]|()":
            break
        else:
            chars.append(char)
            at += 1
    if chars and source[at:at + 1] in ("?", "*", "{"):
        chars.pop()   # the last one is optional or repeated
    return "".join(chars)


_ESCAPED = frozenset(".-/\\$^*+?()[]{}|~:@#&%=!,;<>\"' ")
