"""Credential detection (§11): the one rule table ctx and its hooks share.

The rules are data (``ctx.credential_rules``): each has an id (gitleaks' rule
id where gitleaks has the kind), a description, lower-case keywords, an
expression and an entropy floor. ``scan`` finds them in two cheap passes and
runs an expression only where one of its keywords stands:

- Almost every credential is one unbroken run of 16 or more characters with
  no space, quote or bracket in it (``glpat-…``, ``https://u:p@host``). One
  translation of the text marks such runs; ordinary prose has few or none,
  and then no provider rule is looked at. Within the runs, the first three
  letters of every word are intersected with those of the keywords (one set
  operation), so a clean value costs the same with 150 rules as with 10.
- The few rules whose keyword may stand in prose (``-----BEGIN``,
  ``Authorization:``, ``password: …``) look for it with ``bytes.find`` and
  match their expression where it stands, never searching the whole text.

Expressions compile on first use, so importing this module compiles nothing
(and ``re`` itself is loaded only then: a clean value never needs it).
Placeholders (``EXAMPLE``, ``REDACTED``, ``YOUR_API_KEY_HERE``, ``$VAR``,
``<...>``, ``{...}``) are documentation, not secrets, and are not reported.
A finding never carries the secret in its text: ``preview`` shows its first
characters and its length.
"""

from __future__ import annotations

from operator import itemgetter

from ctx import credential_rules as _data
from ctx.credential_rules import MIN_RUN, TABLE, Rule
from ctx.credentialindex import Index, Runs

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    import re  # (at run time only where an expression is compiled: a clean value needs none)
    from collections.abc import Callable


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


RULES: tuple[Rule, ...] = tuple(Rule(*row) for row in TABLE)

# rules that name a shape rather than a provider: when a provider rule finds the same
# characters, its finding is the one reported
FALLBACK = frozenset({"generic-api-key", "authorization-header", "url-credentials",
                      "connection-string-password", "curl-auth-user"})


def redact(secret: str) -> str:
    """Enough of a secret to find it again, never the whole of it."""
    keep = 4 if len(secret) > 12 else 2
    return secret[:keep] + "…" + f"({len(secret)} chars)"


_HEAD = itemgetter(slice(0, 3))   # a word's first three letters or digits
_INDEX: Index | None = None


def _index() -> Index:
    global _INDEX
    if _INDEX is None or _INDEX.rules is not RULES:
        _INDEX = Index(RULES)
    return _INDEX


# --- scanning ------------------------------------------------------------------------------

def scan(text: str) -> list[Finding]:
    """Every credential-looking string in ``text``, in order of position."""
    if not text:
        return []
    index = _INDEX if _INDEX is not None and _INDEX.rules is RULES else _index()
    # one byte per character (anything not ASCII becomes "?"), lower-cased: offsets are
    # the text's own
    raw = text.encode("ascii", "replace").lower()
    found: list[tuple] = []
    mask = raw.translate(index.mask)
    at = mask.find(_RUN)
    if at >= 0:
        spans = []
        while at >= 0:
            end = mask.find(b" ", at + MIN_RUN)
            if end < 0:
                spans.append((at, len(mask)))
                break
            spans.append((at, end))
            at = mask.find(_RUN, end)
        _scan_runs(index.runs, text, raw, mask, spans, found)
    able: dict[Rule, bool] = {}   # the rules with NEEDS that this text can match, once each
    for word, rules, children in index.probes:
        at = raw.find(word)
        while at >= 0:
            for rule in rules:
                match = rule.pattern.match(text, at) if _able(rule, raw, able) else None
                if match is not None:
                    _accept(rule, match, found)
            for child, offset, child_rules in children:
                start = at - offset
                if start >= 0 and raw.startswith(child, start):
                    for rule in child_rules:
                        match = rule.pattern.match(text, start) if _able(rule, raw, able) else None
                        if match is not None:
                            _accept(rule, match, found)
            at = raw.find(word, at + 1)
    return _report(index, text, found) if found else []


_RUN = b"a" * MIN_RUN


def _able(rule: Rule, raw: bytes, known: dict[Rule, bool]) -> bool:
    """``rule.can_match(raw)``, asked of the text once (a keyword may stand in it many times)."""
    if not rule.needs:
        return True
    able = known.get(rule)
    if able is None:
        able = known[rule] = rule.can_match(raw)
    return able


