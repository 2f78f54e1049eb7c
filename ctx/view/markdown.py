"""Session summaries as HTML: the Markdown they are written in, rendered safely.

Every character of the text is escaped first; only then are the few marks a
summary uses turned into elements ctx writes itself: headings, lists (nested
by indentation), block quotes, fenced code, rules, paragraphs, and inline
``code``, **strong**, *emphasis* and [links](https://…) (http and https only;
any other target stays text). No HTML in a summary ever reaches the page as
HTML: ``<b>`` is shown as the four characters it is.
"""

from __future__ import annotations

import re
from html import escape

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```+|~~~+)")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_CODE = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_LINK = re.compile(r"\[([^\[\]]+)\]\((https?://[^\s()]+)\)")


def inline(text: str) -> str:
    """One line's inline marks; everything else escaped."""
    out: list[str] = []
    at = 0
    for match in _CODE.finditer(text):
        out.append(_marks(text[at:match.start()]))
        out.append(f"<code>{escape(match.group(2).strip(), quote=True)}</code>")
        at = match.end()
    out.append(_marks(text[at:]))
    return "".join(out)


def _marks(text: str) -> str:
    safe = escape(text, quote=True)  # from here on no character can open an element
    safe = _LINK.sub(lambda m: f'<a href="{m.group(2)}" rel="noopener noreferrer">{m.group(1)}</a>', safe)
    safe = _STRONG.sub(r"<strong>\2</strong>", safe)
    return _EMPHASIS.sub(r"<em>\2</em>", safe)


def render(text: str) -> str:
    """A Markdown text as HTML (see the module's doc)."""
    out: list[str] = []
    lists: list[tuple[int, str]] = []   # open lists: (indent, "ul" | "ol")
    paragraph: list[str] = []
    quote: list[str] = []
    lines = text.replace("\r\n", "\n").split("\n")
    n = 0

    def close_paragraph() -> None:
        if paragraph:
            out.append("<p>" + "<br>".join(inline(p) for p in paragraph) + "</p>")
            paragraph.clear()

    def close_quote() -> None:
        if quote:
            out.append("<blockquote>" + render("\n".join(quote)) + "</blockquote>")
            quote.clear()

    def close_lists(to: int = -1) -> None:
        while lists and lists[-1][0] > to:
            out.append(f"</li></{lists.pop()[1]}>")

    def close_all(quoted: bool = True) -> None:
        close_paragraph()
        if quoted:
            close_quote()
        close_lists()

    while n < len(lines):
        line = lines[n]
        n += 1
        fence = _FENCE.match(line)
        if fence:
            close_all()
            body: list[str] = []
            while n < len(lines) and not lines[n].strip().startswith(fence.group(1)):
                body.append(lines[n])
                n += 1
            n += 1
            out.append("<pre><code>" + escape("\n".join(body), quote=True) + "</code></pre>")
            continue
        if line.lstrip().startswith(">"):
            close_all(quoted=False)
            quote.append(line.lstrip()[1:].removeprefix(" "))
            continue
        close_quote()
        if not line.strip():
            close_paragraph()
            continue
        heading = _HEADING.match(line)
        if heading:
            close_all(quoted=False)
            level = min(len(heading.group(1)) + 3, 6)  # the page's h1, h2 and the summary's name come first
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
            continue
        if _RULE.match(line):
            close_all(quoted=False)
            out.append("<hr>")
            continue
        item = _ITEM.match(line)
        if item:
            close_paragraph()
            indent = len(item.group(1).expandtabs(4))
            kind = "ul" if item.group(2) in "-*+" else "ol"
            if lists and indent > lists[-1][0]:
                out.append(f"<{kind}><li>")
                lists.append((indent, kind))
            else:
                close_lists(indent)
                if lists and lists[-1][0] == indent and lists[-1][1] == kind:
                    out.append("</li><li>")
                else:
                    if lists and lists[-1][0] == indent:
                        out.append(f"</li></{lists.pop()[1]}>")
                    out.append(f"<{kind}><li>")
                    lists.append((indent, kind))
            out.append(inline(item.group(3)))
            continue
        if lists and line.startswith(" "):  # a continuation of the item above
            out.append(" " + inline(line.strip()))
            continue
        close_lists()
        paragraph.append(line.strip())
    close_all()
    return "\n".join(out)
