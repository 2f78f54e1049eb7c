"""The recall evaluation set: a realistic context and the questions an agent asks of it.

Written before any ranking was tuned, and not changed to suit one: a context of seven
areas (a web backend, a mobile app, a data pipeline, infrastructure, model training, a
docs site, the operator's preferences, plus an agent's own notes) and questions of three
kinds, each with the keys of the entries that answer it:

- ``other``: asked in other words (no word of the question, past stop words and
  stemming, occurs in an answer's key, value or tags);
- ``own``: asked with the entry's own words (every word of the question is in it);
- ``mixed``: some words of the entry, some not.

``bench/recall.py`` measures each way of searching on it (found in the top 5, per
kind); ``tests/recall/`` checks the set keeps its own rules and that ranking meets the
floors the issue sets.
"""

from __future__ import annotations

# area -> (store, tag) every entry of that area carries
AREAS = {
    "api": ("shared", "backend"), "mobile": ("shared", "mobile"), "etl": ("shared", "pipeline"),
    "infra": ("shared", "infra"), "train": ("shared", "ml"), "docs": ("shared", "docs"),
    "pref": ("operator", "preference"), "note": ("agent", "note"),
}

# (key, value); the key's second word names the area, its first the kind (also a tag)
ENTRIES: list[tuple[str, str]] = [
    # --- the web backend ---
    ("decision_api_db_pool", "Postgres connection pool for the API is 20 per pod; 50 exhausted "
     "max_connections during deploys"),
    ("issue_api_upload_timeout", "Uploads over 50 MB fail at 30 s: nginx proxy_read_timeout is 30s in "
     "front of the API"),
    ("result_api_p99_latency", "p99 latency of GET /invoices is 180 ms after adding the composite index on "
     "(account_id, created_at)"),
    ("decision_api_auth_jwt", "API tokens are JWTs signed with RS256; keys rotate every 90 days via the "
     "/.well-known/jwks.json endpoint"),
    ("convention_api_errors", "Errors are returned as RFC 7807 problem+json with a stable `type` URI; never "
     "leak stack traces"),
    ("issue_api_n_plus_one", "The /orders endpoint issued one query per line item; fixed with selectinload "
     "on Order.items"),
    ("decision_api_rate_limit", "Rate limit is 600 requests/minute per API key, enforced in Redis with a "
     "sliding window"),
    ("result_api_migration_0042", "Migration 0042 adds a NOT NULL column with a default; on Postgres 14 it "
     "rewrites the table, took 11 minutes on staging"),
    ("convention_api_migrations", "Alembic migrations must be backwards compatible for one release: add "
     "column, deploy, backfill, then constrain"),
    ("issue_api_webhook_retries", "Stripe webhooks were processed twice when the handler took over 10 s; "
     "now idempotent on event id"),
    ("decision_api_framework", "Backend uses FastAPI with SQLAlchemy 2.0 async sessions; Django was "
     "rejected for the async story"),
    ("result_api_load_test", "Load test with k6: 1,200 rps sustained on 4 pods before CPU saturation; "
     "bottleneck is JSON serialization"),
    ("decision_api_json_lib", "Switched response serialization to orjson, cutting CPU per request by a third"),
    ("issue_api_timezone_bug", "Invoices dated at 23:30 local time showed the next day: we stored naive "
     "datetimes; now everything is UTC-aware"),
    ("convention_api_logging", "Structured logs in JSON via structlog; every line carries request_id and "
     "account_id"),
    ("fact_api_staging_url", "Staging API is at https://api.staging.example.com; basic auth creds are in "
     "1Password vault Backend"),
    ("issue_api_memory_leak", "API pods grew to 2 GB over a day; cause was an unbounded lru_cache on tenant "
     "settings; capped at 1024"),
    ("decision_api_pagination", "List endpoints use cursor pagination (opaque base64 cursor); offset "
     "pagination dropped for large accounts"),
    ("result_api_test_suite", "Backend test suite: 1,840 tests in 3m10s with pytest-xdist on 4 workers"),
    ("convention_api_feature_flags", "Feature flags live in LaunchDarkly; flag keys are kebab-case and "
     "removed within two sprints of full rollout"),
    ("issue_api_cors", "Browser calls from the docs site failed preflight: CORS allowlist lacked "
     "https://docs.example.com"),
    ("decision_api_email_provider", "Transactional email goes through Postmark; SES was dropped after "
     "deliverability problems with Outlook"),
    ("fact_api_owner", "Payments module owner is Dana; ask her before changing refund logic"),
    ("issue_api_deadlock", "Deadlocks between invoice finalize and payment capture; fixed by always locking "
     "the invoice row first"),
    ("result_api_cache_hit", "Redis cache hit rate on account lookups is 94% with a 5-minute TTL"),
    ("decision_api_background_jobs", "Background jobs run on Celery with a Redis broker; long exports go to "
     "a separate queue named slow"),
    ("issue_api_pdf_generation", "Invoice PDFs rendered blank fonts in the container: the fonts-dejavu "
     "package was missing from the Docker image"),
    ("convention_api_versioning", "Public API versioned in the URL (/v1, /v2); breaking changes only in a "
     "new major version"),
    ("fact_api_healthcheck", "Health check is GET /healthz (liveness) and /readyz (checks DB and Redis)"),
    ("issue_api_slow_search", "Customer search by email was a sequential scan; added a trigram GIN index on "
     "lower(email)"),
    # --- the mobile app ---
    ("decision_mobile_framework", "Mobile app is React Native 0.73 with the new architecture (Fabric) "
     "enabled on both platforms"),
    ("issue_mobile_ios_crash_launch", "iOS 17.2 crash on launch traced to a Hermes bug with "
     "Intl.DateTimeFormat; upgraded Hermes"),
    ("issue_mobile_android_push", "Android push notifications stopped arriving after targeting SDK 33: the "
     "POST_NOTIFICATIONS permission must be requested at runtime"),
    ("convention_mobile_release", "Releases ship every second Thursday; TestFlight build by Tuesday, phased "
     "rollout 10% then 100%"),
    ("fact_mobile_bundle_id", "Bundle id is com.example.shop; the Android applicationId is the same"),
    ("result_mobile_startup_time", "Cold start on a Pixel 4a is 2.1 s; target is under 1.5 s"),
    ("decision_mobile_state", "App state is in Zustand; Redux removed in 3.0 because of boilerplate"),
    ("issue_mobile_offline_sync", "Cart edits made offline were lost when the app was killed; now persisted "
     "to MMKV and replayed on reconnect"),
    ("convention_mobile_strings", "All user-facing strings go through i18next; no literals in components "
     "(a lint rule enforces it)"),
    ("issue_mobile_app_review_rejection", "Apple rejected 4.2 because Sign in with Apple was missing while "
     "Google sign-in was offered"),
    ("decision_mobile_payments", "In-app purchases via RevenueCat; physical goods go through Stripe, never IAP"),
    ("result_mobile_crash_free", "Crash-free sessions at 99.6% in the last release according to Sentry"),
    ("issue_mobile_keyboard_covers_input", "On small Android phones the keyboard covers the checkout address "
     "field; fixed with KeyboardAvoidingView behavior=height"),
    ("fact_mobile_signing", "Android upload keystore is in the team vault; Play App Signing holds the "
     "release key"),
    ("decision_mobile_images", "Product images load through expo-image with disk caching; FastImage removed"),
    ("issue_mobile_dark_mode", "Dark mode showed black text on dark grey in the order history screen; colors "
     "now come from the theme only"),
    ("convention_mobile_testing", "E2E tests run with Detox on an iPhone 15 simulator and a Pixel 6 emulator "
     "in CI"),
    ("result_mobile_bundle_size", "JS bundle is 4.8 MB; removing moment.js saved 280 KB"),
    ("issue_mobile_deep_links", "Universal links opened Safari instead of the app: "
     "apple-app-site-association was served with a text/html content type"),
    ("decision_mobile_min_versions", "Minimum supported: iOS 15 and Android 8 (API 26)"),
    ("issue_mobile_battery_drain", "Location polling every 5 s drained the battery; switched to "
     "significant-change updates"),
    ("fact_mobile_ota_updates", "JS-only fixes ship over the air with EAS Update on channel production"),
    ("issue_mobile_font_scaling", "Large accessibility font sizes broke the tab bar layout; tab labels now "
     "allow two lines"),
    ("convention_mobile_analytics", "Analytics events are snake_case verbs (product_viewed) sent through "
     "Segment"),
    ("result_mobile_ios_build_time", "iOS CI build takes 14 minutes; caching CocoaPods cut it from 22"),
    ("issue_mobile_android_build_gradle", "Android build failed with 'Duplicate class kotlin.collections' "
     "after upgrading Kotlin; pinned kotlin-stdlib-jdk8 1.8.22"),
    ("decision_mobile_navigation", "Navigation uses React Navigation 6 native stack"),
    ("issue_mobile_webview_login", "The web checkout in a WebView lost its session cookie on iOS; cookies "
     "are shared with WKHTTPCookieStore"),
    ("fact_mobile_store_listing", "App Store screenshots are generated with fastlane snapshot from the "
     "seeded demo account"),
    ("result_mobile_rating", "Store rating rose from 3.9 to 4.5 after the checkout redesign"),
    # --- the data pipeline ---
    ("decision_etl_orchestrator", "Pipelines are orchestrated with Dagster; Airflow was retired in March"),
    ("issue_etl_duplicate_rows", "Orders fact table had duplicate rows after retries; loads are now MERGE on "
     "order_id instead of INSERT"),
    ("fact_etl_warehouse", "Warehouse is Snowflake, database ANALYTICS, warehouse size MEDIUM for transforms"),
    ("convention_etl_dbt_naming", "dbt models: stg_ for staging, int_ for intermediate, fct_ and dim_ for "
     "marts"),
    ("result_etl_nightly_runtime", "Nightly run takes 47 minutes; the sessions model alone is 18"),
    ("issue_etl_late_events", "Mobile events arrive up to 3 days late; the sessions model reprocesses a "
     "72-hour lookback window"),
    ("decision_etl_incremental", "Large models are incremental with a unique key; full refresh only on "
     "schema change"),
    ("issue_etl_schema_drift", "Vendor CSV added a column mid-month and the loader failed; columns are now "
     "mapped by header name"),
    ("fact_etl_sources", "Sources: Postgres replica via Fivetran, Segment events, Stripe via API, vendor "
     "CSVs on SFTP"),
    ("issue_etl_snowflake_costs", "Snowflake credits doubled in October: a dashboard refreshed every minute "
     "on an XL warehouse; now hourly on XS"),
    ("convention_etl_tests", "Every mart has dbt tests: unique and not_null on keys, accepted_values on "
     "status columns"),
    ("issue_etl_timezone_daily", "Daily revenue differed from finance by one day's worth: dates were cut at "
     "UTC midnight, finance uses America/New_York"),
    ("decision_etl_pii", "PII columns (email, phone) are hashed with a salted SHA-256 in staging; raw values "
     "never reach marts"),
    ("result_etl_data_freshness", "Freshness SLA: orders within 2 hours, events within 6 hours; met 98% of "
     "days last quarter"),
    ("issue_etl_sftp_key", "SFTP pulls from the vendor failed after they rotated their host key; known_hosts "
     "updated"),
    ("decision_etl_spark_jobs", "Clickstream sessionization runs on Spark (EMR) because it does not fit in "
     "Snowflake's budget"),
    ("issue_etl_spark_oom", "Spark executors ran out of memory on skewed user ids; salting the join key "
     "fixed it"),
    ("fact_etl_dashboard_tool", "Dashboards are in Metabase; finance uses the Revenue collection"),
    ("convention_etl_backfills", "Backfills run from a branch deployment with a date partition range, never "
     "from prod schedules"),
    ("issue_etl_currency_conversion", "Revenue in EUR used the rate of the load date instead of the order "
     "date; fixed to join fx_rates on order date"),
    ("result_etl_row_counts", "orders fact: 48M rows; events: 2.1B rows partitioned by day"),
    ("decision_etl_data_contracts", "Producers publish a JSON schema for each event; the pipeline rejects "
     "events that do not validate"),
    ("issue_etl_null_country", "10% of users have a null country since the signup form made it optional; "
     "treat as unknown in dim_users"),
    ("fact_etl_owner", "Data pipeline on-call rotates weekly; schedule in PagerDuty service data-platform"),
    ("issue_etl_fivetran_resync", "Fivetran re-synced the whole users table after a primary key change, "
     "costing 30M MAR"),
    ("convention_etl_sql_style", "SQL style: lowercase keywords, leading commas, CTEs instead of subqueries"),
    ("result_etl_churn_model_input", "Churn features table is rebuilt daily at 06:00 UTC for the training "
     "jobs"),
    ("issue_etl_dagster_sensor", "The S3 sensor missed files uploaded with the same name; the sensor now "
     "keys on ETag"),
    ("decision_etl_retention", "Raw event data is kept 13 months, aggregated data indefinitely"),
    ("issue_etl_float_money", "Money summed as floats gave cents off in reports; amounts are now integers in "
     "minor units"),
    # --- infrastructure ---
    ("decision_infra_cloud", "Production runs on AWS eu-west-1; DR copies to eu-central-1"),
    ("decision_infra_k8s", "Workloads run on EKS 1.28 with Karpenter for node autoscaling"),
    ("issue_infra_cert_expiry", "The wildcard TLS certificate expired on a Sunday and took down the API; "
     "cert-manager now renews 30 days early and alerts"),
    ("convention_infra_terraform", "All infrastructure is Terraform in the infra repo; state in S3 with "
     "DynamoDB locking; no console changes"),
    ("issue_infra_dns_propagation", "Moving DNS to Route 53 left stale NS records at the registrar for 48 "
     "hours; lower the TTL to 300 before a migration"),
    ("fact_infra_vpn", "Engineers reach private services through Tailscale; the bastion host was removed"),
    ("issue_infra_disk_full", "Postgres primary ran out of disk from WAL growth when a replication slot was "
     "abandoned; alert on slot lag now"),
    ("decision_infra_secrets", "Secrets live in AWS Secrets Manager and reach pods through External Secrets "
     "Operator"),
    ("result_infra_monthly_cost", "AWS bill is $38k/month; 45% is RDS and 30% EKS nodes"),
    ("issue_infra_nat_costs", "NAT gateway charges spiked because pods pulled images from Docker Hub; now "
     "mirrored in ECR"),
    ("convention_infra_oncall", "On-call: primary and secondary weekly; pages acknowledged within 15 minutes"),
    ("issue_infra_pod_evictions", "Pods were evicted under memory pressure because requests were far below "
     "real use; requests now match p95"),
    ("decision_infra_observability", "Metrics in Prometheus with Grafana; logs in Loki; traces in Tempo"),
    ("issue_infra_ci_runners", "GitHub Actions self-hosted runners ran out of disk from Docker layer caches; "
     "nightly prune job added"),
    ("fact_infra_backup", "RDS automated backups kept 14 days; weekly snapshots copied to the DR region and "
     "kept 90 days"),
    ("result_infra_restore_drill", "Last restore drill: full database restored in 52 minutes, within the "
     "1-hour RTO"),
    ("issue_infra_ingress_502", "Intermittent 502s from the ALB during deploys: pods were killed before "
     "deregistration; added a preStop sleep of 15 s"),
    ("decision_infra_deploys", "Deploys go through Argo CD from the gitops repo; no kubectl apply by hand"),
    ("convention_infra_tags", "Every AWS resource carries tags owner, env and cost-center; untagged resources "
     "fail the Terraform plan"),
    ("issue_infra_clock_skew", "Token validation failed on one node because chrony was not running; the "
     "node image now enables it"),
    ("fact_infra_domains", "Domains are registered at Gandi: example.com and example.dev"),
    ("issue_infra_redis_failover", "Redis failover took 40 s and the API errored meanwhile; clients now "
     "retry with backoff"),
    ("decision_infra_cdn", "Static assets and the docs site sit behind CloudFront"),
    ("issue_infra_terraform_drift", "Someone changed a security group in the console; terraform plan now "
     "runs nightly to report drift"),
    ("result_infra_uptime", "API availability was 99.95% last quarter; the one outage was the certificate "
     "expiry"),
    ("fact_infra_kubeconfig", "Get cluster access with `aws eks update-kubeconfig --name prod --region "
     "eu-west-1` after SSO login"),
    ("issue_infra_image_size", "The API image was 1.9 GB; a multi-stage build on python:3.12-slim brought it "
     "to 240 MB"),
    ("decision_infra_ipv6", "IPv6 dual-stack postponed: the ALB supports it but the Redis cluster does not"),
    ("convention_infra_incidents", "Every incident gets a blameless postmortem in the wiki within five "
     "working days"),
    ("issue_infra_dns_resolution_latency", "CoreDNS latency spikes under load; enabled NodeLocal DNSCache on "
     "every node"),
    # --- model training ---
    ("decision_train_framework", "Training code is PyTorch 2.2 with Lightning; mixed precision bf16"),
    ("issue_train_loss_nan", "Loss went NaN after 3k steps with fp16; switched to bf16 and added gradient "
     "clipping at 1.0"),
    ("fact_train_cluster", "Training runs on 8x A100 80GB nodes rented from Lambda; jobs launched with "
     "SkyPilot"),
    ("result_train_baseline_auc", "Churn model baseline: AUC 0.81 on the holdout month with LightGBM"),
    ("decision_train_experiment_tracking", "Experiments tracked in Weights & Biases, project churn-v2"),
    ("issue_train_data_leak", "Validation AUC of 0.97 was a leak: the cancellation_date column was in the "
     "features; removed"),
    ("convention_train_seeds", "Every run fixes seeds (python, numpy, torch) and logs the git commit of the "
     "code"),
    ("result_train_lr_sweep", "Learning-rate sweep: 3e-4 best for the transformer ranker; 1e-3 diverged"),
    ("issue_train_dataloader_slow", "GPU utilization was 40% because the dataloader decoded JPEGs on one "
     "worker; 8 workers and pinned memory fixed it"),
    ("decision_train_eval_split", "Evaluation uses a time-based split: train up to month N-2, validate N-1, "
     "test N"),
    ("issue_train_checkpoint_disk", "Checkpoints every 500 steps filled the 2 TB volume; keep the last 3 and "
     "the best"),
    ("fact_train_model_registry", "Models are registered in MLflow; the production alias points to the "
     "served version"),
    ("result_train_ranker_ndcg", "Transformer ranker: NDCG@10 0.412 vs 0.371 for the BM25 baseline"),
    ("issue_train_cuda_oom", "CUDA out of memory at batch size 64 with sequence length 512; gradient "
     "accumulation of 4 with batch 16 fits"),
    ("decision_train_serving", "Models served with Triton behind the recommendation API; batch size 32, max "
     "queue delay 5 ms"),
    ("issue_train_tokenizer_mismatch", "Served model gave garbage because serving used a different "
     "tokenizer version; the tokenizer is now saved with the checkpoint"),
    ("convention_train_datasets", "Datasets are versioned with DVC in s3://ml-data; never train from a live "
     "table"),
    ("result_train_distillation", "Distilled ranker (6 layers) keeps 97% of NDCG at a third of the latency"),
    ("issue_train_nccl_hang", "Multi-node training hung at the first all-reduce: NCCL picked the wrong "
     "network interface; set NCCL_SOCKET_IFNAME=ens5"),
    ("decision_train_feature_store", "Features computed offline in Snowflake and served online from Redis; "
     "no feature store product"),
    ("issue_train_class_imbalance", "Churners are 3% of users; focal loss did worse than class weights, so "
     "we use weights"),
    ("fact_train_gpu_budget", "GPU budget is $12k per month; ask before launching runs over 200 GPU-hours"),
    ("result_train_inference_latency", "Ranker p95 inference latency is 23 ms on a T4 with TensorRT"),
    ("issue_train_eval_metric_bug", "Recall@k counted duplicates twice and overstated results by 4 points; "
     "fixed in metrics.py"),
    ("convention_train_reports", "Each model change gets a one-page model card: data, metrics, known limits"),
    ("issue_train_spot_preemption", "Spot instances were reclaimed mid-run; training resumes from the last "
     "checkpoint automatically"),
    ("decision_train_hparam_search", "Hyperparameter search with Optuna, 50 trials, median pruner"),
    ("result_train_embedding_dim", "Embedding size 256 matched 512 in quality and halved memory"),
    ("issue_train_random_augment", "RandAugment hurt accuracy on product photos with text; disabled for that "
     "category"),
    ("fact_train_labeling", "Labels come from Label Studio; two annotators per item, disagreements go to a "
     "third"),
    # --- the docs site ---
    ("decision_docs_generator", "Docs site is built with Docusaurus 3 and deployed to CloudFront on every "
     "merge to main"),
    ("issue_docs_broken_links", "Build failed on broken links after renaming the auth guide; redirects added "
     "in docusaurus.config.js"),
    ("convention_docs_style", "Docs use second person, present tense, sentence-case headings; no 'simply' or "
     "'just'"),
    ("fact_docs_search", "Docs search is Algolia DocSearch; the crawler runs daily"),
    ("issue_docs_search_stale", "Algolia results pointed to removed pages for a week; the crawler is now "
     "triggered after each deploy"),
    ("decision_docs_api_reference", "API reference is generated from the OpenAPI spec with Redocly; never "
     "edit it by hand"),
    ("issue_docs_code_samples_outdated", "Code samples still used the v1 client; samples are now tested in "
     "CI against the staging API"),
    ("convention_docs_screenshots", "Screenshots at 2x, 1280 wide, light theme, demo account only"),
    ("result_docs_traffic", "Docs get 42k visits a month; the quickstart page is 30% of them"),
    ("issue_docs_build_time", "Docs build took 9 minutes; disabling the versioned docs for 1.x cut it to 3"),
    ("decision_docs_versioning", "Only the two latest major versions are kept on the docs site"),
    ("fact_docs_owner", "Docs owner is Priya; changes to the quickstart need her review"),
    ("issue_docs_mobile_layout", "Tables overflowed on phones; wrapped in a horizontal scroll container"),
    ("convention_docs_changelog", "Every release adds a changelog entry with Added, Changed, Fixed and "
     "Removed sections"),
    ("issue_docs_dark_mode_diagrams", "Diagrams were unreadable in dark mode; they are now SVG using "
     "currentColor"),
    ("decision_docs_translations", "Docs are English only; translation postponed until a paying customer "
     "needs it"),
    ("result_docs_feedback", "Page feedback widget: 71% helpful; the webhook guide has the most 'not "
     "helpful' votes"),
    ("issue_docs_analytics_consent", "Cookie banner was missing for EU visitors on the docs; Plausible "
     "replaced Google Analytics (no cookies)"),
    ("convention_docs_admonitions", "Use :::note for context, :::warning for data loss or security, never "
     ":::danger"),
    ("fact_docs_preview", "Each pull request gets a preview deployment at pr-<number>.docs-preview.example.com"),
    ("issue_docs_sidebar_order", "Sidebar order was alphabetical; now set by sidebar_position in each page's "
     "front matter"),
    ("decision_docs_tutorials", "Tutorials are end-to-end and runnable; each ends with a working sample "
     "repository"),
    ("issue_docs_openapi_examples", "Request examples in the API reference were missing; added x-codeSamples "
     "to the OpenAPI spec"),
    ("result_docs_lighthouse", "Lighthouse performance 96 on the home page after lazy-loading the video"),
    ("convention_docs_links", "Link to other pages with relative paths to the .md file, not URLs"),
    ("issue_docs_404_old_urls", "Old /docs/v1/ URLs from Stack Overflow answers returned 404; added a "
     "redirect map"),
    ("fact_docs_domain", "Docs live at docs.example.com; the status page at status.example.com"),
    ("decision_docs_glossary", "A glossary page defines account, workspace and organization; other pages "
     "link to it"),
    ("issue_docs_math_rendering", "Formulas in the ranking explainer rendered as raw LaTeX; added remark-math "
     "and rehype-katex"),
    ("result_docs_support_tickets", "Support tickets about webhooks fell 35% after the webhook guide rewrite"),
    # --- the operator's preferences ---
    ("pref_one_question", "Ask one question at a time, and only when you cannot proceed without the answer"),
    ("pref_no_force_push", "Never force-push to main or any shared branch"),
    ("pref_commit_messages", "Commit messages: imperative mood, under 72 characters, explain why in the body"),
    ("pref_tests_before_done", "Run the tests of the area you changed before saying a task is done"),
    ("pref_no_new_dependencies", "Do not add a dependency without asking; prefer the standard library"),
    ("pref_summary_style", "End each session with a short summary: done, open, next"),
    ("pref_time_zone", "I work in Europe/Berlin time; schedule nothing before 09:00 my time"),
    ("pref_language", "Write code comments and docs in English, even when I write in German"),
    ("pref_prod_access", "Ask before running anything against production, including read-only queries"),
    ("pref_pr_size", "Keep pull requests under 400 changed lines; split bigger work"),
    ("pref_formatting", "Python formatted with ruff format, line length 100"),
    ("pref_secrets", "Never paste tokens or passwords into the context or chat; refer to the vault item"),
    ("pref_meetings", "No meetings on Fridays; async updates in the team channel"),
    ("pref_explanations", "Explain trade-offs briefly, then recommend one option"),
    ("pref_review", "Request review from the module owner, not the whole team"),
    # --- an agent's own notes ---
    ("note_agent_env_python", "This machine has Python 3.12 at /usr/bin/python3; use the repo's .venv"),
    ("note_agent_make_targets", "make test runs unit tests; make e2e needs Docker running"),
    ("note_agent_flaky_test", "test_checkout_concurrency is flaky under load; rerun once before investigating"),
    ("note_agent_gh_cli", "gh is authenticated as the bot account; it can open PRs but not merge"),
    ("note_agent_local_db", "Local Postgres runs in docker compose on port 5433, not 5432"),
    ("note_agent_node_version", "The mobile repo needs Node 18; nvm use picks it from .nvmrc"),
    ("note_agent_pre_commit", "pre-commit hooks run ruff, mypy and a secret scanner; install with "
     "pre-commit install"),
    ("note_agent_docs_local", "Run the docs locally with npm run start in docs/, served on port 3000"),
    ("note_agent_terraform_plan", "terraform plan needs AWS_PROFILE=infra-readonly"),
    ("note_agent_snowflake_login", "Snowflake CLI login uses browser SSO: snow connection test -c analytics"),
]

