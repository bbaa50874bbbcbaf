"""The review page's server: loopback only, no external assets, nothing sent anywhere.

A standard-library HTTP server on 127.0.0.1 serves one page (HTML, a script and a style sheet
shipped with ragleaklab) and a small JSON API over a :class:`ReviewSession`. Three guards keep
other software on the same machine out of a reviewer's labels:

- it binds to the loopback interface only, and answers only requests whose ``Host`` is that
  interface and port (a web page that rebinds its own name to 127.0.0.1 is refused);
- every API call carries a random token, in the URL the command prints and in a custom header,
  which a page of another origin cannot send without a CORS preflight this server never grants;
- the page's Content-Security-Policy allows its own script and style only and no image, frame
  or form: an answer is shown as text, so a markdown image in it (an exfiltration attempt) is
  never fetched.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from typing import Any

from ragleaklab_core._log import get_logger
from ragleaklab_core.errors import InputError
from ragleaklab_core.review.session import ReviewSession

log = get_logger(__name__)

#: The interface the server binds to; no option widens it.
LOOPBACK = "127.0.0.1"
#: The page's files, shipped inside the package.
_ASSETS = {
    "/": ("review.html", "text/html; charset=utf-8"),
    "/review.js": ("review.js", "text/javascript; charset=utf-8"),
    "/review.css": ("review.css", "text/css; charset=utf-8"),
}
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
#: Largest request body accepted (a judgement with notes is a few hundred bytes).
MAX_BODY = 64 * 1024


def _asset(name: str) -> bytes:
    return files("ragleaklab_core.review").joinpath("page", name).read_bytes()


class ReviewServer(ThreadingHTTPServer):
    """A :class:`ThreadingHTTPServer` holding the session, its token and the page's data."""

    daemon_threads = True

    def __init__(self, session: ReviewSession, port: int = 0, extra: dict[str, Any] | None = None):
        super().__init__((LOOPBACK, port), _Handler)
        self.session = session
        self.token = secrets.token_urlsafe(24)
        self.cases = json.dumps(
            {
                "cases": [v.to_dict() for v in session.views],
                "warnings": session.warnings,
                "start": session.resume_at(),
                **(extra or {}),
            },
            ensure_ascii=False,
        ).encode()
        self._hosts = {f"{LOOPBACK}:{self.port}", f"localhost:{self.port}"}

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/#token={self.token}"

    def allowed_host(self, host: str | None) -> bool:
        return host is not None and host.lower() in self._hosts


class _Handler(BaseHTTPRequestHandler):
    server: ReviewServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("review request", line=format % args)

    # --- responses ----------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy", _CSP)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value, ensure_ascii=False).encode(), "application/json")

    def _refuse(self, status: int, why: str) -> None:
        self._json(status, {"error": why})

    def _guarded(self) -> bool:
        if not self.server.allowed_host(self.headers.get("Host")):
            self._refuse(HTTPStatus.FORBIDDEN, "this server answers on its loopback address only")
            return False
        return True

    def _authorised(self) -> bool:
        given = self.headers.get("X-Review-Token", "")
        if not hmac.compare_digest(given.encode(), self.server.token.encode()):
            self._refuse(HTTPStatus.FORBIDDEN, "missing or wrong review token")
            return False
        return True

    # --- routes -------------------------------------------------------------------------------

    def do_GET(self) -> None:
        if not self._guarded():
            return
        path = self.path.split("?", 1)[0]
        if path in _ASSETS:
            name, content_type = _ASSETS[path]
            self._send(HTTPStatus.OK, _asset(name), content_type)
            return
        if not path.startswith("/api/"):
            self._refuse(HTTPStatus.NOT_FOUND, "no such page")
            return
        if not self._authorised():
            return
        if path == "/api/cases":
            self._send(HTTPStatus.OK, self.server.cases, "application/json")
        elif path == "/api/state":
            self._json(HTTPStatus.OK, self.server.session.state())
        else:
            self._refuse(HTTPStatus.NOT_FOUND, "no such call")

    def do_POST(self) -> None:
        if not self._guarded() or not self._authorised():
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._refuse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "request too large")
            return
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError:
            self._refuse(HTTPStatus.BAD_REQUEST, "the body must be a JSON object")
            return
        session = self.server.session
        try:
            if self.path == "/api/judge":
                index, label = body.get("index"), body.get("label")
                notes = body.get("notes")
                if not isinstance(index, int) or not isinstance(label, str):
                    raise InputError("a judgement needs an integer index and a label")
                if notes is not None and not isinstance(notes, str):
                    raise InputError("notes must be text")
                session.judge(index, label, notes)
                log.info("judged", reviewer=session.reviewer, case=index, label=label)
                self._json(HTTPStatus.OK, {**session.state(), "changed": index})
            elif self.path == "/api/undo":
                changed = session.undo()
                self._json(HTTPStatus.OK, {**session.state(), "changed": changed})
            else:
                self._refuse(HTTPStatus.NOT_FOUND, "no such call")
        except InputError as exc:
            self._refuse(HTTPStatus.BAD_REQUEST, exc.message)
        except OSError as exc:
            # The judgement was not saved: the page shows it as failed and keeps it unsaved.
            log.error("review file not written", file=str(session.path), error=str(exc))
            self._refuse(HTTPStatus.INTERNAL_SERVER_ERROR, f"not saved: {exc.strerror or exc}")


def serve(server: ReviewServer, ready: threading.Event | None = None) -> None:
    """Serve until interrupted; every judgement is already on disk when it is acknowledged."""
    if ready is not None:
        ready.set()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()


__all__ = ["LOOPBACK", "MAX_BODY", "ReviewServer", "serve"]
