"""Helpers for the credential tests: realistic fake secrets, one per rule of
``ctx.credentials.RULES``, the corpora the scanner is measured on, and
ordinary notes that must not be flagged.

Every fake secret is built at import time from a fixed-seed random generator
over the character classes and lengths the provider documents, so this file
holds no string that looks like a credential to a scanner (ctx's own,
gitleaks…), and a sample never trips the placeholder filter by accident (no
``example``, no runs of one letter).

- ``SAMPLES``: rule id -> one credential of that kind, as it would be pasted.
- ``PREFIXED``: the rules whose credential is a token of its own (a prefix, a
  fixed shape) on one line; ``FORMS`` writes each the three ways an agent does
  (a sentence, an environment line, JSON).
- ``KEYWORD_CASES``: high-entropy values next to a credential word, in the
  forms ``word: value``, ``word=value``, ``"word": "value"``, ``word is value``.
- ``ORDINARY_NOTES``: realistic memory entries (commit ids, digests, UUIDs,
  base64 images, fingerprints, ARNs, URLs with query strings, ``${VAR}``
  references, documentation placeholders, prose about passwords and tokens).
"""

from __future__ import annotations

import base64
import json
import random
import string
import sys
from pathlib import Path

from support.gitutil import git

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
LOWER_ALNUM = LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
HEX = DIGITS + "abcdef"
HEX_UPPER = DIGITS + "ABCDEF"
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
BASE32 = UPPER + "234567"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()
PASSWORD_CHARS = ALNUM + "!#%&+-:?@^_~"
URL_PASSWORD_CHARS = ALNUM + "-_~!"

_rng = random.Random(20261130)


def chars(n: int, alphabet: str) -> str:
    """``n`` characters drawn from ``alphabet`` (a fixed seed: the same every run)."""
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _uuid() -> str:
    return "-".join(chars(n, HEX) for n in (8, 4, 4, 4, 12))


def _b64(data: bytes, urlsafe: bool = False) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(data).decode().rstrip("=")


def _pem() -> str:
    body = "\n".join("MII" + chars(61, ALNUM + "+/") if i == 0 else chars(64, ALNUM + "+/")
                     for i in range(4))
    kind = "RSA " + "PRIVATE" + " KEY"
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


def _jwt() -> str:
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode(), True)
    claims = {"sub": chars(12, LOWER_ALNUM), "iat": 1732950000 + _rng.randrange(10**6), "scope": "deploy"}
    payload = _b64(json.dumps(claims, separators=(",", ":")).encode(), True)
    return f"{header}.{payload}.{chars(43, URLSAFE)}"


def _sentry_org() -> str:
    claims = {"iat": 1732950000.5, "url": "https://sentry.io", "region_url": "https://us.sentry.io",
              "org": chars(8, LOWER)}
    return "sntry" + "s_" + _b64(json.dumps(claims, separators=(",", ":")).encode()) + "_" + chars(43, B64)


def _password(n: int = 18) -> str:
    return chars(n, PASSWORD_CHARS)


def _url_password(n: int = 16) -> str:
    return chars(1, ALNUM) + chars(n - 1, URL_PASSWORD_CHARS)


