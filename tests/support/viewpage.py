"""The operator's view's HTML, parsed with ``html.parser`` into a small tree for the tests.

``parse(text)`` gives the root ``Node``; ``find``/``find_all`` select by tag and
attributes, ``text()`` is an element's text as a browser would show it
(scripts and styles left out), ``by_id`` finds an element by its id.
"""

from __future__ import annotations

from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
RAW = {"script", "style"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None = None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    def __repr__(self) -> str:
        return f"<{self.tag} {self.attrs}>"

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        wanted = {k.rstrip("_"): v for k, v in attrs.items()}
        return [n for n in self.iter() if (tag is None or n.tag == tag)
                and all(n.attrs.get(k) == v for k, v in wanted.items())]

    def find(self, tag: str | None = None, **attrs: str) -> Node | None:
        found = self.find_all(tag, **attrs)
        return found[0] if found else None

    def by_id(self, ident: str) -> Node | None:
        return next((n for n in self.iter() if n.attrs.get("id") == ident), None)

    def text(self) -> str:
        if self.tag in RAW:
            return ""
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def raw(self) -> str:
        """The text inside a script or style element, as written."""
        return "".join(c for c in self.children if isinstance(c, str))

    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.current = self.root
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Node(tag, dict(attrs), self.current))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is None or node.parent is None:
            self.errors.append(f"stray </{tag}>")
            return
        if node is not self.current:
            self.errors.append(f"</{tag}> closes {self.current.tag} too")
        self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(text: str) -> tuple[Node, list[str]]:
    """The tree, and what did not nest (an end tag with no start, one closing others)."""
    builder = _Builder()
    builder.feed(text)
    builder.close()
    if builder.current is not builder.root:
        builder.errors.append(f"unclosed <{builder.current.tag}>")
    return builder.root, builder.errors
