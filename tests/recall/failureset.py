"""The failure set: failing commands an agent runs, some whose fix the context holds, some
not, to pick and check the gate of recall at a failing command (``ctx event failure``).

Written before the gate was picked, and not changed to suit it. The context is the recall
evaluation set (``evalset.py``: about a hundred entries of seven areas) plus ``FIXES``: entries
that record what a failure meant and how it was fixed, as an agent writes them after the
fact. Each fix has two failures that it answers, written independently (another command,
another wording of the error, as it comes back weeks later); the first of each pair is in
``TUNING``, the second in ``HELD_OUT``. ``UNRELATED`` are failures nothing in the context
answers (half tuning, half held out), many of them near an area of the context (a Postgres
error the context has nothing about, a failing test, a typo), so that a gate that answers
every failure of a known area fails here.

``bench/recallhook.py`` prints the shares on both halves; tests/recall/test_failure_recall.py
holds the held-out half to the issue's floors (a fix found for at least 0.8 of the failures
that have one, anything at all for at most 0.1 of those that have none).
"""

from __future__ import annotations

# key -> value: fixes an agent recorded
FIXES: dict[str, str] = {
    "fix_kubeconfig_unset": "kubectl and helm fail with 'KUBECONFIG not set' in non-login shells: run "
                            "`export KUBECONFIG=~/.kube/staging.yaml` first (deploy.sh does it)",
    "fix_npm_eresolve_react": "npm install fails with ERESOLVE unable to resolve dependency tree over the "
                              "react peer dependency of react-native-maps: use `npm install --legacy-peer-deps`",
    "fix_pg_role_missing": "psql: FATAL role \"app\" does not exist on a fresh local Postgres: create it with "
                           "`createuser -s app`, the migrations expect it",
    "fix_docker_buildx_arm": "docker build fails with 'exec format error' for the arm64 image on the x86 CI "
                             "runner: build with `docker buildx build --platform linux/arm64` and qemu set up",
    "fix_pytest_asyncio_mode": "pytest errors 'async def functions are not natively supported' in the API "
                               "tests: asyncio_mode = auto must be in pyproject's [tool.pytest.ini_options]",
    "fix_gradle_java_version": "Android gradle build fails 'Unsupported class file major version 65': the "
                               "build needs JDK 17, set JAVA_HOME to /usr/lib/jvm/java-17",
    "fix_alembic_multiple_heads": "alembic upgrade fails with 'Multiple head revisions are present': run "
                                  "`alembic merge heads -m merge` and commit the merge revision",
    "fix_terraform_state_lock": "terraform plan fails with 'Error acquiring the state lock' after a killed "
                                "run: `terraform force-unlock <LOCK_ID>` once you are sure nothing runs",
    "fix_cuda_oom_batch": "training crashes with CUDA out of memory at batch size 64 on the A10: use batch "
                          "32 with gradient accumulation 2 (same effective batch)",
    "fix_ssh_host_key_bastion": "ssh to the bastion fails 'REMOTE HOST IDENTIFICATION HAS CHANGED' since it "
                                "was rebuilt on 2026-10-02: `ssh-keygen -R bastion.example.com` then accept "
                                "the new key (fingerprint in the infra runbook)",
    "fix_mkdocs_plugin_missing": "mkdocs build fails 'The \"mermaid2\" plugin is not installed': pip install "
                                 "-r docs/requirements.txt, not only mkdocs-material",
    "fix_airflow_dag_import": "Airflow shows 'Broken DAG' ModuleNotFoundError for etl_common: the package "
                              "must be in the scheduler image; rebuild the airflow image after changing it",
    "fix_pod_pending_quota": "pods stay Pending with 'exceeded quota: compute-resources' in the staging "
                             "namespace: lower the requests or ask for a quota raise; do not delete others' pods",
    "fix_git_push_rejected_protected": "git push to main is rejected 'protected branch hook declined': "
                                       "push a branch and open a merge request; main takes no direct push",
    "fix_port_in_use_dev_server": "uvicorn fails 'address already in use' on port 8000: an old dev server "
                                  "is still running; `lsof -ti :8000 | xargs kill`",
    "fix_expo_metro_cache": "Metro bundler fails 'Unable to resolve module' after switching branches in "
                            "the mobile app: `npx expo start --clear` clears its cache",
}