# (kind, question, keys that answer it)
QUESTIONS: list[tuple[str, str, tuple[str, ...]]] = [
    # --- in other words ---
    ("other", "why do big file transfers break", ("issue_api_upload_timeout",)),
    ("other", "https lapsed over a weekend and broke everything", ("issue_infra_cert_expiry",)),
    ("other", "phone app dies immediately when opened on apple devices", ("issue_mobile_ios_crash_launch",)),
    ("other", "users with google phones no longer get alerts", ("issue_mobile_android_push",)),
    ("other", "how many simultaneous sql sessions can each replica hold", ("decision_api_db_pool",)),
    ("other", "payment provider callbacks executed repeatedly", ("issue_api_webhook_retries",)),
    ("other", "which tool schedules our nightly jobs", ("decision_etl_orchestrator",)),
    ("other", "our cloud spending breakdown", ("result_infra_monthly_cost",)),
    ("other", "model produced not-a-number during learning", ("issue_train_loss_nan",)),
    ("other", "gpu exhausted its ram on larger inputs", ("issue_train_cuda_oom",)),
    ("other", "whose approval do reimbursement modifications need", ("fact_api_owner",)),
    ("other", "lookup on the manual website returns articles that were taken away", ("issue_docs_search_stale",)),
    ("other", "finance summaries had small rounding errors in totals", ("issue_etl_float_money",)),
    ("other", "on-screen typing pad hides where customers enter their delivery location",
     ("issue_mobile_keyboard_covers_input",)),
    ("other", "how to connect to internal machines remotely", ("fact_infra_vpn",)),
    ("other", "analytics spend exploded because a chart reloaded constantly", ("issue_etl_snowflake_costs",)),
    ("other", "oldest handset operating systems we still run on", ("decision_mobile_min_versions",)),
    ("other", "distributed job frozen when gpus communicate across servers", ("issue_train_nccl_hang",)),
    ("other", "suspiciously perfect score because a future field gave the answer away",
     ("issue_train_data_leak",)),
    ("other", "why the iphone store turned down our submission", ("issue_mobile_app_review_rejection",)),
    ("other", "how long to bring everything back after losing it all", ("result_infra_restore_drill",)),
    ("other", "printable receipts show empty characters", ("issue_api_pdf_generation",)),
    ("other", "who delivers messages like password resets to customer inboxes", ("decision_api_email_provider",)),
    ("other", "where do passwords for running containers come from", ("decision_infra_secrets",)),
    ("other", "slow first screen when opening the application", ("result_mobile_startup_time",)),
    ("other", "grammar and voice guidance for documentation pages", ("convention_docs_style",)),
    ("other", "foreign exchange applied on an incorrect day for european sales",
     ("issue_etl_currency_conversion",)),
    ("other", "bad gateway responses whenever we ship a new release", ("issue_infra_ingress_502",)),
    ("other", "what happens when cheap cloud machines get taken away", ("issue_train_spot_preemption",)),
    ("other", "who gets woken up when warehouse loads fail", ("fact_etl_owner",)),
    # --- in the entry's own words ---
    ("own", "proxy_read_timeout", ("issue_api_upload_timeout",)),
    ("own", "Hermes", ("issue_mobile_ios_crash_launch",)),
    ("own", "Dagster", ("decision_etl_orchestrator", "issue_etl_dagster_sensor")),
    ("own", "NCCL network interface", ("issue_train_nccl_hang",)),
    ("own", "cursor pagination", ("decision_api_pagination",)),
    ("own", "Docusaurus", ("decision_docs_generator", "issue_docs_broken_links")),
    ("own", "Snowflake credits", ("issue_etl_snowflake_costs",)),
    ("own", "force-push", ("pref_no_force_push",)),
    ("own", "gradient clipping", ("issue_train_loss_nan",)),
    ("own", "preStop sleep", ("issue_infra_ingress_502",)),
    ("own", "RevenueCat", ("decision_mobile_payments",)),
    ("own", "Algolia", ("fact_docs_search", "issue_docs_search_stale")),
    ("own", "replication slot", ("issue_infra_disk_full",)),
    ("own", "trigram index", ("issue_api_slow_search",)),
    ("own", "salted SHA-256", ("decision_etl_pii",)),
    ("own", "Optuna trials", ("decision_train_hparam_search",)),
    ("own", "deep links", ("issue_mobile_deep_links",)),
    ("own", "Tailscale", ("fact_infra_vpn",)),
    ("own", "sidebar_position", ("issue_docs_sidebar_order",)),
    ("own", "LaunchDarkly feature flags", ("convention_api_feature_flags",)),
    ("own", "Postgres 5433", ("note_agent_local_db",)),
    ("own", "blameless postmortem", ("convention_infra_incidents",)),
    # --- mixed ---
    ("mixed", "nginx limit on large uploads", ("issue_api_upload_timeout",)),
    ("mixed", "push notifications not arriving on new phones", ("issue_mobile_android_push",)),
    ("mixed", "duplicate orders after a retry", ("issue_etl_duplicate_rows",)),
    ("mixed", "spark job crashing from memory on popular users", ("issue_etl_spark_oom",)),
    ("mixed", "redis failover makes the api fail", ("issue_infra_redis_failover",)),
    ("mixed", "dark mode colors broken in order history", ("issue_mobile_dark_mode",)),
    ("mixed", "tokenizer different at serving time", ("issue_train_tokenizer_mismatch",)),
    ("mixed", "redirects for old documentation urls", ("issue_docs_404_old_urls", "issue_docs_broken_links")),
    ("mixed", "which orchestration tool replaced Airflow", ("decision_etl_orchestrator",)),
    ("mixed", "kubernetes node autoscaling tool", ("decision_infra_k8s",)),
    ("mixed", "why the dataloader made gpus idle", ("issue_train_dataloader_slow",)),
    ("mixed", "timezone of daily revenue numbers", ("issue_etl_timezone_daily",)),
    ("mixed", "rate limiting per customer key", ("decision_api_rate_limit",)),
    ("mixed", "how to fix a deadlock on invoices", ("issue_api_deadlock",)),
    ("mixed", "memory growing in api containers over time", ("issue_api_memory_leak",)),
    ("mixed", "location tracking battery usage", ("issue_mobile_battery_drain",)),
    ("mixed", "how big is the docker image for the backend", ("issue_infra_image_size",)),
    ("mixed", "best step size for training the ranker", ("result_train_lr_sweep",)),
    ("mixed", "cookie consent on the documentation site", ("issue_docs_analytics_consent",)),
    ("mixed", "questions to the operator one at a time", ("pref_one_question",)),
    ("mixed", "terraform state drift detection", ("issue_infra_terraform_drift",)),
]