# rule id -> a realistic fake credential of that kind (the order is the RNG's: keep it)
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
    "generic-api-key": "DB_PASS" + "WORD=" + _password(),
    # --- the rest of the table, from the providers' documented formats ---
    "jwt": _jwt(),
    "url-credentials": "https://deploy:" + _url_password() + "@git.acme-internal.dev/platform/app.git",
    "connection-string-password": ("postgres://app_rw:" + _url_password(20)
                                   + "@db-primary.acme-internal.dev:5432/orders?sslmode=require"),
    "authorization-header": "Authorization: Bearer " + chars(40, ALNUM + "-_~"),
    "curl-auth-user": "curl -u deploy:" + _url_password(14) + " https://registry.acme-internal.dev/v2/",
    "nuget-config-password": '<add key="ClearText' + 'Password" value="' + _url_password(18) + '" />',
    "aws-amazon-bedrock-api-key-long-lived": "AB" + "SK" + chars(130, B64),
    "aws-amazon-bedrock-api-key-short-lived": ("bedrock-api-key-" + "YmVkcm9jay5hbWF6b25hd3MuY29t"
                                               + chars(180, B64)),
    "google-oauth-client-secret": "GOC" + "SPX-" + chars(28, URLSAFE),
    "google-oauth-access-token": "ya" + "29." + chars(120, URLSAFE),
    "azure-ad-client-secret": chars(3, ALNUM) + chars(1, DIGITS) + "Q~" + chars(34, ALNUM + "_~.-"),
    "alibaba-access-key-id": "LT" + "AI" + chars(20, ALNUM),
    "digitalocean-pat": "do" + "p_v1_" + chars(64, HEX),
    "digitalocean-access-token": "do" + "o_v1_" + chars(64, HEX),
    "digitalocean-refresh-token": "do" + "r_v1_" + chars(64, HEX),
    "flyio-access-token": "fm" + "2_" + chars(160, B64),
    "heroku-api-key-v2": "HR" + "KU-AA" + chars(58, URLSAFE),
    "scalingo-api-token": "tk" + "-us-" + chars(48, URLSAFE),
    "cloudflare-origin-ca-key": "v1" + ".0-" + chars(24, HEX) + "-" + chars(146, HEX),
    "hashicorp-tf-api-token": chars(14, ALNUM) + ".atlas" + "v1." + chars(66, URLSAFE),
    "vault-service-token": "hv" + "s." + chars(95, URLSAFE),
    "vault-batch-token": "hv" + "b." + chars(150, URLSAFE),
    "yandex-api-key": "AQ" + "VN" + chars(36, URLSAFE),
    "yandex-aws-access-token": "Y" + "C" + chars(38, ALNUM),
    "yandex-access-token": "t" + "1." + chars(40, URLSAFE) + "." + chars(86, URLSAFE),
    "openshift-user-token": "sha256" + "~" + chars(43, URLSAFE),
    "databricks-api-token": "da" + "pi" + chars(32, HEX),
    "dynatrace-api-token": "dt0" + "c01." + chars(24, UPPER_ALNUM) + "." + chars(64, UPPER_ALNUM),
    "tailscale-api-key": "ts" + "key-auth-" + chars(11, ALNUM) + "CNTRL-" + chars(33, ALNUM),
    "doppler-api-token": "dp" + ".pt." + chars(43, ALNUM),
    "pulumi-api-token": "pu" + "l-" + chars(40, HEX),
    "infracost-api-token": "ic" + "o-" + chars(32, ALNUM),
    "planetscale-api-token": "pscale" + "_tkn_" + chars(43, URLSAFE),
    "planetscale-oauth-token": "pscale" + "_oauth_" + chars(43, URLSAFE),
    "planetscale-password": "pscale" + "_pw_" + chars(43, URLSAFE),
    "supabase-access-token": "sb" + "p_" + chars(40, HEX),
    "clickhouse-cloud-api-secret-key": "4b" + "1d" + chars(38, ALNUM),
    "gitlab-pat-routable": "gl" + "pat-" + chars(40, URLSAFE) + ".01" + chars(7, LOWER_ALNUM),
    "gitlab-deploy-token": "gl" + "dt-" + chars(20, URLSAFE),
    "gitlab-runner-authentication-token": "gl" + "rt-" + chars(20, URLSAFE),
    "gitlab-runner-authentication-token-routable": ("gl" + "rt-t1_" + chars(40, URLSAFE) + ".02"
                                                    + chars(7, LOWER_ALNUM)),
    "gitlab-feed-token": "gl" + "ft-" + chars(20, URLSAFE),
    "gitlab-cicd-job-token": "gl" + "cbt-" + "64_" + chars(20, URLSAFE),
    "gitlab-feature-flag-client-token": "gl" + "ffct-" + chars(20, URLSAFE),
    "gitlab-incoming-mail-token": "gl" + "imt-" + chars(25, URLSAFE),
    "gitlab-kubernetes-agent-token": "gl" + "agent-" + chars(50, URLSAFE),
    "gitlab-oauth-app-secret": "gl" + "oas-" + chars(64, URLSAFE),
    "gitlab-ptt": "gl" + "ptt-" + chars(40, HEX),
    "gitlab-rrt": "GR13" + "48941" + chars(20, URLSAFE),
    "gitlab-scim-token": "gl" + "soat-" + chars(20, URLSAFE),
    "gitlab-session-cookie": "_gitlab" + "_session=" + chars(32, LOWER_ALNUM),
    "sourcegraph-access-token": "sg" + "p_" + chars(16, HEX) + "_" + chars(40, HEX),
    "atlassian-api-token": "ATA" + "TT3" + chars(186, ALNUM + "_-="),
    "npm-access-token": "np" + "m_" + chars(36, ALNUM),
    "pypi-upload-token": "py" + "pi-AgEIcHlwaS5vcmc" + chars(120, URLSAFE),
    "rubygems-api-token": "ruby" + "gems_" + chars(48, HEX),
    "clojars-api-token": "CLO" + "JARS_" + chars(60, LOWER_ALNUM),
    "docker-hub-pat": "dckr" + "_pat_" + chars(27, URLSAFE),
    "artifactory-api-key": "AK" + "Cp" + chars(69, ALNUM),
    "artifactory-reference-token": "cmV" + "md" + chars(59, ALNUM),
    "octopus-deploy-api-key": "AP" + "I-" + chars(26, UPPER_ALNUM),
    "prefect-api-token": "pn" + "u_" + chars(36, ALNUM),
    "readme-api-token": "rd" + "me_" + chars(70, LOWER_ALNUM),
    "defined-networking-api-token": "dn" + "key-" + chars(26, LOWER_ALNUM) + "-" + chars(52, LOWER_ALNUM),
    "frameio-api-token": "fio" + "-u-" + chars(64, URLSAFE),
    "sidekiq-secret": "BUNDLE_GEMS__CONTRIB" + "SYS__COM=" + chars(8, HEX) + ":" + chars(8, HEX),
    "sidekiq-sensitive-url": ("https://" + chars(8, HEX) + ":" + chars(8, HEX) + "@gems.contrib"
                              + "sys.com/"),
    "slack-legacy-bot-token": "xo" + "xb-" + chars(12, DIGITS) + "-" + chars(24, ALNUM),
    "slack-legacy-workspace-token": "xo" + "xa-2-" + chars(36, ALNUM),
    "slack-config-access-token": "xo" + "xe.xoxp-1-" + chars(165, UPPER_ALNUM),
    "slack-config-refresh-token": "xo" + "xe-1-" + chars(146, UPPER_ALNUM),
    "slack-webhook-url": ("https://hooks.slack" + ".com/services/T" + chars(10, UPPER_ALNUM) + "/B"
                          + chars(10, UPPER_ALNUM) + "/" + chars(24, ALNUM)),
    "discord-webhook-url": ("https://discord.com/api/" + "webhooks/" + chars(18, DIGITS) + "/"
                            + chars(68, URLSAFE)),
    "microsoft-teams-webhook": ("https://acme.webhook" + ".office.com/webhookb2/" + _uuid() + "@" + _uuid()
                                + "/IncomingWebhook/" + chars(32, HEX) + "/" + _uuid()),
    "telegram-bot-api-token": chars(10, DIGITS) + ":AA" + chars(33, URLSAFE),
    "linear-api-key": "lin" + "_api_" + chars(40, ALNUM),
    "notion-api-token": "nt" + "n_" + chars(11, DIGITS) + chars(35, ALNUM),
    "sendgrid-api-token": "S" + "G." + chars(22, URLSAFE) + "." + chars(43, URLSAFE),
    "sendinblue-api-token": "xkey" + "sib-" + chars(64, HEX) + "-" + chars(16, ALNUM),
    "mailgun-private-api-token": "ke" + "y-" + chars(32, HEX),
    "mailgun-pub-key": "pub" + "key-" + chars(32, HEX),
    "mailchimp-api-key": chars(32, HEX) + "-us" + "14",
    "postman-api-token": "PM" + "AK-" + chars(24, HEX) + "-" + chars(34, HEX),
    "typeform-api-token": "tf" + "p_" + chars(59, URLSAFE),
    "contentful-personal-access-token": "CF" + "PAT-" + chars(43, URLSAFE),
    "beamer-api-token": "b" + "_" + chars(44, ALNUM),
    "adobe-client-secret": "p8" + "e-" + chars(32, LOWER_ALNUM),
    "intra42-client-secret": "s-s4t2" + "ud-" + chars(64, HEX),
    "grafana-api-key": "eyJrIj" + "oi" + chars(90, ALNUM),
    "grafana-cloud-api-token": "gl" + "c_" + chars(120, B64),
    "grafana-service-account-token": "gl" + "sa_" + chars(32, ALNUM) + "_" + chars(8, HEX),
    "new-relic-user-api-key": "NR" + "AK-" + chars(27, UPPER_ALNUM),
    "new-relic-insert-key": "NR" + "II-" + chars(32, URLSAFE),
    "new-relic-browser-api-token": "NR" + "JS-" + chars(19, HEX),
    "sentry-user-token": "sntry" + "u_" + chars(64, HEX),
    "sentry-org-token": _sentry_org(),
    "maxmind-license-key": chars(6, ALNUM) + "_" + chars(29, ALNUM) + "_m" + "mk",
    "langsmith-api-key": "lsv2" + "_pt_" + chars(32, HEX) + "_" + chars(10, HEX),
    "anthropic-admin-api-key": "sk" + "-ant-admin01-" + chars(93, URLSAFE) + "AA",
    "huggingface-access-token": "h" + "f_" + chars(34, UPPER + LOWER),
    "huggingface-organization-api-token": "api" + "_org_" + chars(34, UPPER + LOWER),
    "perplexity-api-key": "pp" + "lx-" + chars(48, ALNUM),
    "groq-api-key": "gs" + "k_" + chars(52, ALNUM),
    "replicate-api-token": "r" + "8_" + chars(37, ALNUM),
    "xai-api-key": "xa" + "i-" + chars(80, ALNUM),
    "stripe-webhook-secret": "wh" + "sec_" + chars(32, ALNUM),
    "square-access-token": "sq0" + "atp-" + chars(22, URLSAFE),
    "shopify-access-token": "sh" + "pat_" + chars(32, HEX),
    "shopify-custom-access-token": "sh" + "pca_" + chars(32, HEX),
    "shopify-private-app-access-token": "sh" + "ppa_" + chars(32, HEX),
    "shopify-shared-secret": "sh" + "pss_" + chars(32, HEX),
    "flutterwave-secret-key": "FLW" + "SECK-" + chars(32, HEX) + "-X",
    "flutterwave-encryption-key": "FLW" + "SECK_TEST" + chars(12, HEX),
    "flutterwave-public-key": "FLW" + "PUBK-" + chars(32, HEX) + "-X",
    "gocardless-api-token": "li" + "ve_" + chars(40, URLSAFE),
    "lob-api-key": "li" + "ve_" + chars(35, HEX),
    "lob-pub-api-key": "te" + "st_pub_" + chars(31, HEX),
    "plaid-api-token": "access-" + "sandbox-" + _uuid(),
    "shippo-api-token": "shi" + "ppo_live_" + chars(40, HEX),
    "duffel-api-token": "duf" + "fel_live_" + chars(43, URLSAFE),
    "easypost-api-token": "EZ" + "AK" + chars(54, ALNUM),
    "easypost-test-api-token": "EZ" + "TK" + chars(54, ALNUM),
    "braintree-access-token": ("access_token$" + "production$" + chars(16, LOWER_ALNUM) + "$"
                               + chars(32, HEX)),
    "twilio-api-key": "S" + "K" + chars(32, HEX),
    "1password-secret-key": ("A" + "3-" + chars(6, UPPER_ALNUM) + "-" + chars(11, UPPER_ALNUM) + "-"
                             + chars(5, UPPER_ALNUM) + "-" + chars(5, UPPER_ALNUM) + "-"
                             + chars(5, UPPER_ALNUM)),
    "1password-service-account-token": "op" + "s_eyJ" + chars(300, B64),
    "age-secret-key": "AGE-SECRET" + "-KEY-1" + chars(58, BECH32),
    "okta-access-token": "0" + "0" + chars(40, URLSAFE),
    "authress-service-client-access-key": ("sc" + "_" + chars(10, LOWER_ALNUM) + "." + chars(5, LOWER_ALNUM)
                                           + ".acc" + "_" + chars(20, LOWER_ALNUM) + "." + chars(60, B64)),
    "airtable-personnal-access-token": "pa" + "t" + chars(14, ALNUM) + "." + chars(64, HEX),
    "harness-api-key": ("pa" + "t." + chars(22, URLSAFE) + "." + chars(24, ALNUM) + "."
                        + chars(20, ALNUM)),
    "settlemint-personal-access-token": "sm" + "_pat_" + chars(16, ALNUM),
    "settlemint-application-access-token": "sm" + "_aat_" + chars(16, ALNUM),
    "settlemint-service-access-token": "sm" + "_sat_" + chars(16, ALNUM),
    "facebook-page-access-token": "EA" + "AC" + chars(140, ALNUM),
    "facebook-access-token": chars(15, DIGITS) + "|" + chars(32, URLSAFE),
    "twitter-bearer-token": "A" * 22 + chars(90, ALNUM),
    "dropbox-short-lived-api-token": "s" + "l." + chars(135, URLSAFE),
    "dropbox-long-lived-api-token": chars(11, ALNUM) + "A" * 10 + chars(43, ALNUM),
    "mapbox-api-token": "p" + "k.eyJ" + chars(60, URLSAFE) + "." + chars(22, URLSAFE),
}
SAMPLES["jwt-base64"] = base64.b64encode(_jwt().encode()).decode()
SAMPLES["putty-private-key"] = (
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy@ci\nPublic-Lines: 2\n"
    + chars(64, B64) + "\n" + chars(16, B64) + "\nPrivate-Lines: 1\n" + chars(44, B64)
    + "\nPrivate-MAC: " + chars(64, HEX))