# (command, error, the fix it should bring back)
PAIRS: list[tuple[tuple[str, str], tuple[str, str], str]] = [
    (("kubectl get pods -n staging", "Exit code 1\nerror: KUBECONFIG not set"),
     ("helm upgrade api ./chart", "Error: Kubernetes cluster unreachable: KUBECONFIG environment variable is not set"),
     "fix_kubeconfig_unset"),
    (("npm install", "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\n"
      "npm ERR! peer react@\"^18.0.0\" from react-native-maps@1.8.0"),
     ("npm ci", "npm error code ERESOLVE\nnpm error Could not resolve dependency: peer react from "
      "react-native-maps"),
     "fix_npm_eresolve_react"),
    (("psql -d app_dev", "psql: error: connection to server on socket failed: FATAL:  role \"app\" does not exist"),
     ("alembic upgrade head", "sqlalchemy.exc.OperationalError: (psycopg.OperationalError) FATAL: role \"app\" "
      "does not exist"),
     "fix_pg_role_missing"),
    (("docker build -t api:arm64 .", "exec /bin/sh: exec format error\nERROR: process \"/bin/sh -c pip install\" "
      "did not complete successfully: exit code: 1"),
     ("docker run --rm api:arm64 python -V", "exec /usr/local/bin/python: exec format error"),
     "fix_docker_buildx_arm"),
    (("pytest tests/api", "async def functions are not natively supported.\nYou need to install a suitable "
      "plugin for your async framework"),
     ("python -m pytest tests/api/test_orders.py", "PytestUnhandledCoroutineWarning: async def functions are not "
      "natively supported and have been skipped"),
     "fix_pytest_asyncio_mode"),
    (("./gradlew assembleDebug", "General error during conversion: Unsupported class file major version 65"),
     ("./gradlew :app:bundleRelease", "BUG! exception in phase 'semantic analysis': Unsupported class file "
      "major version 65"),
     "fix_gradle_java_version"),
    (("alembic upgrade head", "FAILED: Multiple head revisions are present for given argument 'head'"),
     ("alembic revision --autogenerate -m add_index", "ERROR [alembic.util.messaging] Multiple heads are "
      "present; please specify the head revision"),
     "fix_alembic_multiple_heads"),
    (("terraform plan", "Error: Error acquiring the state lock\nLock Info: ID: 4f1c..."),
     ("terraform apply -auto-approve", "Error locking state: Error acquiring the state lock: "
      "ConditionalCheckFailedException"),
     "fix_terraform_state_lock"),
    (("python train.py --batch-size 64", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"),
     ("accelerate launch train.py", "RuntimeError: CUDA error: out of memory"),
     "fix_cuda_oom_batch"),
    (("ssh bastion.example.com", "@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@\n"
      "Host key verification failed."),
     ("scp dump.sql bastion.example.com:/tmp", "Host key for bastion.example.com has changed and you have "
      "requested strict checking.\nHost key verification failed."),
     "fix_ssh_host_key_bastion"),
    (("mkdocs build --strict", "Error: The \"mermaid2\" plugin is not installed"),
     ("mkdocs serve", "ERROR - Config value 'plugins': The \"mermaid2\" plugin is not installed"),
     "fix_mkdocs_plugin_missing"),
    (("airflow dags list-import-errors", "Broken DAG: [/opt/airflow/dags/nightly.py] ModuleNotFoundError: "
      "No module named 'etl_common'"),
     ("airflow dags test nightly_load", "ModuleNotFoundError: No module named 'etl_common'"),
     "fix_airflow_dag_import"),
    (("kubectl rollout status deploy/api -n staging", "Waiting for deployment rollout: 0 of 3 updated replicas "
      "are available; pods Pending: exceeded quota: compute-resources"),
     ("kubectl describe pod api-7d9 -n staging", "Warning FailedCreate: pods \"api-7d9\" is forbidden: exceeded "
      "quota: compute-resources, requested: cpu=2"),
     "fix_pod_pending_quota"),
    (("git push origin main", "remote: GitLab: You are not allowed to push code to protected branches on this "
      "project.\n! [remote rejected] main -> main (pre-receive hook declined)"),
     ("git push", "! [remote rejected] main -> main (protected branch hook declined)\nerror: failed to push "
      "some refs"),
     "fix_git_push_rejected_protected"),
    (("uvicorn app.main:app --reload", "ERROR:    [Errno 98] error while attempting to bind on address "
      "('127.0.0.1', 8000): address already in use"),
     ("make dev", "OSError: [Errno 98] Address already in use: port 8000"),
     "fix_port_in_use_dev_server"),
    (("npx expo start", "Unable to resolve module ./src/screens/Upload from App.tsx"),
     ("npx react-native run-android", "error: Error: Unable to resolve module @/components/ProgressBar"),
     "fix_expo_metro_cache"),
]

# (command, error): failures nothing in the context answers
UNRELATED: list[tuple[str, str]] = [
    ("pytest tests/api/test_invoices.py", "AssertionError: assert 404 == 200"),
    ("ls /data/exports", "ls: cannot access '/data/exports': No such file or directory"),
    ("python -c 'import polars'", "ModuleNotFoundError: No module named 'polars'"),
    ("cargo build", "error[E0382]: borrow of moved value: `config`"),
    ("psql -c 'select * from invoices_archive'", "ERROR:  relation \"invoices_archive\" does not exist"),
    ("make lint", "src/upload.py:12:1: F401 'os' imported but unused"),
    ("curl -sf https://api.staging.example.com/health", "curl: (22) The requested URL returned error: 503"),
    ("go test ./...", "--- FAIL: TestParseDate (0.00s)\n    date_test.go:18: got 2026-01-02, want 2026-01-01"),
    ("node scripts/seed.js", "TypeError: Cannot read properties of undefined (reading 'map')"),
    ("grep -r TODO src | wc -l", "grep: src: No such file or directory"),
    ("git checkout feature/payments", "error: pathspec 'feature/payments' did not match any file(s) known to git"),
    ("java -jar tools/converter.jar", "Error: Unable to access jarfile tools/converter.jar"),
    ("tsc --noEmit", "src/api/client.ts(41,7): error TS2322: Type 'string' is not assignable to type 'number'."),
    ("python manage.py runserver", "python: can't open file 'manage.py': [Errno 2] No such file or directory"),
    ("yarn test", "FAIL src/utils/format.test.ts\n  Expected: \"1,200\"\n  Received: \"1200\""),
    ("rsync -a build/ web:/srv/docs", "rsync: [sender] change_dir \"/work/build\" failed: No such file or directory"),
    ("jq .items[0].id response.json", "jq: error (at response.json:0): Cannot index string with \"items\""),
    ("mv report.csv /mnt/shared/", "mv: cannot move 'report.csv' to '/mnt/shared/': Permission denied"),
    ("python scripts/compare.py", "ZeroDivisionError: division by zero"),
    ("sqlite3 cache.db 'vacuum'", "Error: database is locked"),
]


def _split(items: list, half: int) -> list:
    return [item for i, item in enumerate(items) if i % 2 == half]


# (command, error, expected fix key or None)
TUNING: list[tuple[str, str, str | None]] = ([(*first, key) for first, _, key in PAIRS]
                                             + [(*u, None) for u in _split(UNRELATED, 0)])
HELD_OUT: list[tuple[str, str, str | None]] = ([(*second, key) for _, second, key in PAIRS]
                                               + [(*u, None) for u in _split(UNRELATED, 1)])


def fix_entries(timestamp: str = "2026-11-25T10:00:00Z") -> dict[str, dict]:
    """The fixes as shared-store entries (every one a §3 entry, written by an agent)."""
    return {key: {"value": value, "source": "agent", "basis": "verified", "timestamp": timestamp,
                  "author": "Agent One", "tags": ["fix"]} for key, value in FIXES.items()}
