"""The credential rule table (``ctx.credentials``, §11): each rule with a positive and
a negative sample, where a finding points, what it shows of the secret, no false
positive on ordinary notes, placeholders ignored, the prefilter.

The samples are built at import time from a seeded generator (support/hookutil.py);
this file holds nothing a scanner would take for a credential. No timing is asserted
here (bench/scan.py measures); the keyword prefilter is checked by behaviour (a rule
whose keywords are absent never runs its expression)."""

from __future__ import annotations

import base64
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx import credentials as secrets
from ctx.credential_rules import RUN, TEXT
from ctx.credentials import FALLBACK, RULES, Finding, redact, scan
from support.hookutil import (
    ALNUM,
    B64,
    BASE32,
    HEX,
    ORDINARY_NOTES,
    REPORT_OFFSET,
    SAMPLES,
    URLSAFE,
    chars,
    in_prose,
    pieces,
    secret_body,
    shows_part,
)

RULE_IDS = [r.id for r in RULES]
BY_ID = {r.id: r for r in RULES}

# gitleaks rule ids (https://github.com/gitleaks/gitleaks, config/gitleaks.toml) the table
# follows; generic-api-key is gitleaks' generic rule
GITLEAKS_IDS = {
    "1password-secret-key", "1password-service-account-token", "adobe-client-secret", "age-secret-key",
    "airtable-personnal-access-token", "alibaba-access-key-id", "anthropic-admin-api-key",
    "anthropic-api-key", "artifactory-api-key", "artifactory-reference-token", "atlassian-api-token",
    "authress-service-client-access-key", "aws-access-token", "aws-amazon-bedrock-api-key-long-lived",
    "aws-amazon-bedrock-api-key-short-lived", "azure-ad-client-secret", "beamer-api-token",
    "clickhouse-cloud-api-secret-key", "clojars-api-token", "cloudflare-origin-ca-key", "curl-auth-user",
    "databricks-api-token", "defined-networking-api-token", "digitalocean-access-token", "digitalocean-pat",
    "digitalocean-refresh-token", "doppler-api-token", "dropbox-long-lived-api-token",
    "dropbox-short-lived-api-token", "duffel-api-token", "dynatrace-api-token", "easypost-api-token",
    "easypost-test-api-token", "facebook-access-token", "facebook-page-access-token",
    "flutterwave-encryption-key", "flutterwave-public-key", "flutterwave-secret-key", "flyio-access-token",
    "frameio-api-token", "gcp-api-key", "generic-api-key", "github-app-token", "github-fine-grained-pat",
    "github-oauth", "github-pat", "github-refresh-token", "gitlab-cicd-job-token", "gitlab-deploy-token",
    "gitlab-feature-flag-client-token", "gitlab-feed-token", "gitlab-incoming-mail-token",
    "gitlab-kubernetes-agent-token", "gitlab-oauth-app-secret", "gitlab-pat", "gitlab-pat-routable",
    "gitlab-ptt", "gitlab-rrt", "gitlab-runner-authentication-token",
    "gitlab-runner-authentication-token-routable", "gitlab-scim-token", "gitlab-session-cookie",
    "gocardless-api-token", "grafana-api-key", "grafana-cloud-api-token", "grafana-service-account-token",
    "harness-api-key", "hashicorp-tf-api-token", "heroku-api-key-v2", "huggingface-access-token",
    "huggingface-organization-api-token", "infracost-api-token", "intra42-client-secret", "jwt", "jwt-base64",
    "linear-api-key", "lob-api-key", "lob-pub-api-key", "mailchimp-api-key", "mailgun-private-api-token",
    "mailgun-pub-key", "mapbox-api-token", "maxmind-license-key", "microsoft-teams-webhook",
    "new-relic-browser-api-token", "new-relic-insert-key", "new-relic-user-api-key", "notion-api-token",
    "npm-access-token", "nuget-config-password", "octopus-deploy-api-key", "okta-access-token",
    "openai-api-key", "openshift-user-token", "perplexity-api-key", "plaid-api-token",
    "planetscale-api-token", "planetscale-oauth-token", "planetscale-password", "postman-api-token",
    "prefect-api-token", "private-key", "pulumi-api-token", "pypi-upload-token", "readme-api-token",
    "rubygems-api-token", "scalingo-api-token", "sendgrid-api-token", "sendinblue-api-token",
    "sentry-org-token", "sentry-user-token", "settlemint-application-access-token",
    "settlemint-personal-access-token", "settlemint-service-access-token", "shippo-api-token",
    "shopify-access-token", "shopify-custom-access-token", "shopify-private-app-access-token",
    "shopify-shared-secret", "sidekiq-secret", "sidekiq-sensitive-url", "slack-app-token", "slack-bot-token",
    "slack-config-access-token", "slack-config-refresh-token", "slack-legacy-bot-token",
    "slack-legacy-token", "slack-legacy-workspace-token", "slack-user-token", "slack-webhook-url",
    "sourcegraph-access-token", "square-access-token", "stripe-access-token", "telegram-bot-api-token",
    "twilio-api-key", "twitter-bearer-token", "typeform-api-token", "vault-batch-token",
    "vault-service-token", "yandex-access-token", "yandex-api-key", "yandex-aws-access-token",
}
# kinds gitleaks has no rule for (or none by that shape): ids of ours
OWN_IDS = {
    "url-credentials", "connection-string-password", "authorization-header", "google-oauth-client-secret",
    "google-oauth-access-token", "tailscale-api-key", "supabase-access-token", "docker-hub-pat",
    "discord-webhook-url", "contentful-personal-access-token", "langsmith-api-key", "groq-api-key",
    "replicate-api-token", "xai-api-key", "stripe-webhook-secret", "braintree-access-token",
    "putty-private-key",
}


