"""``ctx init``: the context root, and on a terminal the questions of §13.3 (``questions.py``)."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.cli.questions import SetupAnswers
    from ctx.cli.run import Run
    from ctx.context import Context


def _install_hook(context: Context):
    """The pre-commit hook, once the root has a repository: what ``install`` did, or None."""
    if not (context.root / ".git").is_dir():
        return None
    from hooks.install import install
    return install(context.root)


def init(run: Run, focus: str | None, yes: bool, as_json: bool) -> None:
    if as_json:  # no questions: the answer is one JSON object
        context = run.context()
        report = context.init()
        if focus is not None:
            context.set("current_focus", focus, source="operator", basis="reported")
        hook = _install_hook(context)
        run.json({"root": str(context.root), "existed": report.existed, "created": report.created,
                  "focus": focus is not None, "hook": hook.status if hook else None})
        return
    answers = None
    if not yes and focus is None and sys.stdin.isatty() and sys.stdout.isatty():
        import click

        from ctx.cli.questions import run_setup
        try:
            answers = run_setup(lambda question, default: click.prompt(question, default=default))
        except click.Abort:
            raise KeyboardInterrupt from None
    context = run.context(root=answers.root) if answers else run.context()
    report = context.init()
    if not report.existed:
        run.out(f"Created the context root {context.root}")
    elif report.created:
        run.out(f"The context root {context.root} exists; nothing overwritten, added: {', '.join(report.created)}")
    else:
        run.out(f"The context root {context.root} exists and is complete; nothing changed")
    if focus is not None:
        context.set("current_focus", focus, source="operator", basis="reported")
        run.out("Wrote current_focus")
    hook = _install_hook(context)
    if hook is not None and hook.status != "unchanged":
        run.out(hook.message())
    if answers:
        _finish_setup(run, context, answers)
    run.out(f"Next: export CTX_HOME={context.root}; ctx start")


def _finish_setup(run: Run, context: Context, answers: SetupAnswers) -> None:
    """Record the operator's answers, and wire each harness only after showing the change."""
    import click

    from ctx.cli.questions import record_answers
    from ctx.harness.wiring import apply, plan
    if answers.focus or answers.instructions:
        record_answers(context, answers)
        run.out("Recorded current_focus and the standing instructions")
    for target in answers.harnesses:
        wiring = plan(target, context.root, agent=answers.agent)
        if not wiring.changed:
            run.out(f"{target}: already wired ({wiring.paths})")
            continue
        run.out(wiring.diff())
        try:
            confirmed = click.confirm(f"Apply this change to {wiring.paths}?", default=False)
        except click.Abort:
            raise KeyboardInterrupt from None
        if confirmed:
            apply(wiring)
            run.out(f"{target}: wired ({wiring.paths})")
    if not answers.version_control:
        run.out("ctx keeps each write as a commit in the root's own repository; "
                "set CTX_NO_GIT=1 to keep store files only")
    run.out(f"Set in the harness's environment: CTX_HOME={context.root} CTX_AUTHOR={answers.agent!r}")
