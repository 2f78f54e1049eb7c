"""The word rule of §9.1, shared by both front doors (no click here).

Options come before or after a command's words, never between them; ``--``
ends the options; ``-5`` is a word, not an option.
"""

from __future__ import annotations


def negative_number(token: str) -> bool:
    """``-5``, ``-0.5``: a word, not an option (a ``-`` and a decimal digit; no expression
    is compiled for it, as every command runs this)."""
    return token[:1] == "-" and token[1:2].isdecimal()


class OptionBetweenWords(Exception):
    """An option stands between two of the value's words."""

    message = ("an option between the value's words is not allowed: put options before "
               "or after the words, or quote the value")


def split(args: list[str], takes_value: dict[str, bool]) -> tuple[list[str], list[str]]:
    """Options (with their values) and words, in order; raises ``OptionBetweenWords``.

    The first word is the key; the words after it must stand together.
    """
    options: list[str] = []
    words: list[tuple[int, str]] = []
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            words += [(j, w) for j, w in enumerate(args[i + 1:], start=i + 1)]
            break
        if token.startswith("-") and len(token) > 1 and not negative_number(token):
            name = token.split("=", 1)[0] if token.startswith("--") else token[:2]
            options.append(token)
            if takes_value.get(name) and "=" not in token and len(name) == len(token) and i + 1 < len(args):
                options.append(args[i + 1])
                i += 1
        else:
            words.append((i, token))
        i += 1
    for (p, _), (q, _) in zip(words[1:], words[2:], strict=False):
        if any(t != "--" for t in args[p + 1:q]):
            raise OptionBetweenWords()
    return options, [w for _, w in words]
