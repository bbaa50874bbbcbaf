"""No line ragleaklab prints can start a GitHub Actions workflow command it did not write.

GitHub's runner reads every line a step prints, trims its leading whitespace, and runs it as a
workflow command when it starts with ``::`` (``::set-output``, ``::add-mask::``,
``::stop-commands::``, ``::error``) or with the legacy ``##[``. ragleaklab prints text it does
not control: an ingest error body, an answer excerpt, a case or document id, a plugin's error
message, a file name, in reasons, warnings, the summary, logs and ``diff``. A target that put
``"\\n  ::stop-commands::tok"`` in its error body would otherwise switch off every annotation
after it, or ``::set-output`` a value the next step trusts.

:func:`neutralise` is the one rule, applied to every line the command line writes, whoever wrote
it (:class:`NeutralisingStream` wraps stdout and stderr while the command runs):

- a line break other than ``\\n`` (``\\r``, ``\\v``, ``\\f``, U+001C-U+001E, U+0085, U+2028,
  U+2029) is shown as its escape (``\\r``, ``\\u2028``): the runner (or a log viewer) would end
  a line there, and what follows would be read as a fresh line;
- a line that, once leading whitespace and invisible characters are trimmed, starts with ``::``
  or ``##[`` gets a backslash in front of them (``  \\::set-output ...``): it reads the same to
  a person and is no command to the runner.

ragleaklab's own workflow commands (its annotations) are written with
:func:`write_workflow_command`, which bypasses the rule and checks they are one line; their
text is escaped by GitHub's rules (:func:`command_data`, :func:`command_property`).
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

#: Every character Python's str.splitlines() ends a line at, except "\n" itself.
_BREAKS = {
    "\r": "\\r",
    "\v": "\\v",
    "\f": "\\f",
    "\x1c": "\\x1c",
    "\x1d": "\\x1d",
    "\x1e": "\\x1e",
    "\x85": "\\x85",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_BREAK_TABLE = str.maketrans(_BREAKS)
#: What the runner reads as the start of a workflow command (current and legacy syntax).
_COMMAND_STARTS = ("::", "##[")
#: Put in front of a neutralised line's ``::`` or ``##[``.
MARK = "\\"


def _trimmed(ch: str) -> bool:
    """True for what may precede a command and still leave it one: whitespace (the runner trims
    it) and, to be safe, control and invisible format characters (zero-width space, BOM)."""
    return ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf")


def _neutral_line(line: str) -> str:
    start = 0
    while start < len(line) and _trimmed(line[start]):
        start += 1
    if line.startswith(_COMMAND_STARTS, start):
        return line[:start] + MARK + line[start:]
    return line


def neutralise(text: str) -> str:
    """*text* with no line that a workflow runner reads as a command (see the module)."""
    lines = text.translate(_BREAK_TABLE).split("\n")
    return "\n".join(_neutral_line(line) for line in lines)


def command_data(text: str) -> str:
    """*text* as a workflow command's data, by GitHub's rules (``%``, CR, LF as ``%25``,
    ``%0D``, ``%0A``); the other line breaks, which GitHub does not escape, are shown as
    ``\\u2028`` and the like, so the command stays on one line whatever splits lines."""
    escaped = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return escaped.translate(_BREAK_TABLE)


def command_property(text: str) -> str:
    """*text* as a workflow command's property value: :func:`command_data`, and ``:`` and ``,``
    as ``%3A`` and ``%2C`` (they would end the property)."""
    return command_data(text).replace(":", "%3A").replace(",", "%2C")


class NeutralisingStream:
    """A text stream writing through :func:`neutralise` to *inner*.

    Each write is checked line by line, its first line included (a write may begin a line, and
    checking one that does not only costs a backslash in the rare line continuing with ``::``).
    Everything else (encoding, ``isatty``, ``flush``, ``buffer``) is *inner*'s.
    """

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click probes with b"" whether a stream is binary
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.inner.write(neutralise(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@contextmanager
def neutralised_output() -> Iterator[None]:
    """While inside, ``sys.stdout`` and ``sys.stderr`` write through :func:`neutralise`.

    A terminal is left as it is: no workflow runner reads one, and a progress bar redraws its
    line with ``\\r``."""
    saved = sys.stdout, sys.stderr
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        wrapped = isinstance(stream, NeutralisingStream)
        if stream is not None and not wrapped and not _isatty(stream):
            setattr(sys, name, NeutralisingStream(stream))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def write_workflow_command(line: str, stream: TextIO | None = None) -> None:
    """Print ragleaklab's own workflow command *line* (an annotation) as it is, past
    :class:`NeutralisingStream`. Its data must already be escaped: a line break is refused."""
    if any(ch in line for ch in ("\n", *_BREAKS)):
        raise ValueError(f"a workflow command is one line, got {line!r}")
    target = stream if stream is not None else sys.stdout
    raw = target.inner if isinstance(target, NeutralisingStream) else target
    raw.write(line + "\n")
    raw.flush()


__all__ = [
    "MARK",
    "NeutralisingStream",
    "command_data",
    "command_property",
    "neutralise",
    "neutralised_output",
    "write_workflow_command",
]