# the part of a sample a leak would show, where it is not the whole sample
_BODIES = {
    "generic-api-key": lambda s: s.split("=", 1)[1],
    "url-credentials": lambda s: s.split("@")[0].rsplit(":", 1)[1],
    "connection-string-password": lambda s: s.split("@")[0].rsplit(":", 1)[1],
    "sidekiq-sensitive-url": lambda s: s.split("@")[0].rsplit(":", 1)[1],
    "authorization-header": lambda s: s.rsplit(" ", 1)[1],
    "curl-auth-user": lambda s: s.split(" ")[2].split(":", 1)[1],
    "nuget-config-password": lambda s: s.split('value="')[1].split('"')[0],
    "sidekiq-secret": lambda s: s.split("=", 1)[1],
    "aws-amazon-bedrock-api-key-short-lived": lambda s: s[len("bedrock-api-key-"):],
}
# where in its sample a finding starts, where that is not the sample's first character
REPORT_OFFSET = {"curl-auth-user": len("curl "), "gitlab-session-cookie": len("_")}
# TEXT rules: matched where their keyword stands, not looked for as a token of their own
TEXT_RULES = ("private-key", "authorization-header", "curl-auth-user", "nuget-config-password",
              "generic-api-key")
PREFIXED = [rule for rule in SAMPLES if rule not in TEXT_RULES and "\n" not in SAMPLES[rule]]