KINDS = ("other", "own", "mixed")


def area(key: str, areas: dict[str, tuple[str, str]] | None = None) -> str:
    first = key.split("_")[0]
    return first if first in ("pref", "note") else key.split("_")[1]


def store_of(key: str, areas: dict[str, tuple[str, str]] | None = None) -> str:
    return (areas or AREAS)[area(key)][0]


def tags_of(key: str, areas: dict[str, tuple[str, str]] | None = None) -> list[str]:
    kind, tag = key.split("_")[0], (areas or AREAS)[area(key)][1]
    return [tag] if kind in ("pref", "note") else [kind, tag]


def entries_by_store(timestamp: str = "2026-11-20T10:00:00Z", areas: dict[str, tuple[str, str]] | None = None,
                     entries: list[tuple[str, str]] | None = None) -> dict[str, dict[str, dict]]:
    """The set as store contents: {store: {key: entry}} (every entry a §3 entry); another set's
    ``areas`` and ``entries`` give that set's (``heldout.py``)."""
    stores: dict[str, dict[str, dict]] = {"operator": {}, "shared": {}, "agent": {}}
    for key, value in ENTRIES if entries is None else entries:
        store = store_of(key, areas)
        source = "operator" if store == "operator" else "agent"
        stores[store][key] = {"value": value, "source": source, "timestamp": timestamp,
                              "basis": "verified", "tags": tags_of(key, areas)}
    return stores
