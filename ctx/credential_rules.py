"""The credential rule table (§11), as data, and ``Rule``, one row made usable:
``ctx.credentials`` scans with them, ``ctx.credentialindex`` indexes their keywords.

One row per kind of credential::

    (id, description, keywords, expression, entropy floor[, check[, scope]])

- **id**: gitleaks' rule id where gitleaks has the kind (config/gitleaks.toml),
  so a finding can be looked up there; otherwise a name of ours.
- **description**: what a refusal calls it ("a GitLab deploy token").
- **keywords**: lower-case substrings; the expression runs only where one occurs.
- **expression**: our own regular expression (written from the providers'
  documented formats: prefix, length, alphabet), compiled on first use.
- **entropy floor**: the least Shannon entropy (bits a character) the found
  secret must have, so ``ghp_000…`` or a run of one letter is not a token.
- **check**: the name of a function in ``ctx.credentials`` that looks further
  (a JWT's header decodes, a URL's password is not ``password``…).
- **scope**: ``RUN`` (the default): the credential is one unbroken run of at
  least ``MIN_RUN`` token characters, and its keywords are looked for only in
  such runs, where a word starts (prose is never searched for them);
  ``TEXT``: the keyword may stand anywhere and the expression is matched
  where it stands (a PEM header, ``Authorization: Bearer …``, ``password: …``).

Nothing here is compiled or imported: loading the table costs a few tuples, and a
``Rule`` compiles its expression when it is first matched.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

RUN = "run"
TEXT = "text"
MIN_RUN = 16  # every RUN credential is at least this long (a slack legacy token is the shortest)
# RUN keywords are looked for where a word starts (after anything but a letter or digit),
# except these, which stand inside a word, and any keyword that starts with punctuation
MID_KEYWORDS = ("q~", "a" * 10)
# ... and these start a word, but the credential starts before them: its run is searched
SEARCH_KEYWORDS = ("atlasv1",)
# ... and these, though punctuation, start the expression (a URL's scheme is looked behind)
ANCHORED_KEYWORDS = ("://",)
# TEXT keywords are looked for with one bytes.find each, except those that hold one of these,
# looked for only where it stands
PROBE_PARENTS = ("----",)
# what a text must hold (any one of these, lower-case) for a TEXT rule's expression to match
# in it at all: its keywords stand in much prose ("key", "token"), the assignment or the
# " is " that must follow one does not ("the issue"), and then the expression is not compiled
NEEDS = {"generic-api-key": ("=", ":", *(lead + verb + trail for verb in ("is", "was", "are", "were")
                                        for lead in " \t" for trail in " \t"))}  # " is ", "\twas "...

_L = r"(?<![A-Za-z0-9])"   # not glued to a letter or digit on the left
_R = r"(?![A-Za-z0-9])"    # nor on the right
_LW = r"(?<![A-Za-z0-9_-])"
_RW = r"(?![A-Za-z0-9_-])"
_B64 = r"[A-Za-z0-9+/]"
_URLSAFE = r"[A-Za-z0-9_-]"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


# a URL's user and password, matched from its "://" (the scheme is checked behind it)
_USERINFO = r"://([^\s:/?#@\"'<>]{0,128}):([^\s/?#\"'<>]{1,256})@(?=[A-Za-z0-9\[])"
# the schemes of databases and brokers (connection-string-password); any other is a URL's
DB_SCHEMES = frozenset("""postgres postgresql mysql mariadb mongodb mongodb+srv redis rediss amqp amqps
mssql sqlserver oracle cockroachdb clickhouse couchdb neo4j neo4j+s nats mqtt mqtts cassandra db2
snowflake kafka jdbc:postgresql jdbc:mysql jdbc:mariadb jdbc:sqlserver jdbc:oracle""".split())

TABLE = (
    # --- private keys, JWTs, URLs and headers --------------------------------------------------
    ("private-key", "a private key", ("-----begin", "---- begin"),
     r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"
     r"|---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----", None, None, TEXT),
    ("putty-private-key", "a PuTTY private key", ("putty-user-key-file-",),
     r"PuTTY-User-Key-File-[23]: (?:ssh-|ecdsa-)[A-Za-z0-9-]{1,40}"),   # a .ppk file's first line
    ("jwt", "a JSON web token", ("eyj",),
     _LW + r"eyJ[A-Za-z0-9_-]{10,4096}\.ey[A-Za-z0-9_-]{10,8192}\.[A-Za-z0-9_-]{0,1024}", 3.0, "jwt"),
    ("jwt-base64", "a base64-encoded JSON web token", ("zxlk",),
     _L + r"ZXlK[A-Za-z0-9+/]{40,16384}={0,2}", 3.0, "jwt_base64"),
    ("url-credentials", "a URL with a password in it", ("://",), _USERINFO, None, "url"),
    ("connection-string-password", "a database or broker connection string with a password",
     ("://",), _USERINFO, None, "db_url"),
    ("authorization-header", "an Authorization header with a credential", ("authorization", "bearer"),
     r"(?i)(?:authorization[\"']?[ \t]{0,16}[:=][ \t]{0,16}[\"']?"
     r"(?:(bearer|token|basic|apikey|api-key|sso-key|digest)[ \t]{1,16})?|bearer[ \t]{1,16})"
     r"([A-Za-z0-9._~+/=:-]{8,500})", None, "header", TEXT),
    ("curl-auth-user", "a user and password on a command line (-u user:password)", ("-u",),
     r"-(?:user|u)(?:[ \t]{1,16}|=)[\"']?([^\s:\"'$]{1,128}):([^\s\"']{1,256})", None, "cli_user", TEXT),
    ("nuget-config-password", "a password in a NuGet config", ("<add key=",),
     r"(?i)<add key=\"(?:cleartext)?password\"[ \t]{0,10}value=\"([^\"]{8,256})\"", 2.0, None, TEXT),
    ("generic-api-key", "a password, token or secret assignment",
     ("pass", "pwd", "secret", "token", "key", "auth", "cred"),
     r"(?ai)(?:pass(?:word|wd|phrase)?|pwd|secret|token|key|auth|cred(?:ential)?s?)"
     r"(?P<tail>[\w.-]{0,40}+)"
     r"(?:[\"']?[ \t]{0,16}(?::=|=>|=)[ \t]{0,16}|[\"']?[ \t]{0,16}:(?:[ \t]{1,16}|(?=[\"'`]))"
     r"|(?P<prose>(?:[ \t]{1,16}(?:for|of|on|to|in|at)[ \t]{1,16}(?:the[ \t]{1,16})?[\w./-]{1,40})?[ \t]{1,16}"
     r"(?:is|was|are|were)(?:[ \t]{1,16}(?:set[ \t]{1,16}to|now))?:?[ \t]{1,16}))"
     r"(?:\"(?P<v1>[^\"\s]{8,200})\"|'(?P<v2>[^'\s]{8,200})'|`(?P<v3>[^`\s]{8,200})`"
     r"|(?P<v4>[^\s\"'`<>(){}\[\],;]{8,200}))", None, "generic", TEXT),

    # --- cloud providers -----------------------------------------------------------------------
    ("aws-access-token", "an AWS access key id", ("akia", "asia", "abia", "acca", "a3t"),
     _L + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}" + _R, 3.0),
    ("aws-amazon-bedrock-api-key-long-lived", "an Amazon Bedrock API key (long-term)", ("absk",),
     _L + r"ABSK" + _B64 + r"{109,269}={0,2}", 3.0),
    ("aws-amazon-bedrock-api-key-short-lived", "an Amazon Bedrock API key (short-term)",
     ("bedrock-api-key-",),
     r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%]{20,4096}", 3.0),
    ("gcp-api-key", "a Google API key", ("aiza",), r"AIza" + _URLSAFE + r"{35}", 3.0),
    ("google-oauth-client-secret", "a Google OAuth client secret", ("gocspx-",),
     r"GOCSPX-" + _URLSAFE + r"{28}", 3.0),
    ("google-oauth-access-token", "a Google OAuth access token", ("ya29.",),
     _L + r"ya29\." + _URLSAFE + r"{30,2048}", 3.5),
    ("azure-ad-client-secret", "an Azure AD client secret", ("q~",),
     r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])", 3.0),
    ("alibaba-access-key-id", "an Alibaba Cloud AccessKey id", ("ltai",),
     _L + r"LTAI[A-Za-z0-9]{20}" + _R, 3.0),
    ("digitalocean-pat", "a DigitalOcean personal access token", ("dop_v1_",),
     r"dop_v1_[a-f0-9]{64}", 3.0),
    ("digitalocean-access-token", "a DigitalOcean OAuth access token", ("doo_v1_",),
     r"doo_v1_[a-f0-9]{64}", 3.0),
    ("digitalocean-refresh-token", "a DigitalOcean OAuth refresh token", ("dor_v1_",),
     r"dor_v1_[a-f0-9]{64}", 3.0),
    ("flyio-access-token", "a Fly.io token", ("fo1_", "fm1a_", "fm1r_", "fm2_"),
     _L + r"(?:fo1_" + _URLSAFE + r"{43}|fm1[ar]_" + _B64 + r"{100,2048}={0,3}|fm2_" + _B64
     + r"{100,2048}={0,3})", 4.0),
    ("heroku-api-key-v2", "a Heroku API key", ("hrku-aa",), r"HRKU-AA" + _URLSAFE + r"{58}", 4.0),
    ("scalingo-api-token", "a Scalingo API token", ("tk-us-",), r"tk-us-" + _URLSAFE + r"{48}", 3.0),
    ("cloudflare-origin-ca-key", "a Cloudflare Origin CA key", ("v1.0-",),
     _L + r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}" + _R, 3.0),
    ("hashicorp-tf-api-token", "a Terraform Cloud API token", ("atlasv1",),
     _L + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}(?![A-Za-z0-9_=-])", 3.5),
    ("vault-service-token", "a HashiCorp Vault service token", ("hvs.", "s."),
     _L + r"(?:hvs\." + _URLSAFE + r"{90,120}|s\.[A-Za-z0-9]{24})" + _RW, 3.5, "vault"),
    ("vault-batch-token", "a HashiCorp Vault batch token", ("hvb.",),
     _L + r"hvb\." + _URLSAFE + r"{138,300}", 4.0),
    ("yandex-api-key", "a Yandex Cloud API key", ("aqvn",),
     _L + r"AQVN" + _URLSAFE + r"{35,38}" + _RW, 3.5),
    ("yandex-aws-access-token", "a Yandex Cloud static key", ("yc",),
     _L + r"YC" + _URLSAFE + r"{38}" + _RW, 3.5, "mixed_case"),
    ("yandex-access-token", "a Yandex OAuth token", ("t1.",),
     _L + r"t1\.[A-Za-z0-9_-]{1,300}={0,2}\.[A-Za-z0-9_-]{86}={0,2}", 3.0),
    ("openshift-user-token", "an OpenShift user token", ("sha256~",),
     r"sha256~" + _URLSAFE + r"{43}", 3.5),
    ("databricks-api-token", "a Databricks API token", ("dapi",),
     _L + r"dapi[a-f0-9]{32}(?:-\d)?" + _R, 3.0),
    ("dynatrace-api-token", "a Dynatrace API token", ("dt0c01.",),
     r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", 4.0),
    ("tailscale-api-key", "a Tailscale key", ("tskey-",),
     r"tskey-[a-z]{3,10}-[A-Za-z0-9]{6,64}-[A-Za-z0-9]{16,128}", 3.0),
    ("doppler-api-token", "a Doppler token",
     ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
     r"dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,44}" + _R, 3.0),
    ("pulumi-api-token", "a Pulumi access token", ("pul-",), _L + r"pul-[a-f0-9]{40}" + _R, 3.0),
    ("infracost-api-token", "an Infracost API token", ("ico-",), _L + r"ico-[A-Za-z0-9]{32}" + _R, 3.0),
    ("planetscale-api-token", "a PlanetScale service token", ("pscale_tkn_",),
     r"pscale_tkn_[A-Za-z0-9_=.-]{32,64}", 3.0),
    ("planetscale-oauth-token", "a PlanetScale OAuth token", ("pscale_oauth_",),
     r"pscale_oauth_[A-Za-z0-9_=.-]{32,64}", 3.0),
    ("planetscale-password", "a PlanetScale password", ("pscale_pw_",),
     r"pscale_pw_[A-Za-z0-9_=.-]{32,64}", 3.0),
    ("supabase-access-token", "a Supabase access token", ("sbp_",), _L + r"sbp_[a-f0-9]{40}" + _R, 3.0),
    ("clickhouse-cloud-api-secret-key", "a ClickHouse Cloud API secret", ("4b1d",),
     _L + r"4b1d[A-Za-z0-9]{38}" + _R, 3.0),

    # --- source hosting, CI and package registries ------------------------------------------------
    ("github-pat", "a GitHub personal access token", ("ghp_",), r"ghp_[0-9A-Za-z]{36}", 3.0),
    ("github-oauth", "a GitHub OAuth token", ("gho_",), r"gho_[0-9A-Za-z]{36}", 3.0),
    ("github-app-token", "a GitHub app token", ("ghu_", "ghs_"), r"(?:ghu|ghs)_[0-9A-Za-z]{36}", 3.0),
    ("github-refresh-token", "a GitHub refresh token", ("ghr_",), r"ghr_[0-9A-Za-z]{36}", 3.0),
    ("github-fine-grained-pat", "a GitHub fine-grained token", ("github_pat_",),
     r"github_pat_[0-9A-Za-z_]{22,255}", 3.0),
    ("gitlab-pat", "a GitLab personal access token", ("glpat-",), r"glpat-" + _URLSAFE + r"{20,300}", 3.0),
    ("gitlab-pat-routable", "a GitLab personal access token (routable)", ("glpat-",),
     r"glpat-" + _URLSAFE + r"{27,300}\.[0-9a-z]{2}[0-9a-z]{7}" + _R, 3.0),
    ("gitlab-deploy-token", "a GitLab deploy token", ("gldt-",), r"gldt-" + _URLSAFE + r"{20}", 3.0),
    ("gitlab-runner-authentication-token", "a GitLab runner authentication token", ("glrt-",),
     r"glrt-" + _URLSAFE + r"{20}", 3.0),
    ("gitlab-runner-authentication-token-routable",
     "a GitLab runner authentication token (routable)", ("glrt-",),
     r"glrt-t\d_" + _URLSAFE + r"{27,300}\.[0-9a-z]{2}[0-9a-z]{7}" + _R, 3.0),
    ("gitlab-feed-token", "a GitLab feed token", ("glft-",), r"glft-" + _URLSAFE + r"{20}", 3.0),
    ("gitlab-cicd-job-token", "a GitLab CI/CD job token", ("glcbt-",),
     r"glcbt-[0-9A-Za-z]{1,5}_" + _URLSAFE + r"{20}", 3.0),
    ("gitlab-feature-flag-client-token", "a GitLab feature flag client token", ("glffct-",),
     r"glffct-" + _URLSAFE + r"{20}", 3.0),
    ("gitlab-incoming-mail-token", "a GitLab incoming mail token", ("glimt-",),
     r"glimt-" + _URLSAFE + r"{25}", 3.0),
    ("gitlab-kubernetes-agent-token", "a GitLab Kubernetes agent token", ("glagent-",),
     r"glagent-" + _URLSAFE + r"{50}", 3.0),
    ("gitlab-oauth-app-secret", "a GitLab OAuth application secret", ("gloas-",),
     r"gloas-" + _URLSAFE + r"{64}", 3.0),
    ("gitlab-ptt", "a GitLab pipeline trigger token", ("glptt-",), r"glptt-[0-9a-f]{40}", 3.0),
    ("gitlab-rrt", "a GitLab runner registration token", ("gr1348941",),
     r"GR1348941" + _URLSAFE + r"{20}", 3.0),
    ("gitlab-scim-token", "a GitLab SCIM token", ("glsoat-",), r"glsoat-" + _URLSAFE + r"{20}", 3.0),
    ("gitlab-session-cookie", "a GitLab session cookie", ("gitlab_session=",),
     r"gitlab_session=[0-9a-z]{32}", 3.0),
    ("sourcegraph-access-token", "a Sourcegraph access token", ("sgp_",),
     _L + r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}" + _R, 3.0),
    ("atlassian-api-token", "an Atlassian API token", ("atatt3",), r"ATATT3[A-Za-z0-9_=-]{186}", 3.5),
    ("npm-access-token", "an npm access token", ("npm_",), _L + r"npm_[A-Za-z0-9]{36}" + _R, 3.0),
    ("pypi-upload-token", "a PyPI upload token",
     ("pypi-ageichlwas5vcmc", "pypi-agendgvzdc5wexbplm9yzw"),
     r"pypi-Ag(?:EIcHlwaS5vcmc|ENdGVzdC5weXBpLm9yZw)" + _URLSAFE + r"{50,1000}", 3.0),
    ("rubygems-api-token", "a RubyGems API key", ("rubygems_",), r"rubygems_[a-f0-9]{48}", 3.0),
    ("clojars-api-token", "a Clojars deploy token", ("clojars_",), r"CLOJARS_[A-Za-z0-9]{60}", 3.0),
    ("docker-hub-pat", "a Docker Hub personal access token", ("dckr_pat_",),
     r"dckr_pat_" + _URLSAFE + r"{27}", 3.0),
    ("artifactory-api-key", "a JFrog Artifactory API key", ("akcp",),
     _L + r"AKCp[A-Za-z0-9]{69}" + _R, 4.0),
    ("artifactory-reference-token", "a JFrog Artifactory reference token", ("cmvmd",),
     _L + r"cmVmd[A-Za-z0-9]{59}" + _R, 4.0),
    ("octopus-deploy-api-key", "an Octopus Deploy API key", ("api-",), _L + r"API-[A-Z0-9]{26}" + _R, 3.0),
    ("prefect-api-token", "a Prefect API key", ("pnu_",), _L + r"pnu_[A-Za-z0-9]{36}" + _R, 3.0),
    ("readme-api-token", "a ReadMe API key", ("rdme_",), _L + r"rdme_[a-z0-9]{70}" + _R, 3.0),
    ("defined-networking-api-token", "a Defined Networking API token", ("dnkey-",),
     r"dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}", 3.0),
    ("frameio-api-token", "a Frame.io API token", ("fio-u-",), r"fio-u-[A-Za-z0-9_=-]{64}", 3.0),
    ("sidekiq-secret", "a Sidekiq Pro/Enterprise credential",
     ("bundle_enterprise__contribsys__com", "bundle_gems__contribsys__com"),
     r"(?i)BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM[=:][\"']?([a-f0-9]{8}:[a-f0-9]{8})", 2.0),
    ("sidekiq-sensitive-url", "a Sidekiq Pro/Enterprise URL with credentials", ("://",),
     r"://[a-f0-9]{8}:[a-f0-9]{8}@(?:gems|enterprise)\.contribsys\.com", 2.0, "http_url"),

    # --- chat, mail and collaboration ----------------------------------------------------------
    ("slack-bot-token", "a Slack bot token", ("xoxb-",),
     r"xoxb-[0-9]{10,13}-[0-9]{10,13}-?[0-9A-Za-z-]{0,300}", 3.0),
    ("slack-legacy-bot-token", "a Slack legacy bot token", ("xoxb-",),
     r"xoxb-[0-9]{8,14}-[A-Za-z0-9]{18,26}" + _RW, 3.0),
    ("slack-user-token", "a Slack user token", ("xoxp-",), r"xoxp-[0-9A-Za-z-]{10,300}", 3.0),
    ("slack-legacy-token", "a Slack legacy token", ("xoxo-", "xoxs-"),
     r"xox[os]-[0-9]{1,20}-[0-9]{1,20}-[0-9]{1,20}-[a-fA-F0-9]{1,128}", 3.0),
    ("slack-legacy-workspace-token", "a Slack legacy workspace token", ("xoxa-", "xoxr-"),
     r"xox[ar]-(?:[0-9]-)?[A-Za-z0-9]{11,48}", 3.0),
    ("slack-app-token", "a Slack app token", ("xapp-",), r"xapp-[0-9]-[0-9A-Za-z-]{10,300}", 3.0),
    ("slack-config-access-token", "a Slack configuration access token", ("xoxe.xoxb-", "xoxe.xoxp-"),
     r"xoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{40,300}", 3.0),
    ("slack-config-refresh-token", "a Slack configuration refresh token", ("xoxe-",),
     r"xoxe-[0-9]-[A-Za-z0-9]{40,300}", 3.0),
    ("slack-webhook-url", "a Slack webhook URL", ("://",),
     r"://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}", 3.0,
     "http_url"),
    ("discord-webhook-url", "a Discord webhook URL", ("://",),
     r"://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/" + _URLSAFE
     + r"{60,68}", 3.0, "http_url"),
    ("microsoft-teams-webhook", "a Microsoft Teams webhook URL", ("://",),
     r"://[A-Za-z0-9-]{1,63}\.webhook\.office\.com/webhookb2/" + _UUID + r"@" + _UUID
     + r"/IncomingWebhook/[0-9a-f]{32}/" + _UUID, 3.0, "http_url"),
    ("telegram-bot-api-token", "a Telegram bot token", (":a",),
     r"(?<![0-9])[0-9]{5,16}:A[A-Za-z0-9_-]{34}" + _RW, 3.0),
    ("linear-api-key", "a Linear API key", ("lin_api_",), r"lin_api_[A-Za-z0-9]{40}", 3.0),
    ("notion-api-token", "a Notion integration token", ("ntn_", "secret_"),
     _L + r"(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})" + _R, 4.0),
    ("sendgrid-api-token", "a SendGrid API key", ("sg.",),
     _L + r"SG\." + _URLSAFE + r"{22}\." + _URLSAFE + r"{43}" + _RW, 3.0),
    ("sendinblue-api-token", "a Brevo (Sendinblue) API key", ("xkeysib-",),
     r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", 3.0),
    ("mailgun-private-api-token", "a Mailgun API key", ("key-",), _L + r"key-[a-f0-9]{32}" + _R, 3.0),
    ("mailgun-pub-key", "a Mailgun public validation key", ("pubkey-",),
     _L + r"pubkey-[a-f0-9]{32}" + _R, 3.0),
    ("mailchimp-api-key", "a Mailchimp API key", ("-us",),
     _L + r"[a-f0-9]{32}-us[0-9]{1,2}" + _R, 3.0),
    ("postman-api-token", "a Postman API key", ("pmak-",),
     r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", 3.0),
    ("typeform-api-token", "a Typeform personal token", ("tfp_",),
     _L + r"tfp_[A-Za-z0-9_.=-]{59}(?![A-Za-z0-9_.=-])", 3.0),
    ("contentful-personal-access-token", "a Contentful personal access token", ("cfpat-",),
     r"CFPAT-" + _URLSAFE + r"{43}", 3.0),
    ("beamer-api-token", "a Beamer API key", ("b_",),
     r"(?<![A-Za-z0-9_])b_[A-Za-z0-9=_-]{44}(?![A-Za-z0-9=_-])", 4.0),
    ("adobe-client-secret", "an Adobe client secret", ("p8e-",), _L + r"p8e-[A-Za-z0-9]{32}" + _R, 3.0),
    ("intra42-client-secret", "a 42 intra client secret", ("s-s4t2ud-", "s-s4t2af-"),
     r"s-s4t2(?:ud|af)-[a-f0-9]{64}", 3.0),

    # --- monitoring and analytics --------------------------------------------------------------
    ("grafana-api-key", "a Grafana API key", ("eyjrijoi",), r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}", 3.0),
    ("grafana-cloud-api-token", "a Grafana Cloud token", ("glc_",),
     _L + r"glc_" + _B64 + r"{32,400}={0,3}", 3.0),
    ("grafana-service-account-token", "a Grafana service account token", ("glsa_",),
     r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", 3.0),
    ("new-relic-user-api-key", "a New Relic user API key", ("nrak-",), r"NRAK-[A-Za-z0-9]{27}", 3.0),
    ("new-relic-insert-key", "a New Relic insert key", ("nrii-",), r"NRII-" + _URLSAFE + r"{32}", 3.0),
    ("new-relic-browser-api-token", "a New Relic browser API token", ("nrjs-",),
     r"NRJS-[a-f0-9]{19}", 3.0),
    ("sentry-user-token", "a Sentry user auth token", ("sntryu_",), r"sntryu_[a-f0-9]{64}", 3.5),
    ("sentry-org-token", "a Sentry organization auth token", ("sntrys_",),
     r"sntrys_eyJ" + _B64 + r"{30,600}={0,2}_" + _B64 + r"{43}(?![A-Za-z0-9+/])", 4.0),
    ("maxmind-license-key", "a MaxMind license key", ("_mmk",),
     _L + r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" + _R, 4.0),
    ("langsmith-api-key", "a LangSmith API key", ("lsv2_pt_", "lsv2_sk_"),
     r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", 3.0),

    # --- AI services ---------------------------------------------------------------------------
    ("anthropic-api-key", "an Anthropic API key", ("sk-ant-",),
     r"sk-ant-(?!admin01-)" + _URLSAFE + r"{20,300}", 3.0),
    ("anthropic-admin-api-key", "an Anthropic admin API key", ("sk-ant-admin01-",),
     r"sk-ant-admin01-" + _URLSAFE + r"{20,300}", 3.0),
    ("openai-api-key", "an OpenAI API key", ("sk-",),
     r"(?<![A-Za-z0-9_-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z_-]{0,300}[0-9])"
     r"[0-9A-Za-z_-]{20,300}", 3.0),
    ("huggingface-access-token", "a Hugging Face access token", ("hf_",),
     _L + r"hf_[A-Za-z]{34}" + _R, 3.0),
    ("huggingface-organization-api-token", "a Hugging Face organization token", ("api_org_",),
     _L + r"api_org_[A-Za-z]{34}" + _R, 3.0),
    ("perplexity-api-key", "a Perplexity API key", ("pplx-",), r"pplx-[A-Za-z0-9]{48}", 4.0),
    ("groq-api-key", "a Groq API key", ("gsk_",), _L + r"gsk_[A-Za-z0-9]{52}" + _R, 4.0),
    ("replicate-api-token", "a Replicate API token", ("r8_",), _L + r"r8_[A-Za-z0-9]{37}" + _R, 3.5),
    ("xai-api-key", "an xAI API key", ("xai-",), _L + r"xai-[A-Za-z0-9]{80}" + _R, 4.0),

    # --- payments and commerce -----------------------------------------------------------------
    ("stripe-access-token", "a Stripe secret key",
     ("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"),
     _L + r"(?:sk|rk)_(?:test|live|prod)_[0-9A-Za-z]{10,99}" + _R, 3.0),
    ("stripe-webhook-secret", "a Stripe webhook signing secret", ("whsec_",),
     r"whsec_[A-Za-z0-9+/=]{32,128}", 3.0),
    ("square-access-token", "a Square access token or secret", ("sq0atp-", "sq0csp-", "eaaa"),
     _L + r"(?:EAAA|sq0atp-|sq0csp-)" + _URLSAFE + r"{22,60}" + _RW, 3.0),
    ("shopify-access-token", "a Shopify access token", ("shpat_",), r"shpat_[a-fA-F0-9]{32}", 3.0),
    ("shopify-custom-access-token", "a Shopify custom app access token", ("shpca_",),
     r"shpca_[a-fA-F0-9]{32}", 3.0),
    ("shopify-private-app-access-token", "a Shopify private app access token", ("shppa_",),
     r"shppa_[a-fA-F0-9]{32}", 3.0),
    ("shopify-shared-secret", "a Shopify shared secret", ("shpss_",), r"shpss_[a-fA-F0-9]{32}", 3.0),
    ("flutterwave-secret-key", "a Flutterwave secret key", ("flwseck",),
     r"FLWSECK(?:_TEST)?-[a-hA-H0-9]{32}-X", 3.0),
    ("flutterwave-encryption-key", "a Flutterwave encryption key", ("flwseck",),
     r"FLWSECK(?:_TEST)?-?[a-hA-H0-9]{12}" + _R, 2.5),
    ("flutterwave-public-key", "a Flutterwave public key", ("flwpubk",),
     r"FLWPUBK(?:_TEST)?-[a-hA-H0-9]{32}-X", 3.0),
    ("gocardless-api-token", "a GoCardless access token", ("live_",),
     r"(?<![A-Za-z0-9_])live_[A-Za-z0-9_=-]{40}(?![A-Za-z0-9_=-])", 3.5),
    ("lob-api-key", "a Lob API key", ("live_", "test_"),
     r"(?<![A-Za-z0-9_])(?:live|test)_[a-f0-9]{35}" + _R, 3.0),
    ("lob-pub-api-key", "a Lob publishable API key", ("live_pub_", "test_pub_"),
     r"(?<![A-Za-z0-9_])(?:live|test)_pub_[a-f0-9]{31}" + _R, 3.0),
    ("plaid-api-token", "a Plaid access token",
     ("access-sandbox-", "access-development-", "access-production-"),
     r"access-(?:sandbox|development|production)-" + _UUID, 3.0),
    ("shippo-api-token", "a Shippo API token", ("shippo_",),
     r"shippo_(?:live|test)_[a-fA-F0-9]{40}", 3.0),
    ("duffel-api-token", "a Duffel API token", ("duffel_",),
     r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", 3.0),
    ("easypost-api-token", "an EasyPost API key", ("ezak",), _L + r"EZAK[A-Za-z0-9]{54}" + _R, 3.0),
    ("easypost-test-api-token", "an EasyPost test API key", ("eztk",),
     _L + r"EZTK[A-Za-z0-9]{54}" + _R, 3.0),
    ("braintree-access-token", "a PayPal Braintree access token",
     ("access_token$production$", "access_token$sandbox$"),
     r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}", 3.0),
    ("twilio-api-key", "a Twilio API key", ("sk",), _L + r"SK[0-9a-fA-F]{32}" + _R, 3.0),

    # --- identity, secrets managers, social ----------------------------------------------------
    ("1password-secret-key", "a 1Password secret key", ("a3-",),
     _L + r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}"
     r"-[A-Z0-9]{5}" + _R, 3.5),
    ("1password-service-account-token", "a 1Password service account token", ("ops_eyj",),
     r"ops_eyJ" + _B64 + r"{250,4096}={0,3}", 4.0),
    ("age-secret-key", "an age secret key", ("age-secret-key-1",),
     r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", 3.0),
    ("okta-access-token", "an Okta API token", ("00",),
     r"(?<![A-Za-z0-9_-])00" + _URLSAFE + r"{40}" + _RW, 4.0, "mixed_case"),
    ("authress-service-client-access-key", "an Authress service client access key",
     ("sc_", "ext_", "scauth_", "authress_"),
     _L + r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-]"
     r"[A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}", 3.0),
    ("airtable-personnal-access-token", "an Airtable personal access token", ("pat",),
     _L + r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}" + _R, 3.5),
    ("harness-api-key", "a Harness access token", ("pat.", "sat."),
     _L + r"(?:pat|sat)\." + _URLSAFE + r"{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}" + _R, 3.0),
    ("settlemint-personal-access-token", "a SettleMint personal access token", ("sm_pat_",),
     _L + r"sm_pat_[A-Za-z0-9]{16}" + _R, 3.0),
    ("settlemint-application-access-token", "a SettleMint application access token", ("sm_aat_",),
     _L + r"sm_aat_[A-Za-z0-9]{16}" + _R, 3.0),
    ("settlemint-service-access-token", "a SettleMint service access token", ("sm_sat_",),
     _L + r"sm_sat_[A-Za-z0-9]{16}" + _R, 3.0),
    ("facebook-page-access-token", "a Facebook page access token", ("eaam", "eaac"),
     _L + r"EAA[MC][A-Za-z0-9]{100,1024}", 4.0),
    ("facebook-access-token", "a Facebook app access token", ("|", "%7c"),
     r"(?<![0-9])[0-9]{15,16}(?:\||%7[Cc])" + _URLSAFE + r"{27,40}" + _RW, 3.0),
    ("twitter-bearer-token", "a Twitter/X bearer token", ("a" * 22,),
     r"(?<![A-Za-z0-9+/])A{22}[A-Za-z0-9%]{80,100}(?![A-Za-z0-9%+/=])", 3.0),
    ("dropbox-short-lived-api-token", "a Dropbox short-lived access token", ("sl.",),
     _L + r"sl\.[A-Za-z0-9_=-]{130,1500}", 4.0),
    ("dropbox-long-lived-api-token", "a Dropbox long-lived access token", ("a" * 10,),
     r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9]{11}A{10}[A-Za-z0-9_=-]{43}(?![A-Za-z0-9+/=_-])", 3.5),
    ("mapbox-api-token", "a Mapbox access token", ("pk.", "sk."),
     _L + r"[ps]k\.eyJ" + _URLSAFE + r"{40,1024}\." + _URLSAFE + r"{20,128}", 3.0),
)


# --- what the checks of ctx.credentials know -------------------------------------------------

# expressions ctx.credentials compiles on first use (by name)
VALUE_PATTERNS = {
    # a variable or a template where a value would be: $VAR, %VAR%, ${VAR}, {name}, <name>
    "reference": r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$|%[A-Za-z_][A-Za-z0-9_]*%$|\{[^{}]*\}$|<[^<>]*>$",
    # values that are something else: numbers with units, dates, versions, e-mail addresses
    "benign": r"[+-]?\d+(?:[.,:]\d+)*[A-Za-z%]{0,4}$|\d{4}-\d\d-\d\d|v?\d+(?:\.\d+){1,3}(?:[-+][\w.-]*)?$"
              r"|[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$",
    "parts": r"[A-Za-z0-9]+",
    "name": r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+",
    "prev_word": r"([A-Za-z]+)[ \t]+$",
    "host_end": r"[^A-Za-z0-9.-]|$",
    "digit": r"[0-9]",
    # a long word that reads like one: two vowels or more, never four consonants in a row
    "word": r"(?=(?:[^aeiouy]*[aeiouy]){2})(?!.*[b-df-hj-np-tv-xz]{4})[a-z]{7,}",
}

# values that start or end like something else: digests, password hashes, ARNs, code that
# reads a setting, file names (matched in lower case; a URL is anything with "://")
BENIGN_PREFIXES = ("sha1:", "sha224:", "sha256:", "sha384:", "sha512:", "md5:", "sha1=", "sha256=",
                   "sha512=", "md5=", "$2a$", "$2b$", "$2x$", "$2y$", "$argon2", "$1$", "$5$", "$6$",
                   "$scrypt", "$pbkdf2", "arn:", "process.env", "os.environ", "os.getenv", "import.meta.env",
                   "settings.", "settings[", "config.", "config[", "env.", "env[", "env(", "vars.")
BENIGN_SUFFIXES = (".py", ".js", ".ts", ".json", ".yaml", ".yml", ".toml", ".md", ".txt", ".pem", ".key",
                   ".env", ".cfg", ".conf", ".ini", ".sh", ".crt", ".log", ".pub", ".pdf", ".csv", ".gz",
                   ".zip", ".tar", ".png", ".jpg", ".jpeg", ".html", ".xml", ".sql", ".tfstate", ".lock",
                   ".parquet")

# words documentation writes where a secret would go (matched in lower case)
PLACEHOLDER_WORDS = ("example", "redacted", "placeholder", "your_", "your-", "changeme", "dummy",
                     "xxxxxxxx", "****", "...", "${", "{{", "$(")

# words that names, paths and settings are made of; a random token seldom holds one
NAME_WORDS = frozenset("""prod production staging stage develop development test testing east west north south
central global user users profile profiles tenant tenants payment payments credential credentials secret
secrets vault proxy oauth service services config configs cache token tokens engine checkout terraform
state backup backups envs release releases replica beta alpha github gitlab docker image images data
database admin account accounts server client worker workers queue stream events event order orders
billing invoice invoices stripe azure google cloud region bucket storage uploads upload download
downloads logs metrics monitor grafana prometheus kafka redis postgres mysql mongo rabbit nginx kube
kubernetes cluster node nodes pool shard primary secondary master main default internal external public
private shared common core platform infra deploy deployment build pipeline runner jobs task tasks cron
schedule session sessions auth login signup password passwords rotation policy access read write only
team group project projects environment local remote mirror registry package packages library module
model models dataset training inference embedding vector search index report reports email mail notify
notification webhook webhooks slack discord feature flag flags legacy temp archive nightly daily weekly
monthly latest stable canary blue green item items customer customers product products catalog
inventory cart shipping refund ledger wallet clear text value values name names file files path paths
home root system systems network gateway frontend backend mobile desktop browser chrome firefox safari
linux darwin windows amd64 arm64 python node java golang rust ruby helm chart charts namespace default
kind secretkey apikey label labels version versions stack stacks site sites domain domains host hosts
cert certs certificate certificates keys keystore truststore region zone zones aurora dynamo lambda
function functions topic topics consumer producer subscription subscriptions sandbox live env key
process environ getenv settings""".split())

DOC_PASSWORDS = frozenset("""password passwd pass pwd secret secrets changeme changeit example test testing
guest admin administrator root user username postgres mysql redis mongo rabbitmq default letmein qwerty
foo bar foobar baz token apikey api_key mypassword mypass yourpassword dbpassword db_password pw
password1 password123 p@ssw0rd 123456 12345678 1234 xxx xxxx none null nil""".split())
DOC_HOSTS = ("example.com", "example.org", "example.net", "host", "hostname", "server",
              "your-host", "yourhost", "domain.com", "db.example")

# name parts that make a name a credential's, and parts that make it something else
PASSWORD_PARTS = ("password", "passwd", "passphrase", "passwords")
SECRET_PARTS = ("token", "tokens", "secret", "secrets", "apikey", "credential", "credentials",
                 "creds", "cred", "auth", "oauth", "authtoken", "accesskey", "secretkey", "privatekey")
KEY_QUALIFIERS = frozenset("""api secret private access auth master signing sign encryption encrypt
license licence client service app application deploy webhook session jwt hmac aes crypto consumer
account admin root ssh gpg pgp storage subscription integration bot server shared""".split())
NOT_SECRET = frozenset("""id ids name names type types file filename files path paths url urls uri endpoint
length len size count limit max min budget ttl expiry expires expiration expire timeout public pub hash
hashed hashes digest fingerprint checksum sha sha1 sha256 sha512 md5 format header headers field ref
version policy rotation prefix suffix pattern regex cache partition primary foreign sort index idx hint
label alias location dir directory mode kind usage rate csrf xsrf placeholder example sample dummy
lifetime duration env var variable reset forgot strength rule rules requirement requirements input column
param parameter template generator""".split())


class Rule:
    """One kind of credential; its expression is compiled on first use."""

    __slots__ = ("id", "description", "keywords", "entropy", "check", "scope", "needs", "_pattern")

    def __init__(self, id: str, description: str, keywords: Iterable[str], pattern,
                 entropy: float | None = None, check: Callable | str | None = None,
                 scope: str = RUN) -> None:
        self.id, self.description, self.keywords = id, description, tuple(keywords)
        self._pattern, self.entropy, self.check, self.scope = pattern, entropy, check, scope
        self.needs = tuple(text.encode() for text in NEEDS.get(id, ()))  # (see NEEDS)

    def can_match(self, raw: bytes) -> bool:
        """Whether ``raw`` (the text as ``scan`` lower-cases it) holds what the expression needs."""
        return not self.needs or any(text in raw for text in self.needs)

    @property
    def pattern(self):
        if isinstance(self._pattern, str):
            import re
            self._pattern = re.compile(self._pattern)
        return self._pattern

    @property
    def source(self) -> str:
        """The expression as written in the table."""
        return self._pattern if isinstance(self._pattern, str) else self._pattern.pattern

    def __repr__(self) -> str:
        return f"Rule({self.id!r})"