def secret_body(rule: str) -> str:
    """The part of a sample a leak would show: for an assignment, what follows ``=``."""
    sample = SAMPLES[rule]
    return _BODIES[rule](sample) if rule in _BODIES else sample


def in_prose(secret: str) -> str:
    """A secret the way it slips into a note: inside an ordinary sentence."""
    return f"Staging deploy works again; the credential used was {secret} (rotate it monthly)"


def _env_name(rule: str) -> str:
    return rule.split("-")[0].upper().lstrip("0123456789") or "VAULT"


# the three ways an agent writes a token down
FORMS = {
    "sentence": lambda rule, token: f"The CI job authenticates with {token} (rotated monthly).",
    "env": lambda rule, token: f"{_env_name(rule)}_API_KEY={token}",
    "json": lambda rule, token: json.dumps({f"{_env_name(rule).lower()}_token": token}),
}


def pieces(secret: str, size: int = 10) -> list[str]:
    """Every ``size``-character piece of a secret (newlines left out): no part of a
    leaked secret may show anywhere."""
    flat = secret.replace("\n", "")
    return [flat[i:i + size] for i in range(0, len(flat) - size + 1)]


def shows_part(text: str, secret: str, size: int = 10) -> list[str]:
    """The pieces of ``secret`` that ``text`` shows (empty: none)."""
    return [p for p in pieces(secret, size) if p in text]


# --- high-entropy values next to a credential word -------------------------------------------

KEYWORD_NAMES = ["API_KEY", "SECRET_KEY", "AUTH_TOKEN", "client_secret", "DB_PASSWORD", "passwd", "pwd",
                 "credentials", "access_token", "apiKey", "x-api-key", "webhook_secret", "SIGNING_KEY",
                 "refresh_token", "private_key", "session_secret", "admin_password", "auth", "token",
                 "secret", "password", "accessKey", "botToken", "encryption_key", "DEPLOY_KEY"]
_VALUE_KINDS = [(ALNUM, 16), (ALNUM, 24), (ALNUM, 40), (HEX, 32), (HEX, 40), (HEX, 64), (B64, 40),
                (URLSAFE, 32), (URLSAFE, 43), (PASSWORD_CHARS, 12), (PASSWORD_CHARS, 20)]