# --- the table itself -------------------------------------------------------------------

def test_every_rule_has_a_sample_and_every_sample_a_rule():
    assert set(SAMPLES) == set(RULE_IDS)
    assert len(RULE_IDS) == len(set(RULE_IDS)), "rule ids are unique"


def test_rule_ids_are_gitleaks_ids_or_named_as_ours():
    assert set(RULE_IDS) == GITLEAKS_IDS | OWN_IDS
    assert not GITLEAKS_IDS & OWN_IDS


def test_the_table_is_broad():
    assert len(RULES) >= 150


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_rule_is_well_formed(rule):
    assert rule.description and rule.keywords
    assert all(k == k.lower() and k for k in rule.keywords), "keywords are matched on lowered text"
    assert isinstance(rule.pattern, re.Pattern)
    assert rule.entropy is None or 0 < rule.entropy < 6
    assert rule.scope in (RUN, TEXT)
    assert rule.check is None or callable(rule.check) or rule.check in secrets._CHECKS


@pytest.mark.parametrize("rule", RULE_IDS)
def test_every_keyword_list_admits_its_own_sample(rule):
    """The prefilter must not keep a rule from seeing its own kind of secret."""
    assert any(k in SAMPLES[rule].lower() for k in BY_ID[rule].keywords)


# --- each rule: a positive and a negative sample ------------------------------------------

@pytest.mark.parametrize("rule", RULE_IDS)
def test_pattern_catches_its_secret(rule):
    found = scan(SAMPLES[rule])
    assert [f.rule for f in found][:1] == [rule], found
    assert all(isinstance(f, Finding) for f in found)


def negative(rule: str) -> str:
    """The sample with every letter and digit outside its keywords made ``0``: the same
    shape and length, the keyword still there (the expression runs), no randomness (a
    placeholder, a fixture of zeros)."""
    sample = SAMPLES[rule]
    low = sample.lower()
    keep: set[int] = set()
    for word in BY_ID[rule].keywords:
        for found in re.finditer(re.escape(word), low):
            keep.update(range(found.start(), found.end()))
    return "".join(c if i in keep or not c.isalnum() else "0" for i, c in enumerate(sample))


@pytest.mark.parametrize("rule", RULE_IDS)
def test_pattern_ignores_its_shape_without_the_randomness(rule):
    text = negative(rule)
    assert rule not in {f.rule for f in scan(text)}, text
    assert rule not in {f.rule for f in scan(in_prose(text))}, text


@pytest.mark.parametrize("rule", RULE_IDS)
def test_pattern_catches_its_secret_inside_a_note(rule):
    """In a sentence, on a later line, after ordinary text: line and column point at it."""
    sample = SAMPLES[rule]
    note = "Deploy notes\n\nStep two: export it\n" + in_prose(sample)
    found = [f for f in scan(note) if f.rule == rule]
    assert len(found) == 1, found
    f = found[0]
    assert f.line == 4
    line_text = note.split("\n")[3]
    # where the match starts: the sample's first line (for an assignment, the whole name)
    anchor = sample.split("\n")[0]
    assert f.column == line_text.index(anchor) + REPORT_OFFSET.get(rule, 0) + 1
    assert f.description == BY_ID[rule].description


