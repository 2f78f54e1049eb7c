"""``ctx view``: the operator's view, one self-contained HTML page, written and its path printed.

The git layer gathers (``ctxgit/porcelain/viewdata.py``), the core renders
(``ctx/view/page.py``); this writes the file (mode 0600: it holds the
entries), by default ``.git/ctx/view/ctx-view.html`` in the context root
(never committed), and opens it in the default browser on ``--open``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from ctx.cli.run import Run

PAGE_NAME = "ctx-view.html"


def default_path(root: Path) -> Path:
    """``.git/ctx/view/`` beside the read index; a root without a repository (nothing
    written yet) gets a file in the temporary directory, never a ``.git`` of its own."""
    import hashlib
    import tempfile
    from pathlib import Path

    from ctxgit.gitfiles.layout import VIEW
    dot_git = root / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return dot_git / VIEW / PAGE_NAME
    tag = hashlib.sha256(str(root).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"ctx-view-{tag}" / PAGE_NAME


def write_page(path: Path, text: str, private: bool = True) -> int:
    """Write the page whole or not at all (a temporary file renamed over it), mode 0600; not
    synced to disk: it is made again by the next ``ctx view``. ``private``: its directory
    is ctx's own (made 0700, never through a link); else it is made if missing."""
    from ctx.storage.files import atomic_write, ensure_private_dir
    if private:
        ensure_private_dir(path.parent)
    else:  # a folder the user named: where a link leads is fine
        path.parent.mkdir(parents=True, exist_ok=True)
        path = path.parent.resolve() / path.name
    content = text.encode("utf-8")
    atomic_write(path, content, durable=False)
    return len(content)


def view(run: Run, out: str | None, open_page: bool, since: str | None, author: str | None,
         as_json: bool) -> None:
    from pathlib import Path

    from ctx.brief import build_brief
    from ctx.errors import CtxError
    from ctx.model import parse_ts
    from ctx.summaries import list_summaries
    from ctx.view.page import SUMMARIES, render
    from ctxgit.porcelain.viewdata import gather
    moment = parse_ts(since) if since is not None else None
    context = run.context()
    root = context.root
    data = gather(root, since=moment, author=author or None)
    if data.head is None and root.exists():  # no commit yet: the files' entries, without history
        try:
            for store in context.stores():
                data.entries[store.name] = dict(store.entries)
        except CtxError as error:
            data.notes.append(str(error))
    from ctx.shown import reach, read
    data.shown = reach(read(context.state))
    try:
        brief = build_brief(context)
    except CtxError as error:
        brief = None
        data.notes.append(f"the brief could not be read: {error}")
    found = list_summaries(root)
    newest = [(s.name, s.read()) for s in reversed(found[-SUMMARIES:])]
    page = render(data, brief, newest, summary_count=len(found))
    path = (Path(out).expanduser() if out else default_path(root)).absolute()
    size = write_page(path, page, private=not out)
    if open_page:
        import webbrowser
        if not webbrowser.open(path.as_uri()):
            run.err(f"ctx: no browser could be opened; open {path} yourself")
    run.result({"path": str(path), "bytes": size, "commit": data.head.id if data.head else None,
                "entries": sum(data.counts().values()), "commits": len(data.commits)}, str(path), as_json)
