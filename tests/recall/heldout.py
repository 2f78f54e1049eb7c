"""The held-out recall set: another company's context, never used to choose a weight or a gate.

Written before the ranking of the sentence model was tuned (issue 38: tune on one set,
report on another). The tuning set is ``evalset.py``; ``rank.py``'s weight and the model's
gate were chosen on it alone, and ``bench/recall.py`` prints this set beside it. Its
projects differ from the tuning set's: a storefront, a payments service, a thermostat's
firmware, a mobile game, a search team, security work, the operator's preferences and
an agent's notes. Questions are of the same three kinds (``evalset.py`` says what each
means) and keep the same rules (``test_evalset.py``).
"""

from __future__ import annotations

from recall import evalset

# area -> (store, tag) every entry of that area carries
AREAS = {
    "shop": ("shared", "storefront"), "pay": ("shared", "payments"), "fw": ("shared", "firmware"),
    "game": ("shared", "game"), "search": ("shared", "relevance"), "sec": ("shared", "security"),
    "pref": ("operator", "preference"), "note": ("agent", "note"),
}

ENTRIES: list[tuple[str, str]] = [
    # --- the storefront ---
    ("decision_shop_framework", "Storefront is Next.js 14 with the app router, rendered on Vercel; product "
     "pages revalidate every 300 s"),
    ("issue_shop_cart_lost", "Carts emptied after login because the anonymous cart cookie was scoped to "
     "www.shop.example.com only; now set on .shop.example.com"),
    ("result_shop_lcp", "Largest contentful paint on the product page dropped from 3.9 s to 1.7 s after "
     "serving AVIF thumbnails"),
    ("convention_shop_prices", "Prices are integers in minor units with an ISO 4217 currency code; never "
     "floats"),
    ("issue_shop_checkout_double_click", "A double click on Place order created two orders; the button is "
     "now disabled on submit and orders carry an idempotency key"),
    ("decision_shop_search_box", "Search box uses Typesense with typo tolerance 2; Algolia quote was four "
     "times the cost"),
    ("fact_shop_cdn", "Static assets sit behind Cloudflare; purge with the purge-cache GitHub workflow, not "
     "by hand"),
    ("issue_shop_coupon_stacking", "Two percentage coupons could be combined to reach 100% off; only one "
     "coupon per order since release 2.8"),
    ("result_shop_ab_test", "The one-page checkout A/B test raised conversion from 2.1% to 2.4% over 3 "
     "weeks, significant at p=0.03"),
    ("issue_shop_sitemap", "Google indexed out-of-stock variants: sitemap.xml listed every SKU; now only "
     "purchasable products"),
    ("convention_shop_i18n", "Copy lives in messages/*.json keyed by dotted ids; translators work in "
     "Crowdin, never edit the JSON directly"),
    ("fact_shop_owner", "Storefront on-call is Priya this quarter; pager rotation in Opsgenie"),
    ("issue_shop_hydration", "React hydration mismatch on the header: the server rendered UTC dates, the "
     "browser local ones; dates now formatted on the client only"),
    ("decision_shop_images", "Product images are resized by imgproxy at the edge; originals stay in the "
     "S3 bucket shop-originals"),
    # --- the payments service ---
    ("decision_pay_language", "Payments service is written in Go 1.22 with chi and sqlc; no ORM"),
    ("issue_pay_webhook_signature", "Adyen webhook HMAC checks failed after the body was re-serialized by "
     "middleware; verify on the raw bytes"),
    ("convention_pay_ledger", "The ledger is double-entry and append-only: a correction is a new reversing "
     "entry, rows are never updated"),
    ("result_pay_reconciliation", "Nightly reconciliation against the acquirer's settlement file matched "
     "99.97% of 1.2 million transactions in November"),
    ("issue_pay_3ds_timeout", "3-D Secure challenges timed out on slow networks: the iframe was given 30 "
     "s; raised to 120 s as the card schemes allow"),
    ("decision_pay_retries", "Declined recurring charges are retried on days 1, 3 and 7, then the "
     "subscription is paused"),
    ("fact_pay_pci_scope", "Card numbers never touch our servers: the hosted fields tokenize in the "
     "browser, keeping us in PCI SAQ A"),
    ("issue_pay_refund_race", "Partial refunds issued twice when support clicked during a slow response; "
     "refunds now take a row lock on the payment"),
    ("result_pay_latency", "Authorization p95 is 410 ms, of which 350 ms is the acquirer round trip"),
    ("convention_pay_amounts", "Money crosses service boundaries as a decimal string plus currency, never as "
     "a JSON number"),
    ("issue_pay_fx_rounding", "Japanese yen amounts were multiplied by 100 like cents: JPY has no minor "
     "unit; currency exponents now come from ISO 4217 data"),
    ("fact_pay_sandbox", "Adyen test cards are listed in the team wiki page Payments/Testing; 4111 1111 "
     "1111 1111 works for plain approvals"),
    ("decision_pay_fraud", "Fraud screening uses Stripe Radar rules on the Stripe account and Adyen's "
     "RevenueProtect on the other; both score before capture"),
    # --- the thermostat firmware ---
    ("decision_fw_rtos", "Thermostat firmware runs Zephyr RTOS 3.5 on an nRF52840"),
    ("issue_fw_ota_brick", "Over-the-air updates bricked 40 units when power dropped mid-write; now A/B "
     "slots with MCUboot and a rollback on failed boot"),
    ("result_fw_battery", "Battery life measured at 14 months on two AA cells with a 60 s sensor interval "
     "and BLE advertising every 2 s"),
    ("issue_fw_sensor_drift", "The SHT40 humidity reading drifted 6% high next to the display backlight; "
     "sensor moved to the far edge of the board in rev C"),
    ("convention_fw_logging", "Firmware logs go through the Zephyr log module with deferred mode; no printk "
     "in release builds"),
    ("issue_fw_watchdog", "A watchdog reset every few days traced to an I2C bus lockup; the driver now "
     "clocks out nine pulses to free SDA"),
    ("fact_fw_flashing", "Flash dev boards with west flash --runner jlink; the J-Link serial numbers are "
     "taped under each board"),
    ("decision_fw_protocol", "Devices talk to the hub over Thread with Matter 1.2; the old proprietary "
     "Zigbee profile is dropped"),
    ("issue_fw_clock_skew", "Schedules fired minutes late because the 32 kHz crystal was unpopulated on a "
     "batch; RTC now calibrated against network time daily"),
    ("result_fw_binary_size", "Release image is 412 KB of the 472 KB slot after enabling LTO and dropping "
     "the shell"),
    ("convention_fw_pins", "Pin assignments live only in the devicetree overlay, never as constants in C"),
    ("fact_fw_factory_test", "The factory test jig runs tests/jig.py over UART at 115200 baud and prints "
     "PASS or a fault code"),
    # --- the mobile game ---
    ("decision_game_engine", "The game is built in Unity 2022 LTS with URP; addressables for downloadable "
     "content"),
    ("issue_game_frame_drops", "Frame rate fell to 20 fps on mid-range Android in the market scene: 300 "
     "draw calls; sprites now batched into atlases"),
    ("result_game_retention", "Day-7 retention is 18% on iOS and 12% on Android for the November cohort"),
    ("issue_game_save_corruption", "Save files corrupted when the app was killed during a write; saves now "
     "go to a temp file and are renamed"),
    ("convention_game_balance", "Economy numbers live in the balance spreadsheet and export to "
     "ScriptableObjects; never edit them in a scene"),
    ("decision_game_backend", "Player accounts and leaderboards run on Nakama, self-hosted on one "
     "Kubernetes cluster"),
    ("issue_game_cheating", "Leaderboard flooded with impossible scores from a modified client; scores are "
     "now validated server-side from the replayed inputs"),
    ("fact_game_build", "Builds run on a Mac mini in the office through Unity Cloud Build fallback; the "
     "keystore passphrase is in the vault entry game-android"),
    ("issue_game_ads_crash", "The ad SDK crashed on Android 14 when a rewarded video closed; pinned to SDK "
     "version 7.4.1 until the vendor fixes it"),
    ("result_game_download_size", "Initial download is 148 MB; the target store limit for cellular "
     "downloads is 200 MB"),
    ("convention_game_localization", "Every player-facing string goes through the Localization package "
     "tables; text in prefabs fails review"),
    ("issue_game_iap_restore", "Restore purchases did nothing on a new iPhone: receipts were checked before "
     "the store finished syncing; now waits for the transaction observer"),
    # --- the search relevance team ---
    ("decision_search_engine", "Product search runs on Elasticsearch 8 with a BM25 first pass and a "
     "learning-to-rank rescore of the top 200"),
    ("result_search_ndcg", "NDCG@10 on the judged query set rose from 0.61 to 0.68 with the LambdaMART "
     "reranker"),
    ("issue_search_synonyms", "Searching for sofa missed couches: the synonym file was loaded only at index "
     "time; synonyms now apply at query time"),
    ("convention_search_judgments", "Relevance judgments use a 0-3 scale, three raters per query, "
     "disagreements settled by the lead"),
    ("issue_search_zero_results", "11% of queries returned zero results, mostly misspellings; fuzziness "
     "AUTO added on the title field"),
    ("fact_search_cluster", "The production cluster has 6 data nodes with 64 GB each; snapshots go to the "
     "bucket es-snapshots nightly"),
    ("issue_search_reindex_downtime", "Reindexing took the search offline for 40 minutes; now we build a new "
     "index and swap the alias"),
    ("decision_search_embeddings", "Dense retrieval with e5-small vectors was tried and shelved: no gain "
     "over BM25 plus LTR on our catalogue"),
    ("result_search_latency", "Search p99 is 95 ms at 400 queries per second after caching the filter "
     "aggregations"),
    ("issue_search_stemming", "German queries for Schuhe did not match Schuh: the analyzer was English; "
     "each language now has its own analyzer"),
    # --- security ---
    ("decision_sec_sso", "Staff sign in through Okta with WebAuthn keys; SMS codes are disabled for "
     "everyone"),
    ("issue_sec_leaked_key", "An AWS access key was committed to a public gist; revoked within 9 minutes, "
     "CloudTrail showed no use"),
    ("convention_sec_dependencies", "Dependabot pull requests for security fixes are merged within 72 "
     "hours; others batched weekly"),
    ("result_sec_pentest", "The October penetration test found 2 medium findings, both fixed: an open "
     "redirect and missing rate limiting on password reset"),
    ("fact_sec_soc2", "SOC 2 Type II audit window runs January to June; evidence is collected in Vanta"),
    ("issue_sec_s3_public", "A marketing bucket was public and listed customer CSV exports; public access "
     "block is now enforced at the organization level"),
    ("decision_sec_secrets", "Application secrets live in AWS Secrets Manager, fetched at start by the "
     "External Secrets operator"),
    ("convention_sec_access_reviews", "Access to production is reviewed every quarter; unused accounts are "
     "removed after 30 days"),
    ("issue_sec_xss", "Stored XSS through product review text rendered with dangerouslySetInnerHTML; reviews "
     "now sanitized with DOMPurify"),
    ("fact_sec_incident_contact", "Security incidents go to security@example.com and the #sec-incident "
     "channel; the CISO is Marcus"),
    # --- the operator's preferences ---
    ("pref_commit_imperative", "Commit messages in the imperative, under 72 characters, with the ticket id "
     "at the end"),
    ("pref_no_friday_deploys", "No production deploys after 15:00 on Fridays"),
    ("pref_tests_first", "Write a failing test before fixing a bug"),
    ("pref_small_prs", "Pull requests under 400 changed lines; split anything bigger"),
    ("pref_british_spelling", "Use British spelling in user-facing text: colour, organisation"),
    ("pref_ask_before_deleting", "Ask before deleting any branch, bucket or database"),
    ("pref_explain_tradeoffs", "When proposing a design, list two alternatives and why they lost"),
    # --- an agent's own notes ---
    ("note_agent_staging_db", "Staging database restores from the Sunday snapshot; data older than a week "
     "is gone"),
    ("note_agent_flaky_checkout", "test_checkout_flow is flaky under parallel runs; run it with -p no:xdist"),
    ("note_agent_node_twenty", "The storefront needs Node 20; nvm use before npm install"),
    ("note_agent_go_generate", "Run sqlc generate after changing any query in payments/queries/"),
    ("note_agent_unity_license", "Unity batch mode needs the license file at ~/.local/share/unity3d; CI "
     "copies it from the secret"),
]