@pytest.mark.parametrize("rule", RULE_IDS)
def test_a_finding_never_shows_the_secret_whole(rule):
    body = secret_body(rule)
    for f in scan(in_prose(SAMPLES[rule])):
        assert body not in f.preview
        assert body.replace("\n", "") not in f.preview
        assert shows_part(f.preview, body) == []
        assert f.rule in f.describe() and f.description in f.describe()
        assert body not in f.describe()
        assert f.preview.endswith(f"({len(f.secret)} chars)")


@pytest.mark.parametrize("rule", RULE_IDS)
def test_two_secrets_two_findings_in_order(rule):
    text = f"old: {SAMPLES['aws-access-token']}\nnew: {SAMPLES[rule]}"
    found = scan(text)
    assert found[0].rule == "aws-access-token" and found[0].line == 1
    assert any(f.rule == rule and f.line >= 2 for f in found)
    assert [(f.line, f.column) for f in found] == sorted((f.line, f.column) for f in found)


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def _putty() -> str:
    return ("PuTTY-User-Key-File-2: ssh-rsa\r\nEncryption: aes256-cbc\r\nComment: imported-openssh-key\r\n"
            "Public-Lines: 1\r\n" + chars(64, B64) + "\r\nPrivate-Lines: 2\r\n" + chars(64, B64) + "\r\n"
            + chars(20, B64) + "\r\nPrivate-MAC: " + chars(40, HEX))