KEYWORD_FORMS = {
    "colon": "{name}: {value}",
    "equals": "{name}={value}",
    "json": '{{"{name}": "{value}"}}',
    "is": "The staging {name} is {value}",
}
# (form, name, value, text): every name in every form, values of every kind in turn
KEYWORD_CASES: list[tuple[str, str, str, str]] = []
for _i, _name in enumerate(KEYWORD_NAMES):
    for _j, (_form, _template) in enumerate(KEYWORD_FORMS.items()):
        for _k in range(3):
            _alphabet, _size = _VALUE_KINDS[(_i * 12 + _j * 3 + _k) % len(_VALUE_KINDS)]
            _value = chars(1, ALNUM) + chars(_size - 1, _alphabet)
            KEYWORD_CASES.append((_form, _name, _value, _template.format(name=_name, value=_value)))


# --- ordinary notes: none may be flagged -------------------------------------------------------

def _png_data_uri(size: int) -> str:
    raw = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + bytes(_rng.randrange(256) for _ in range(size))
    return "data:image/png;base64," + base64.b64encode(raw).decode()


def _hex(n: int) -> str:
    return chars(n, HEX)


_BCRYPT = "$2b$12$" + chars(53, ALNUM + "./")

ORDINARY_NOTES: dict[str, str] = {
    # commit ids, digests, checksums
    "commit hash": "Fixed in 3f2a91c0d4e5b6a7980112233445566778899aabb, see the PR",
    "commit hash upper": "Reverted 3F2A91C0D4E5B6A7980112233445566778899AABB",
    "short hash": "Regression came with 3f2a91c; bisected to e5439d9",
    "tag commit": f"git tag v2.14.0 points at commit {_hex(40)}; the changelog is in CHANGES.md",
    "merge base": f"Merge base with main is {_hex(40)}; rebase the feature branch onto it",
    "image digest": f"Image pinned to ghcr.io/acme/api@sha256:{_hex(64)} after the CVE fix",
    "tarball sha256": f"The release tarball's SHA-256 is {_hex(64)}; verify it before deploying",
    "sha512": f"sha512 of the wheel: {_hex(128)}",
    "npm integrity": f"lockfile integrity for left-pad is sha512-{chars(86, B64)}==",
    "pip hash": f"requirements.txt pins it with --hash=sha256:{_hex(64)}",
    "docker layer": f"Layer sha256:{_hex(64)} is 412 MB; split the model download out of it",
    "md5 export": f"MD5 of the export: {_hex(32)} (matches the vendor's)",
    "sourcemap": "Sourcemap uploaded: main.3f2a91c0.js.map (1.2 MB)",
    "git blame": f"git blame says {_hex(12)} (Ana, 2026-10-02) introduced the off-by-one",
    # ids and UUIDs
    "uuid": "Run id 123e4567-e89b-12d3-a456-426614174000 failed at the upload step",
    "request uuid": f"Request {_uuid()} returned 502 from the gateway twice",
    "tenant uuids": f"Tenant ids {_uuid()} and {_uuid()} were migrated last; both are on shard 7",
    "trace ids": f"Trace {_hex(32)} span {_hex(16)} shows the retry storm",
    "traceparent": f"traceparent: 00-{_hex(32)}-{_hex(16)}-01 is propagated by the gateway",
    "idempotency key": f"idempotency key: {_uuid()} was replayed by the client after the timeout",
    "cache key prose": "cache key users:v2:1234:profile is invalidated on every write",
    "cache key set": "Set the cache key to tenant-42/users/v3 after the migration",
    "object key": f"S3 object key: uploads/2026/11/30/{_uuid()}.pdf was missing after the purge",
    "instance id": "Instance i-0abcd1234efab5678 was terminated by the ASG at 03:12 UTC",
    "vpc": "AWS account 123456789012, region eu-west-1, VPC vpc-0a1b2c3d4e5f67890",
    "ticket": "Jira ticket PAY-1234 tracks the token leak postmortem",
    "mac address": "MAC 00:1A:2B:3C:4D:5E is the build agent's NIC",
    "ipv6": "IPv6 2001:db8::8a2e:370:7334 is the documentation address we test with",
    "timestamp": "Timestamps are stored as 2026-11-30T12:00:00.000Z (UTC) everywhere",
    # base64 blobs and images
    "base64 snippet": "The header decodes from dGhpcyBpcyBhIHRlc3Qgb2YgYmFzZTY0IGVuY29kaW5n",
    "base64 with padding": "Body was eyJ1c2VyIjoiYWxpY2UiLCJyb2xlIjoiYWRtaW4ifQ== before the fix",
    "png data uri": f"Logo inlined as {_png_data_uri(180)} in the email template",
    "png data uri large": f"Chart snapshot {_png_data_uri(600)}",
    "ico data uri": "Favicon: data:image/x-icon;base64," + base64.b64encode(
        bytes(22) + bytes(_rng.randrange(256) for _ in range(90)) + bytes(40)).decode(),
    "jpeg header": "JPEG starts with /9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8U",
    "hello base64": "base64 of 'hello world' is aGVsbG8gd29ybGQ= (for the codec test)",
    # fingerprints and public keys
    "ssh fingerprint": "SSH host key fingerprint: SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    "gpg key id": f"GPG key 3AA5C34371567BD2 signs the releases; fingerprint {chars(40, HEX_UPPER)}",
    "tls fingerprint": "The TLS cert fingerprint is " + ":".join(chars(2, HEX_UPPER) for _ in range(20)),
    "ssh public key": f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{chars(43, B64)} deploy@ci",
    "public key line": f"Public key: ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{chars(200, B64)} ci@build",
    "public pem": "-----BEGIN PUBLIC KEY----- blocks are fine to store; private ones are not",
    "certificate": "-----BEGIN CERTIFICATE----- chains go in certs/, not in memory",
    "pgp public": "Import the team's -----BEGIN PGP PUBLIC KEY BLOCK----- from keys/team.asc",
    # ARNs and cloud resource names
    "role arn": "Deploy role arn:aws:iam::123456789012:role/ci-deploy assumes into prod",
    "secret arn": "Secret lives at arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-aB3xYz",
    "s3 arn": "Bucket policy grants s3:GetObject on arn:aws:s3:::acme-artifacts/*",
    "kms arn": f"KMS key arn:aws:kms:eu-west-1:123456789012:key/{_uuid()} encrypts the backups",
    "gcp service account": "Service account: ci-deployer@acme-prod.iam.gserviceaccount.com",
    "azure resource": ("Resource /subscriptions/" + _uuid() + "/resourceGroups/prod-rg/providers/"
                       "Microsoft.Storage/storageAccounts/acmeprodlogs"),
    "s3 url": "Artifact: s3://acme-artifacts/releases/2026.11.30/app.tar.gz",
    # URLs with query strings
    "url with query": "https://example.com/search?q=upload+timeout&page=2&sort=desc",
    "url with many params": "https://grafana.internal/d/abc123/uploads?orgId=1&from=now-6h&to=now&var-host=web-03",
    "datadog url": ("Dashboard: https://app.datadoghq.com/dashboard/abc-123-def?from_ts=1732950000000"
                    "&to_ts=1732953600000&live=true"),
    "oauth callback": (f"OAuth callback: https://app.acme.dev/auth/callback?code={chars(20, ALNUM)}"
                       f"&state={chars(16, ALNUM)} (single use, already redeemed)"),
    "search url": "Search link https://www.google.com/search?q=python+token+bucket+rate+limiter&hl=en",
    "compare url": "GitHub compare: https://github.com/acme/api/compare/v2.13.0...v2.14.0",
    "sentry url": "Sentry issue https://acme.sentry.io/issues/4412345678/?project=1234567&query=is%3Aunresolved",
    "page token doc": "API docs say to paginate with ?page_token=<opaque> until next_page_token is empty",
    "grafana refresh": "Grafana panel https://grafana.internal/d/uploads?orgId=1&var-env=prod&refresh=30s",
    "reset url": "Password reset links look like https://app.acme.dev/reset?token=abc&user=1 in the tests",
    "redis url": "Celery broker url: redis://redis:6379/0",
    "sentry dsn": "DSN: https://public@o123.ingest.sentry.io/456 (the public key is fine to share)",
    "git remote": "git remote: git@github.com:acme/api.git",
    "ssh remote": "ssh://git@gitlab.acme.dev:2222/platform/infra.git is the mirror",
    # ${VAR}-style references
    "github token ref": "CI passes the token as ${GITHUB_TOKEN}; never echo it",
    "actions secret": "The workflow uses token: ${{ secrets.GITHUB_TOKEN }} for the release step",
    "npm token ref": "Set NPM_TOKEN=${NPM_TOKEN} in the publish job env",
    "docker login": "docker login -u $DOCKER_USER -p $DOCKER_PASSWORD registry.acme.dev",
    "vault subshell": "export AWS_SECRET_ACCESS_KEY=$(vault kv get -field=secret aws/ci)",
    "default expansion": "password: ${DB_PASSWORD:-postgres} in docker-compose.yml",
    "windows var": "Use %APPDATA%\\acme\\token.json on Windows",
    "placeholder ${TOKEN}": "token=${TOKEN}",
    "placeholder export": "export API_KEY=${API_KEY}",
    "elastic env": "curl -u elastic:$ELASTIC_PASSWORD https://localhost:9200/_cat/indices",
    "bearer env": "Call it with -H 'Authorization: Bearer $API_TOKEN'",
    "template password": ("Connection string template: Server=tcp:{server}.database.windows.net;"
                          "Password={your_password};"),
    "kubectl literal": "kubectl create secret generic db --from-literal=password=\"$(pwgen 24 1)\"",
    # documentation placeholders
    "placeholder EXAMPLE": "api_key=EXAMPLE_KEY_1234567890",
    "placeholder REDACTED": "token=REDACTED_REDACTED",
    "placeholder YOUR_API_KEY_HERE": "api_key=YOUR_API_KEY_HERE",
    "placeholder $VAR": "password=$DB_PASSWORD",
    "placeholder %VAR%": "password=%DB_PASSWORD%",
    "placeholder <token>": "token=<token>",
    "placeholder {secret}": "secret={secret}",
    "placeholder stars": "password=********",
    "placeholder xxx": "token=xxxxxxxxxxxxxxxx",
    "placeholder changeme": "password=changeme123",
    "placeholder aws docs": "AK" + "IAIOSFODNN7" + "EXAMPLE",
    "aws docs pair": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCY" + "EXAMPLEKEY",
    "aws docs key id": "Example key id: AK" + "IAI44QH8DHB" + "EXAMPLE",
    "placeholder ellipsis": "Set sk-... and ghp_... from the vault",
    "placeholder json": '{"api_key": "<your key>", "token": "${TOKEN}"}',
    "openai placeholder": "Set OPENAI_API_KEY=sk-...xxxx in .env (the real one is in 1Password)",
    "github format": "gh" + "p_" + "x" * 36 + " is the format GitHub uses for classic tokens",
    "slack format": "Slack bot tokens look like xoxb-<workspace>-<bot>-<secret>",
    "your api key": "Replace YOUR_API_KEY in config.yaml before running the examples",
    "stripe format": "Stripe keys look like sk_live_... and sk_test_...; we only use restricted keys",
    "readme database url": "postgres://user:password@localhost:5432/app is the default DATABASE_URL in the README",
    "local postgres": "Local dev: postgres://postgres:postgres@localhost:5432/acme_dev",
    "compose redis": "redis://:changeme@localhost:6379/0 in docker-compose.yml",
    "rabbit guest": "amqp://guest:guest@localhost:5672/ for the local RabbitMQ",
    "mongo example": "mongodb://root:example@mongo:27017/ (from the official image docs)",
    "curl docs url": "https://user:pass@example.com is the curl docs example",
    "bearer doc": "Authorization: Bearer <token> is the header our API expects",
    "curl admin": "curl -u admin:admin http://localhost:9200 works only on the dev cluster",
    "jwt doc": "The JWT looks like eyJhbGciOi...; decode it at jwt.io, never paste real ones",
    "aiza prefix": "Google API keys start with AIza; ours is restricted by HTTP referrer",
    "glpat prefix": "GitLab PATs start with glpat- and expire after 90 days",
    "anthropic prefix": "Anthropic keys are sk-ant-api03-…; rotate them via the console",
    "azure format": "Client secrets look like abc8Q~... and expire after 24 months",
    "stripe log": "Logged 'Invalid API key provided: sk_test_****' from Stripe",
    "github prefixes": "GitHub's token prefix list: ghp_, gho_, ghu_, ghs_, ghr_, github_pat_",
    "key id prefix": "The key rotation job (keyrotator) logs only key ids like key-2026-11",
    # prose about passwords, tokens and keys
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
    "reset emails": "Password reset emails now expire after 30 minutes instead of 24 hours",
    "policy prose": "The password policy requires 12+ characters and one symbol",
    "rotation runbook": "Rotate the DB password every 90 days; the runbook is in docs/runbooks/db.md",
    "refresh timing": "Token refresh happens 5 minutes before expiry (see auth/refresh.py:88)",
    "vault location": "The API key is stored in Vault under secret/data/billing/stripe",
    "sidecar": "secrets are injected by the sidecar, not by env vars",
    "oauth proxy": "auth: oauth2-proxy in front of grafana",
    "token type": "token_type: Bearer, expires_in: 3600",
    "grant type": "grant_type=client_credentials&scope=read:orders",
    "cookie": "The session cookie is HttpOnly and SameSite=Lax",
    "scanning": "Secret scanning runs on every push; see .github/workflows/secrets.yml",
    "passwordless": "Use passwordless login via WebAuthn for the admin panel",
    "key insight": "The key insight: retries must be idempotent, or the queue duplicates charges",
    "primary key": "Primary key: (tenant_id, order_id); secondary index on created_at",
    "key value": "Key: value pairs in the config are case-sensitive",
    "token bucket": "The token bucket allows 100 requests per second with a burst of 20",
    "tokenizer": "Tokenizer: cl100k_base; average 3.8 characters per token",
    "aws credentials file": "Credentials are read from ~/.aws/credentials (profile: ci)",
    "secret path": "the secret: kv/prod/payments",
    "secret name": "secret_name: prod/db/password",
    "hash algorithm": "password_hash column uses argon2id; old rows are bcrypt ($2b$12$...)",
    "bcrypt row": f"User password hashes look like {_BCRYPT} in the users table",
    "bcrypt assignment": f"password_hash = '{_BCRYPT}'",
    "pbkdf2": "Stored the PBKDF2 digest (pbkdf2_sha256$600000$salt$hash) in the users table",
    "signature header": f"The webhook signature header is X-Hub-Signature-256: sha256={_hex(64)}",
    "hmac length": "HMAC key length is 32 bytes; generate one with openssl rand -hex 32",
    "jwt secret bits": "The JWT secret must be at least 256 bits",
    "bearer lifetime": "Bearer tokens expire after 15 minutes; refresh tokens after 30 days",
    "basic disabled": "Authorization: Basic auth is disabled on the public endpoints",
    "robot account": "We authenticate to the registry with a robot account (see ops/registry.md)",
    "oidc": "The pipeline's auth step uses OIDC federation; no long-lived keys anywhere",
    "session secret": "Changed the session secret length from 32 to 64 bytes",
    "webhook rotation": "Webhook secrets rotate with the deploy keys",
    "npm token prose": "npm token: stored in the CI secret store as NPM_TOKEN",
    "k8s secret": "Kubernetes secret name: payments-db-credentials (namespace payments)",
    "build cache key": "The build cache key is hash(lockfile) + os + arch",
    "feature flag key": "Feature flag key: checkout.new-tax-engine (default off)",
    "s3 key prose": "The S3 key for the nightly dump is backups/db/2026-11-30.sql.gz",
    "tf state key": "The Terraform state key is envs/prod/terraform.tfstate",
    "regex keys": "regex for keys: ^[A-Z0-9]{20}$ (we validate AWS key ids with it)",
    "secrets module": "Python: secrets.token_urlsafe(32) generates the invite codes",
    "os environ": "Use os.environ['API_KEY'] instead of hard-coding it",
    "settings secret": "settings.SECRET_KEY comes from the environment in prod",
    "process env": "const apiKey = process.env.STRIPE_KEY;",
    "get token call": "config.token = getToken(user)",
    "nginx header": "Nginx: proxy_set_header Authorization $http_authorization;",
    "pull secret": "K8s: the image pull secret is regcred (dockerconfigjson)",
    "vault path prose": "Vault path secret/data/ci/github holds the app's private key",
    "signing secret prose": "Rotated the Stripe webhook endpoint; the signing secret is in 1Password",
    "openapi": "OpenAPI spec: components.securitySchemes.bearerAuth (type: http, scheme: bearer)",
    "csrf prose": "The CSRF token is a per-session random value sent as X-CSRF-Token",
    "csrf value": f"csrf_token: {_hex(32)}",
    "null token": 'The API returns {"token": null} when the session expired',
    "redacted response": 'Response body: {"access_token": "<redacted>", "expires_in": 3600}',
    "password length": "The password field accepts 8-128 characters",
    "token budget": "Token budget for the planner: 1500000 tokens per day",
    "commit message": "Commit message: 'Rotate tokens; remove hard-coded password from tests'",
    "openssl": "Use `openssl rand -base64 32` to make a new secret; store it in Vault, not here",
    "dotenv": "OPENAI_API_KEY is read from .env by python-dotenv at start-up",
    "tokens table": "The tokens table has 1.2M rows; we prune expired tokens nightly",
    "keys benchmark": "Benchmarks: 1,000 keys in 4.2 ms; 100,000 keys in 380 ms",
    "png bytes": "The PNG header bytes are 89 50 4E 47 0D 0A 1A 0A",
    "prose empty secret": "The client secret field was empty in the staging config, hence the 401",
    "credential helper": "git config credential.helper store keeps the PAT in ~/.git-credentials",
    # ordinary technical notes
    "numbers": "p95 went from 1830ms to 412ms after raising the pool to 20",
    "markdown table": "| key | value |\n|-----|-------|\n| timeout | 30s |",
    "json config": '{"timeout": 30, "retries": 5, "pool": {"size": 20}}',
    "version line": "version: 3.12.1, build: 20261130.4, commit: 8c1d2e3",
    "health check": "The health check hits /healthz every 10s with a 2s timeout",
    "email": "Email ops@acme.dev if the token refresh fails again",
    "cron": "Cron: 0 */6 * * * runs the token cleanup",
    "icu": "Locale strings use ICU message format {count, plural, one {# item} other {# items}}",
    "slack channel": "Slack channel #deploys gets the release notes",
    "hash ring": "Hash ring uses 160 virtual nodes per shard",
    "python traceback": ('File "/app/src/billing/invoice.py", line 212, in render\n'
                         '    total = sum(line.amount for line in lines)\nTypeError: unsupported operand'),
    "k8s yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: 3",
    "sql": "SELECT id, created_at FROM orders WHERE status = 'pending' AND created_at < now() - interval '1 day'",
    "shell pipeline": "kubectl get pods -n payments -o jsonpath='{.items[*].metadata.name}' | xargs -n1 kubectl logs",
    "long identifier": "test_upload_retries_when_the_presigned_url_expired_mid_transfer is flaky",
    "snake case": "Renamed refresh_access_token_if_needed to ensure_fresh_token in auth/session.py",
    "camel case": "The frontend calls useAuthTokenRefresh() from src/hooks/useAuthTokenRefresh.ts",
    "dotted config": "Set spring.datasource.hikari.maximumPoolSize=20 in application.properties",
    "java package": "com.acme.billing.infrastructure.persistence.InvoiceRepositoryImpl is the slow one",
    "terraform": 'resource "aws_secretsmanager_secret" "db" { name = "prod/db/credentials" }',
    "ansible": "ansible-vault encrypt group_vars/prod/vault.yml before committing",
    "helm": "helm upgrade api charts/api --set image.tag=2026.11.30-3f2a91c --set replicaCount=3",
    "semver range": "Pinned cryptography>=42.0.4,<43 because of the OpenSSL 3.2 change",
    "percent encoded": "The query was q=caf%C3%A9%20cr%C3%A8me&lang=fr-FR when it failed",
    "unicode prose": "Déploiement réussi → la clé API est dans le coffre, pas ici (voir runbook §3)",
    "emoji prose": "✅ token rotation done; 🔑 keys live in Vault; nothing pasted here",
    "long url": ("https://console.cloud.google.com/logs/query;query=resource.type%3D%22k8s_container%22%0A"
                 "resource.labels.namespace_name%3D%22payments%22;timeRange=PT1H?project=acme-prod-381212"),
    "grpc error": "rpc error: code = Unauthenticated desc = invalid token (the client clock was 6 min fast)",
    "http log": '10.0.3.17 - - [30/Nov/2026:12:00:01 +0000] "GET /api/v2/orders?limit=50 HTTP/1.1" 200 5123',
}


def ctx_scan_exe() -> Path:
    """The installed console script ``ctx-scan`` (the pre-commit framework's entry)."""
    return Path(sys.executable).parent / "ctx-scan"


def manual_commit(root: Path, *args: str, message: str = "manual edit"):
    """The real git CLI, as the operator would commit by hand (hooks run)."""
    return git(root, "-c", "user.name=Hand Operator", "-c", "user.email=hand@example.invalid",
               "commit", "-m", message, *args, check=False)