QUESTIONS: list[tuple[str, str, tuple[str, ...]]] = [
    # --- in other words: no word of the question is the entry's ---
    ("other", "why did shoppers' baskets vanish once they signed in", ("issue_shop_cart_lost",)),
    ("other", "how quickly does the main picture appear for someone browsing an item",
     ("result_shop_lcp",)),
    ("other", "customers got charged twice after tapping the buy control repeatedly",
     ("issue_shop_checkout_double_click",)),
    ("other", "discount codes used together to make things free", ("issue_shop_coupon_stacking",)),
    ("other", "who answers alerts for the online store", ("fact_shop_owner",)),
    ("other", "what does our money movement backend use as its programming stack", ("decision_pay_language",)),
    ("other", "we can't change bookkeeping records once written, how do we fix mistakes",
     ("convention_pay_ledger",)),
    ("other", "bank verification popups expiring for people on weak connections", ("issue_pay_3ds_timeout",)),
    ("other", "what happens when a monthly renewal bounces", ("decision_pay_retries",)),
    ("other", "giving money back happened two times", ("issue_pay_refund_race",)),
    ("other", "charges in japan's money were a hundredfold too large", ("issue_pay_fx_rounding",)),
    ("other", "devices dead after a remote upgrade", ("issue_fw_ota_brick",)),
    ("other", "how long until someone must swap the batteries",
     ("result_fw_battery",)),
    ("other", "moisture measurement wrong near the screen light", ("issue_fw_sensor_drift",)),
    ("other", "gadget reboots itself occasionally", ("issue_fw_watchdog",)),
    ("other", "timed routines run behind on a few devices", ("issue_fw_clock_skew",)),
    ("other", "choppy animation on cheaper phones in one level", ("issue_game_frame_drops",)),
    ("other", "share of gamers who come back after a week", ("result_game_retention",)),
    ("other", "progress gets lost if someone force-quits", ("issue_game_save_corruption",)),
    ("other", "people posting fake high rankings with hacked apps", ("issue_game_cheating",)),
    ("other", "previously bought items not coming back on a replacement handset", ("issue_game_iap_restore",)),
    ("other", "looking up a settee skips the loveseat listings", ("issue_search_synonyms",)),
    ("other", "typos give an empty page when looking for things", ("issue_search_zero_results",)),
    ("other", "finding items was unavailable during a rebuild", ("issue_search_reindex_downtime",)),
    ("other", "credentials of the cloud provider exposed online", ("issue_sec_leaked_key",)),
    ("other", "how do employees log in to internal tools", ("decision_sec_sso",)),
    ("other", "spreadsheets of clients were reachable by anyone on the internet", ("issue_sec_s3_public",)),
    ("other", "malicious scripts injected via user feedback", ("issue_sec_xss",)),
    ("other", "shipping to live systems late in the week", ("pref_no_friday_deploys",)),
    ("other", "should I remove an old storage without checking", ("pref_ask_before_deleting",)),
    # --- in the entry's own words ---
    ("own", "Typesense", ("decision_shop_search_box",)),
    ("own", "idempotency key", ("issue_shop_checkout_double_click",)),
    ("own", "hydration mismatch", ("issue_shop_hydration",)),
    ("own", "Adyen webhook HMAC", ("issue_pay_webhook_signature",)),
    ("own", "PCI SAQ A", ("fact_pay_pci_scope",)),
    ("own", "MCUboot", ("issue_fw_ota_brick",)),
    ("own", "devicetree overlay", ("convention_fw_pins",)),
    ("own", "Nakama", ("decision_game_backend",)),
    ("own", "LambdaMART", ("result_search_ndcg",)),
    ("own", "Vanta", ("fact_sec_soc2",)),
    ("own", "DOMPurify", ("issue_sec_xss",)),
    ("own", "sqlc generate", ("note_agent_go_generate",)),
    # --- mixed: some of the entry's words, some not ---
    ("mixed", "cart cookie domain problem at sign-in", ("issue_shop_cart_lost",)),
    ("mixed", "sitemap showing products nobody can buy", ("issue_shop_sitemap",)),
    ("mixed", "webhook verification breaking after parsing the payload", ("issue_pay_webhook_signature",)),
    ("mixed", "reconciliation match rate last month", ("result_pay_reconciliation",)),
    ("mixed", "firmware image too large for its partition", ("result_fw_binary_size",)),
    ("mixed", "which radio protocol replaced Zigbee", ("decision_fw_protocol",)),
    ("mixed", "ad SDK crashing after a reward clip", ("issue_game_ads_crash",)),
    ("mixed", "how big is the game download on phones", ("result_game_download_size",)),
    ("mixed", "German shoe searches not matching", ("issue_search_stemming",)),
    ("mixed", "how fast is search under heavy traffic", ("result_search_latency",)),
    ("mixed", "penetration test results this autumn", ("result_sec_pentest",)),
    ("mixed", "which Node release the storefront wants", ("note_agent_node_twenty",)),
]

KINDS = evalset.KINDS


def store_of(key: str) -> str:
    return evalset.store_of(key, AREAS)


def tags_of(key: str) -> list[str]:
    return evalset.tags_of(key, AREAS)


def entries_by_store(timestamp: str = "2026-11-20T10:00:00Z") -> dict[str, dict[str, dict]]:
    return evalset.entries_by_store(timestamp, AREAS, ENTRIES)