# realistic variants of a kind: other key types, other prefixes, where it sits
VARIANTS = {
    "pem openssh": ("private-key", "-----BEGIN " + "OPENSSH PRIVATE" + " KEY-----\nb3Blbn" + chars(60, ALNUM)),
    "pem pkcs8": ("private-key", "-----BEGIN " + "PRIVATE" + " KEY-----\nMIIEvg" + chars(58, ALNUM)),
    "pem ec": ("private-key", "-----BEGIN " + "EC PRIVATE" + " KEY-----"),
    "pem dsa": ("private-key", "-----BEGIN " + "DSA PRIVATE" + " KEY-----"),
    "pem encrypted": ("private-key", "-----BEGIN " + "ENCRYPTED PRIVATE" + " KEY-----"),
    "pgp block": ("private-key", "-----BEGIN " + "PGP PRIVATE KEY" + " BLOCK-----"),
    "ssh2 encrypted": ("private-key", "---- BEGIN " + "SSH2 ENCRYPTED PRIVATE" + " KEY ----"),
    "putty v2 windows lines": ("putty-private-key", _putty()),
    "aws temporary": ("aws-access-token", "AS" + "IA" + chars(16, BASE32)),
    "aws in env line": ("aws-access-token", "AWS_ACCESS_KEY_ID=" + "AK" + "IA" + chars(16, BASE32)),
    "github token in url": ("github-pat", "https://" + "gh" + "p_" + chars(36, ALNUM) + "@github.com/o/r.git"),
    "github user-to-server": ("github-app-token", "gh" + "u_" + chars(36, ALNUM)),
    "slack config token": ("slack-config-access-token", "xo" + "xe.xoxp-1-" + chars(165, ALNUM)),
    "openai legacy": ("openai-api-key", "sk" + "-" + chars(20, ALNUM) + "T3Blbk" + "FJ" + chars(20, ALNUM)),
    "openai service account": ("openai-api-key", "sk" + "-svcacct-" + chars(40, URLSAFE) + "7"),
    "openai in env": ("openai-api-key", "OPENAI_API_KEY=" + "sk" + "-proj-" + chars(40, URLSAFE) + "4"),
    "anthropic short": ("anthropic-api-key", "sk" + "-ant-api03-" + chars(24, ALNUM)),
    "anthropic admin": ("anthropic-admin-api-key", "sk" + "-ant-admin01-" + chars(80, URLSAFE)),
    "stripe test": ("stripe-access-token", "sk" + "_test_" + "51" + chars(30, ALNUM)),
    "stripe restricted": ("stripe-access-token", "rk" + "_live_" + "51" + chars(30, ALNUM)),
    "doppler service token": ("doppler-api-token", "dp" + ".st.prd." + chars(44, ALNUM)),
    "flutterwave test key": ("flutterwave-secret-key", "FLW" + "SECK_TEST-" + chars(32, HEX) + "-X"),
    "pypi test index": ("pypi-upload-token", "py" + "pi-AgENdGVzdC5weXBpLm9yZw" + chars(80, URLSAFE)),
    "vault legacy": ("vault-service-token", "s" + "." + chars(23, ALNUM) + "7"),
    "jwt in header": ("jwt", "Authorization: Bearer " + SAMPLES["jwt"]),
    "bearer in curl": ("authorization-header",
                       "curl -H 'Authorization: Bearer " + chars(48, ALNUM) + "' https://api.acme.dev/v1"),
    "token scheme": ("authorization-header", "Authorization: token " + chars(40, HEX)),
    "basic header": ("authorization-header", "Authorization: Basic " + _basic("deploy", chars(16, ALNUM))),
    "bare bearer": ("authorization-header", "sent it as Bearer " + chars(40, ALNUM + "-_.")),
    "mysql": ("connection-string-password", "mysql://root:" + chars(18, ALNUM) + "@10.0.3.7:3306/app"),
    "mongodb srv": ("connection-string-password",
                    "mongodb+srv://app:" + chars(20, ALNUM) + "@cluster0.ab1cd.mongodb.net/prod"),
    "redis no user": ("connection-string-password", "redis://:" + chars(24, ALNUM) + "@cache.internal:6379/0"),
    "amqp": ("connection-string-password", "amqps://svc:" + chars(20, ALNUM) + "@mq.acme.dev/vhost"),
    "jdbc": ("connection-string-password", "jdbc:postgresql://app:" + chars(16, ALNUM) + "@db:5432/x"),
    "ftp url": ("url-credentials", "ftp://backup:" + chars(16, ALNUM) + "@files.acme.dev/nightly/"),
    "https url": ("url-credentials", "https://ci-bot:" + chars(20, ALNUM) + "@nexus.acme.dev/repository/"),
    "curl long option": ("curl-auth-user", "curl --user ops:" + chars(16, ALNUM) + " https://x.acme.dev"),
    "generic token=": ("generic-api-key", "token=" + chars(24, ALNUM)),
    "generic secret=": ("generic-api-key", "client_secret=" + chars(32, ALNUM)),
    "generic spaced": ("generic-api-key", "password = '" + chars(14, ALNUM) + "'"),
    "generic json": ("generic-api-key", '{"api_key": "' + chars(32, ALNUM) + '"}'),
    "generic compact json": ("generic-api-key", '{"apiKey":"' + chars(32, ALNUM) + '"}'),
    "generic api-key": ("generic-api-key", "X-Api-Key=" + chars(32, ALNUM)),
    "generic header": ("generic-api-key", "X-API-Key: " + chars(32, ALNUM)),
    "generic aws secret": ("generic-api-key", "aws_secret_access_key = " + chars(20, ALNUM) + "/" + chars(19, ALNUM)),
    "generic passwd": ("generic-api-key", "passwd=" + chars(12, ALNUM)),
    "generic in url": ("generic-api-key", "https://api.internal/v1/hook?access_token=" + chars(30, ALNUM)),
    "generic is": ("generic-api-key", "The staging DB password is " + chars(16, ALNUM)),
    "generic is for": ("generic-api-key", "The API key for billing is " + chars(32, ALNUM)),
    "generic cli flag": ("generic-api-key", "mytool --password=" + chars(14, ALNUM)),
    "generic yaml": ("generic-api-key", "db:\n  host: db.internal\n  password: " + chars(16, ALNUM)),
    "generic uuid api key": ("generic-api-key", "HEROKU_API_KEY=" + "-".join(chars(n, HEX) for n in (8, 4, 4, 4, 12))),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_realistic_variants_are_caught(name):
    rule, text = VARIANTS[name]
    assert rule in {f.rule for f in scan("note: " + text)}


# realistic formats the table once missed
def test_secret_key_assignment_is_caught():
    assert scan("SECRET_KEY=" + "dj-" + chars(40, ALNUM))


def test_yaml_password_is_caught():
    assert scan("staging db\nuser: deploy\npassword: " + chars(16, ALNUM + "!#%"))


def test_password_starting_with_dollar_is_caught():
    assert scan("password=$" + "3" + chars(15, ALNUM + "!#%"))


def test_a_provider_rule_wins_over_a_shape_rule_on_the_same_characters():
    token = SAMPLES["github-pat"]
    for text in ("GITHUB_TOKEN=" + token, "Authorization: Bearer " + token, "https://x:" + token + "@github.com"):
        assert [f.rule for f in scan(text)] == ["github-pat"], text
    assert {r for r in FALLBACK} <= set(RULE_IDS)


# --- no false positives -------------------------------------------------------------------

@pytest.mark.parametrize("name", list(ORDINARY_NOTES))
def test_ordinary_note_is_not_flagged(name):
    assert scan(ORDINARY_NOTES[name]) == []


def test_a_long_ordinary_note_is_not_flagged():
    note = "\n".join(ORDINARY_NOTES.values()) * 3
    assert scan(note) == []


@pytest.mark.parametrize("note", [
    "Pass the token" + "= parameter to the endpoint",
    "The login form posts password" + "= together with username=",
    "The service reads it with password" + " = os.environ['DB_PASSWORD']",
    "In the fixture: secret" + " = make_secret(length=32)",
    "The token is rotated daily by the scheduler",
    "the key is in 1Password under Staging DB",
])
def test_prose_mentioning_an_assignment_is_not_flagged(note):
    assert scan(note) == []


def test_kebab_case_sk_name_is_not_flagged():
    assert scan("Moved the sk" + "-learn-compatible-estimators to the new package") == []


def test_empty_and_none_like_texts():
    assert scan("") == []
    assert scan("\n\n") == []
    assert scan("token") == []
    assert scan("\u00e9t\u00e9 \u2192 " * 200) == []


# --- placeholders ----------------------------------------------------------------------------

@pytest.mark.parametrize("placeholder", [
    "EXAMPLE", "REDACTED", "YOUR_API_KEY_HERE", "$VAR", "<token>", "{secret}", "${TOKEN}",
])
@pytest.mark.parametrize("form", ["token={}", "api_key = {}", 'password="{}"', '"secret": "{}"'])
def test_placeholders_are_not_reported(placeholder, form):
    value = placeholder if len(placeholder) >= 8 else placeholder + "_DB_PASSWORD"
    if placeholder in ("<token>", "{secret}", "${TOKEN}"):
        value = placeholder
    assert scan(form.format(value)) == []


@pytest.mark.parametrize("rule", ["github-pat", "aws-access-token", "openai-api-key", "slack-bot-token",
                                  "gitlab-deploy-token", "huggingface-access-token", "npm-access-token"])
def test_placeholder_words_inside_a_token_shape_are_not_reported(rule):
    sample = SAMPLES[rule]
    fake = sample[:len(sample) - 7] + "EXAMPLE"
    assert scan(fake) == []


@pytest.mark.parametrize("text", [
    "postgres://user:password@localhost:5432/app", "amqp://guest:guest@localhost:5672/",
    "https://user:pass@example.com/", "redis://:changeme@localhost:6379",
    "mysql://root:${MYSQL_ROOT_PASSWORD}@db/app", "https://deploy:" + chars(16, ALNUM) + "@host.example/x",
    "curl -u admin:admin http://localhost:9200", "Authorization: Basic " + _basic("user", "password"),
])
def test_documentation_credentials_in_urls_and_headers_are_not_reported(text):
    assert scan(text) == []


def test_a_placeholder_next_to_a_real_secret_does_not_hide_it():
    text = "token=${TOKEN}\n" + in_prose(SAMPLES["github-pat"])
    assert [f.rule for f in scan(text)] == ["github-pat"]


# --- redaction and the keyword prefilter ---------------------------------------------------

def test_redact_keeps_a_short_prefix_and_the_length():
    shown = redact("abcdefghijklmnopqrst")
    assert shown.startswith("abcd") and "20" in shown and "efgh" not in shown
    short = redact("abcdefgh")
    assert short.startswith("ab") and "cdef" not in short and "8" in short


class _Spy:
    """Stands in for a rule's compiled expression and notes every time it runs."""

    def __init__(self, rule, ran):
        self.rule, self.ran, self.groups = rule, ran, rule.pattern.groups
        self.pattern = rule.pattern.pattern

    def match(self, text, *args):
        self.ran.append(self.rule.id)
        return self.rule.pattern.match(text, *args)

    def finditer(self, text, *args):
        self.ran.append(self.rule.id)
        return self.rule.pattern.finditer(text, *args)


@pytest.fixture
def ran(monkeypatch):
    ran: list[str] = []
    spied = tuple(secrets.Rule(r.id, r.description, r.keywords, _Spy(r, ran), r.entropy, r.check, r.scope)
                  for r in RULES)
    monkeypatch.setattr(secrets, "RULES", spied)
    return ran


def test_prefilter_runs_nothing_on_plain_prose(ran):
    assert scan("The pool of 20 connections holds under load; p95 412ms on the web tier") == []
    assert ran == []


def test_prefilter_runs_nothing_on_long_ordinary_tokens(ran):
    """Commit ids, paths and URLs are runs the provider rules look at, but no keyword
    starts a word in them."""
    assert scan("Fixed in 3f2a91c0d4e5b6a7980112233445566778899aabb; see docs/runbooks/db_restore.md "
                "and https://grafana.internal/d/abc123/uploads?orgId=1") == []
    assert set(ran) <= {r.id for r in RULES if "://" in r.keywords}   # the URL has one


def test_prefilter_runs_only_the_rule_whose_keyword_stands(ran):
    found = scan(SAMPLES["github-pat"])
    assert [f.rule for f in found] == ["github-pat"]
    assert ran == ["github-pat"]


def test_prefilter_runs_the_shape_rules_only_where_their_word_stands(ran):
    assert scan("The token is rotated daily; see the runbook") == []
    assert set(ran) == {"generic-api-key"} and len(ran) == 1


def test_importing_the_scanner_compiles_nothing_and_loads_no_typing():
    code = ("import re, sys; before = len(re._cache); import ctx.credentials as c; "
            "print(len(re._cache) - before, 'typing' in sys.modules, 'dataclasses' in sys.modules, "
            "sum(isinstance(r._pattern, str) for r in c.RULES) == len(c.RULES))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    compiled, typing, dataclasses, lazy = done.stdout.split()
    assert compiled == "0" and lazy == "True"
    assert (typing, dataclasses) == ("False", "False") or "typing" in _preloaded()


def _preloaded() -> str:
    """Modules the interpreter loads before any of ours (a site hook may bring typing)."""
    done = subprocess.run([sys.executable, "-c", "import sys; print(' '.join(sys.modules))"],
                          capture_output=True, text=True, check=True)
    return done.stdout


def test_pieces_helper_sees_a_partial_leak():
    # the tests' own check for "no part of the secret" must be able to fail
    secret = SAMPLES["github-pat"]
    assert shows_part("x " + secret[5:20] + " y", secret)
    assert shows_part(redact(secret), secret) == []
    assert len(pieces(secret)) == len(secret) - 9


_NEEDING = [rule for rule in RULES if rule.needs]
_PIECES = ["key", "token", "pass", "password", "secret", "auth", "cred", "pwd", "_id", ".x", "-y", "API", "KEY",
           " ", "\t", "\n", "=", ":", "=>", ":=", "'", '"', "`", " is", " IS", "\tis", " was", " are", " were",
           " set to", " now", " for the", " of", " issue", " island", "\tare\t",
           "hunter2hunter2", "s3cr3tValue99", "Ab12Cd34Ef56", "x", "9"]


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16))
def test_a_rule_that_needs_what_a_text_lacks_cannot_match_it(pieces):
    """NEEDS only skips expressions that could not match: wherever the expression of a rule
    with NEEDS matches, the text holds one of the needed strings."""
    text = "".join(pieces)
    raw = text.encode("ascii", "replace").lower()  # as scan reads it
    for rule in _NEEDING:
        if rule.pattern.search(text):
            assert rule.can_match(raw), (rule.id, text)


def test_a_key_or_prose_with_a_keyword_and_nothing_after_it_compiles_nothing():
    """A keyword alone ("newkey_3", "the token budget") does not compile the expression it
    guards: a write whose text holds nothing else never imports re."""
    fresh = [secrets.Rule(rule.id, rule.description, rule.keywords, rule.source, rule.entropy, rule.check,
                          rule.scope) for rule in _NEEDING]
    for rule in fresh:
        assert not rule.can_match(b"newkey_3") and not rule.can_match(b"the token budget and the session")
        assert isinstance(rule._pattern, str)  # not compiled
    secret = "".join(["Zq8vK2", "mPx9Lw4Rt"])  # (joined here: the file itself holds no credential)
    assert scan(f'password = "{secret}"') and scan(f"the api token is {secret}")