def _scan_runs(index: Runs, text: str, raw: bytes, mask: bytes, spans: list[tuple[int, int]],
               found: list[tuple]) -> None:
    """The RUN rules whose keywords stand in one of the runs: matched where the keyword
    stands, or searched for in its run when the keyword stands inside the credential."""
    joined = b" ".join([raw[start:end] for start, end in spans]) if len(spans) > 1 else \
        raw[spans[0][0]:spans[0][1]]
    heads = index.heads.intersection(map(_HEAD, joined.translate(index.words).split()))
    present = [word for head in heads for word in index.by_head[head] if word in joined]
    present += [word for word in index.anchored if word in joined]
    first = spans[0][0]
    mids = [word for word in index.mids if word in joined]
    for word in present:
        if word in index.floating:
            mids.append(word)
            continue
        bounded, plan = index.plans.get(word) or index.plan(word)
        at = raw.find(word, first)
        while at >= 0:   # (where it stands outside a run, nothing 16 long can match)
            after = at + 1
            if not (bounded and raw[at - 1:at].isalnum()):
                for literal, rules in plan:
                    if text.startswith(literal, at):   # else the expression need not run
                        match = rules[0].pattern.match(text, at)
                        if match is not None:
                            for rule in rules:
                                _accept(rule, match, found)
                            after = max(after, match.end())   # not again inside what matched
            at = raw.find(word, after)
    for word in mids:
        at = raw.find(word, first)
        while at >= 0:   # the keyword stands inside the credential: search its run
            start, end = mask.rfind(b" ", 0, at) + 1, mask.find(b" ", at)
            end = len(mask) if end < 0 else end
            for rule in index.direct[word]:
                for match in rule.pattern.finditer(text, start, end):
                    _accept(rule, match, found)
            at = raw.find(word, end)


def _accept(rule: Rule, match: re.Match[str], found: list[tuple]) -> None:
    """Keep a match that passes its rule's check, the placeholder test and the entropy floor."""
    if found and rule.id in FALLBACK and len(found) < 64:   # a provider's rule has these already
        start, end = match.span(match.lastindex or 0)
        for other in found:
            if other[0] < end and start < other[1] and other[3].id not in FALLBACK:
                return
    check = rule.check
    if check is not None:
        if isinstance(check, str):
            check = rule.check = _CHECKS[check]
        got = check(match)
        if got is None:
            return
        report, start, end = got
    else:
        report = match.start()
        start, end = match.span()
        if match.re.groups:
            for group in range(1, match.re.groups + 1):
                if match.group(group) is not None:
                    start, end = match.span(group)
                    break
    secret = match.string[start:end]
    if _is_placeholder(secret) or (rule.entropy and _entropy(secret) < rule.entropy):
        return
    found.append((start, end, report, rule, secret))


def _report(index: Index, text: str, found: list[tuple]) -> list[Finding]:
    """One finding for each stretch of characters: a provider's rule over a shape's, the
    longer match over the shorter, then the table's order."""
    from bisect import bisect_right
    order = index.order
    found.sort(key=lambda c: (c[3].id in FALLBACK, c[0] - c[1], order.get(c[3], 0), c[2]))
    kept: list[tuple] = []
    starts: list[int] = []   # of the kept candidates, which never overlap: sorted by start
    ends: list[int] = []
    for candidate in found:
        start, end = candidate[0], candidate[1]
        at = bisect_right(starts, start)
        if (at and ends[at - 1] > start) or (at < len(starts) and starts[at] < end):
            continue
        starts.insert(at, start)
        ends.insert(at, end)
        kept.append(candidate)
    findings = []
    for _start, _end, report, rule, secret in kept:
        line = text.count("\n", 0, report) + 1
        column = report - (text.rfind("\n", 0, report) + 1) + 1
        findings.append(Finding(rule.id, rule.description, line, column, redact(secret), secret))
    findings.sort(key=lambda f: (f.line, f.column))
    return findings


# --- what a match must also be -------------------------------------------------------------

_COMPILED: dict[str, re.Pattern[str]] = {}


def _re(name: str) -> re.Pattern[str]:
    pattern = _COMPILED.get(name)
    if pattern is None:
        import re
        pattern = _COMPILED[name] = re.compile(_data.VALUE_PATTERNS[name])
    return pattern


