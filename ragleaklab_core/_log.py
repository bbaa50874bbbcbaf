"""Loggers for library code, and the logging setup that only the CLI may apply.

Library code logs through structlog into the standard library and configures nothing: the host
application decides what is shown (structlog#179). Loggers are wrapped around one shared processor
list, so the CLI can swap its contents in place and loggers created at import time follow.

The CLI's handler never writes a secret: :class:`RedactingFilter` rewrites every record (from
ragleaklab, plugins or libraries such as httpx, which logs each request's URL at INFO) and the
formatter's output is redacted again, so URL credentials and every secret registered with
:func:`ragleaklab_core._redact.register_secret` show as ``***`` in console and JSON logs alike.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

from ragleaklab_core._redact import redact, redact_text

_logfmt = structlog.processors.LogfmtRenderer(sort_keys=True)


def _render_for_stdlib(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> tuple[tuple[str], dict[str, Any]]:
    """Render 'event key=value ...' into the record's message.

    Keys are not passed as logging's ``extra``: LogRecord reserves names like 'name' and 'msg'.
    """
    kwargs = {k: event_dict.pop(k) for k in ("exc_info", "stack_info") if k in event_dict}
    event = str(event_dict.pop("event"))
    pairs = _logfmt(logger, method_name, event_dict) if event_dict else ""
    return (f"{event} {pairs}".rstrip(),), kwargs


_PROCESSORS: list[Any] = [
    structlog.stdlib.filter_by_level,
    structlog.contextvars.merge_contextvars,
    _render_for_stdlib,
]


def get_logger(name: str) -> Any:
    """A structlog logger writing through ``logging.getLogger(name)``; safe at import time."""
    return structlog.wrap_logger(
        logging.getLogger(name),
        processors=_PROCESSORS,
        wrapper_class=structlog.stdlib.BoundLogger,
    )


class RedactingFilter(logging.Filter):
    """Redacts a record in place: its message (structlog's event dict, or the text with its
    arguments merged in) and any exception text. Never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, dict):  # a structlog event, rendered later by the formatter
            record.msg = redact(record.msg)
            if record.args:
                record.args = redact(record.args)
        else:
            try:
                message = record.getMessage()
            except Exception:  # a bad format string: leave it to logging to report
                return True
            record.msg, record.args = redact_text(message), ()
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        return True


class _RedactingFormatter(logging.Formatter):
    """Formats with *inner*, then redacts the whole line (tracebacks included)."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        return redact_text(self.inner.format(record))


def configure_cli_logging(verbosity: int = 0, *, json: bool = False) -> None:
    """Send ragleaklab's logs to stderr, as console lines or JSON. Called by the CLI only.

    stdout is kept for results, so ``ragleaklab ... | jq`` always works.
    """
    renderer: Any = (
        structlog.processors.JSONRenderer(sort_keys=True)
        if json
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    handler = logging.StreamHandler(sys.stderr)
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[structlog.stdlib.add_log_level, structlog.stdlib.add_logger_name],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
    )
    handler.setFormatter(_RedactingFormatter(formatter))
    handler.addFilter(RedactingFilter())
    # The CLI is the application here, so it may own the root logger: plugins from any
    # distribution log under their own names and are shown the same way.
    level = logging.DEBUG if verbosity > 1 else logging.INFO if verbosity == 1 else logging.WARNING
    # The handler filters too: libraries that set their own logger's level (bm25s sets DEBUG)
    # would otherwise reach stderr whatever -v says.
    handler.setLevel(level)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    _PROCESSORS[:] = [
        structlog.stdlib.filter_by_level,
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
    ]