def _is_placeholder(text: str) -> bool:
    if len(set(text)) <= 2:
        return True
    low = text.lower()
    for word in _data.PLACEHOLDER_WORDS:
        if word in low:
            return True
    return text[:1] in "$%{<" and _re("reference").match(text) is not None


_PLOGP: list[float] = []   # n * log2(n), by n: entropy without a logarithm a character


def _entropy(text: str) -> float:
    """Shannon entropy in bits a character: log2(n) - sum(c log2 c) / n over the counts c."""
    size = len(text)
    if len(_PLOGP) <= size:
        from math import log2
        _PLOGP.extend(n * log2(n) if n else 0.0 for n in range(len(_PLOGP), size + 64))
    return _PLOGP[size] / size - sum(map(_PLOGP.__getitem__, map(text.count, set(text)))) / size


def _classes(value: str) -> int:
    """How many of lower case, upper case, digits and other characters ``value`` mixes."""
    return ((value != value.upper()) + (value != value.lower())
            + (_re("digit").search(value) is not None) + (not value.isalnum()))


def _made_of_words(value: str) -> bool:
    """Whether half the letters of ``value`` or more are in words: words that names are made
    of, or any other of seven letters or more that reads like one (vowels, no four consonants
    in a row: a random token has few such runs)."""
    humps = _re("name").findall(value)
    letters = sum(len(h) for h in humps if h.isalpha())
    known = sum(len(h) for h in humps if h.isalpha() and (
        h.lower() in _data.NAME_WORDS if len(h) < 7 or h.isupper() else _re("word").fullmatch(h.lower())))
    return bool(letters) and known * 2 >= letters


def _plausible_password(password: str, user: str | None, host: str = "") -> bool:
    """A password written into a URL or a command that is not documentation's."""
    low = password.lower()
    if (low in _data.DOC_PASSWORDS or (user is not None and password == user) or _is_placeholder(password)
            or password[:1] in "$%{<*" or len(password) < 4):
        return False
    if password.isalpha() and password.islower() and len(password) <= 12:
        return False  # a word, the way examples write one
    if password.isdigit() and len(password) < 8:
        return False
    host = host.lower()
    return not (host in _data.DOC_HOSTS or host.endswith((".example", ".example.com", ".invalid", ".test")))


def _scheme(match: re.Match[str]) -> tuple[int, str]:
    """Where the URL whose ``://`` the match starts at begins, and its scheme (lower case)."""
    text, end = match.string, match.start()
    start, floor = end, max(0, end - 32)   # schemes are short
    while start > floor and (text[start - 1].isalnum() or text[start - 1] in "+.-"):
        start -= 1
    if text[max(0, start - 5):start].lower() == "jdbc:":
        start -= 5
    return start, text[start:end].lower()


def _userinfo(match: re.Match[str], databases: bool):
    start, scheme = _scheme(match)
    if not scheme or (scheme in _data.DB_SCHEMES) != databases:
        return None
    stop = _re("host_end").search(match.string, match.end())
    host = match.string[match.end():stop.start() if stop else None]
    if not _plausible_password(match.group(2), match.group(1), host):
        return None
    return start, match.start(2), match.end(2)


def _check_http_url(match: re.Match[str]):
    start, scheme = _scheme(match)
    return (start, start, match.end()) if scheme in ("http", "https") else None


def _check_cli_user(match: re.Match[str]):
    if not _plausible_password(match.group(2), match.group(1)):
        return None
    return match.start(), match.start(2), match.end(2)


def _b64decode(value: str) -> bytes | None:
    import binascii
    try:
        text = value.replace("-", "+").replace("_", "/")
        return binascii.a2b_base64(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def _jwt_header_ok(token: str) -> bool:
    header = _b64decode(token.split(".", 1)[0])
    return header is not None and header.lstrip()[:1] == b"{" and b'"alg"' in header


def _check_jwt(match: re.Match[str]):
    return (match.start(), match.start(), match.end()) if _jwt_header_ok(match.group()) else None


def _check_jwt_base64(match: re.Match[str]):
    inner = _b64decode(match.group())
    if inner is None or not inner.startswith(b"eyJ") or b"." not in inner:
        return None
    try:
        ok = _jwt_header_ok(inner.decode("ascii"))
    except UnicodeDecodeError:
        return None
    return (match.start(), match.start(), match.end()) if ok else None


def _check_vault(match: re.Match[str]):
    secret = match.group()
    if secret.startswith("s.") and _re("digit").search(secret) is None:
        return None  # s.<24 letters> is a word in a dotted name
    return match.start(), match.start(), match.end()


def _check_mixed_case(match: re.Match[str]):
    secret = match.group()
    if secret == secret.lower() or secret == secret.upper() or _re("digit").search(secret) is None:
        return None
    return match.start(), match.start(), match.end()


def _check_header(match: re.Match[str]):
    scheme = (match.group(1) or "").lower()
    if not scheme and match.group()[:6].lower() == "bearer":
        scheme = "bearer"
    value = match.group(2)
    if scheme == "basic":
        decoded = _b64decode(value)
        try:
            user, colon, password = decoded.decode("utf-8").partition(":") if decoded else ("", "", "")
        except UnicodeDecodeError:
            return None
        if not colon or not password.isprintable() or not _plausible_password(password, user):
            return None
    elif not _looks_secret(value, 2):
        return None
    return match.start(), match.start(2), match.end(2)


def _name_strength(name: str, text: str, start: int) -> int:
    """0: not a credential's name; 1: a bare ``key``; 2: a token's, secret's or key's;
    3: a password's."""
    parts = [p.lower() for p in _re("name").findall(name)]
    if any(p in _data.NOT_SECRET for p in parts):
        return 0
    best = 0
    for i, part in enumerate(parts):
        if part.endswith(_data.PASSWORD_PARTS) or part in ("pwd", "pass", "passcode"):
            best = 3
        elif part.endswith(_data.SECRET_PARTS):
            best = max(best, 2)
        elif part.endswith("key"):
            if part != "key":
                best = max(best, 2 if part[:-3] in _data.KEY_QUALIFIERS else 0)
            elif i and parts[i - 1] in _data.KEY_QUALIFIERS:
                best = max(best, 2)
            else:
                before = _re("prev_word").search(text, max(0, start - 40), start)
                word = before.group(1).lower() if before else ""
                if word in _data.NOT_SECRET:
                    return 0
                best = max(best, 2 if word in _data.KEY_QUALIFIERS else 1)
    return best


def _looks_secret(value: str, strength: int) -> bool:
    """A value random enough to be a credential for a name of this strength."""
    min_length, floor = {1: (20, 3.5), 2: (12, 3.0)}.get(strength, (8, 2.5))
    if len(value) < min_length or _classes(value) < 2 or _is_placeholder(value):
        return False
    low = value.lower()
    if ("://" in value or low.startswith(_data.BENIGN_PREFIXES) or low.endswith(_data.BENIGN_SUFFIXES)
            or _re("benign").match(value)):
        return False
    if len(value) == 36 and value[8] == value[13] == value[18] == value[23] == "-" \
            and not value.replace("-", "").strip(_HEX):
        return strength > 1   # a UUID: an API key's if the name says so, an id's if it is a bare "key"
    if strength == 1 and not value.strip(_HEX):
        return False  # a digest
    if strength == 1 and _classes(value) < 3:
        return False
    if (strength < 3 or len(_re("parts").findall(value)) > 1) and _made_of_words(value):
        return False  # a name, a path, a setting: oauth2-proxy, kv/prod/payments, see-vault
    return _entropy(value) >= floor


_HEX = "0123456789abcdefABCDEF"
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _check_generic(match: re.Match[str]):
    text = match.string
    group = next(name for name in ("v1", "v2", "v3", "v4") if match.group(name) is not None)
    value = match.group(group)
    start = match.start()
    floor = max(0, start - 64)
    while start > floor and text[start - 1] in _NAME_CHARS:
        start -= 1
    strength = _name_strength(text[start:match.end("tail")], text, start)
    if not strength:
        return None
    if match.group("prose") is not None:
        strength = min(strength, 2)   # "the passphrase is Tr0ub4dor": prose asks for a token's length
    end = match.end(group)
    if group == "v4" and text[end:end + 1] in ("(", "["):
        return None  # a call or an index: code, not a value
    if not _looks_secret(value, strength):
        return None
    return start, match.start(group), end


_CHECKS: dict[str, Callable] = {
    "url": lambda match: _userinfo(match, False), "db_url": lambda match: _userinfo(match, True),
    "http_url": _check_http_url, "cli_user": _check_cli_user, "jwt": _check_jwt, "jwt_base64": _check_jwt_base64,
    "vault": _check_vault, "mixed_case": _check_mixed_case, "header": _check_header, "generic": _check_generic,
}
