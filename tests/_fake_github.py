"""A fake GitHub on 127.0.0.1 for ``install_skill`` tests: the contents API
under ``/api`` and raw files under ``/raw``, served from in-memory trees.

``add_tree(repo, ref, path, files)`` publishes a folder (``files`` maps
relative paths to bytes): a listing for it and each subfolder, and each
file at its ``download_url``. Tests then bend it: ``routes`` maps a request
path (with query) to what is answered, so a listing can name ``..``, a
symlink, a size that lies; ``HANG`` holds a request open until the server
stops (a timeout), without sleeping in the test.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

HANG = object()


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


class FakeGitHub:
    def __init__(self) -> None:
        self.routes: dict[str, Any] = {}
        self.requests: list[str] = []
        self.release = threading.Event()
        #: set when a request reaches a ``HANG`` route
        self.hung = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def api_url(self) -> str:
        return self.base + "/api"

    @property
    def raw_url(self) -> str:
        return self.base + "/raw"

    def env(self) -> dict[str, str]:
        return {"MEWCODE_GITHUB_API_URL": self.api_url, "MEWCODE_GITHUB_RAW_URL": self.raw_url}

    def listing_path(self, repo: str, path: str, ref: str | None) -> str:
        url = f"/api/repos/{repo}/contents" + (f"/{quote(path)}" if path else "")
        return url + (f"?ref={quote(ref, safe='')}" if ref else "")

    def add_tree(
        self, repo: str, ref: str | None, path: str, files: Mapping[str, bytes | str]
    ) -> None:
        """Publish ``files`` (relative path → content) as folder ``path`` of ``repo``."""
        folders: dict[str, list[dict[str, Any]]] = {path: []}
        for rel, content in sorted(files.items()):
            data = content.encode() if isinstance(content, str) else content
            parts = rel.split("/")
            for depth in range(1, len(parts)):
                parent = "/".join([path, *parts[: depth - 1]]).strip("/")
                sub = "/".join([path, *parts[:depth]]).strip("/")
                if sub not in folders:
                    folders[sub] = []
                    folders[parent].append(self.entry(repo, ref, sub, "dir"))
            full = "/".join([path, rel]).strip("/")
            parent = full.rpartition("/")[0]
            folders[parent].append(self.entry(repo, ref, full, "file", size=len(data)))
            self.routes[self.raw_path(repo, ref, full)] = Answer(body=data)
        for folder, entries in folders.items():
            self.routes[self.listing_path(repo, folder, ref)] = Answer(
                body=json.dumps(entries).encode(), headers={"Content-Type": "application/json"}
            )

    def raw_path(self, repo: str, ref: str | None, path: str) -> str:
        return f"/raw/{repo}/{ref or 'main'}/{quote(path)}"

    def entry(
        self, repo: str, ref: str | None, path: str, kind: str, *, size: int = 0
    ) -> dict[str, Any]:
        name = path.rpartition("/")[2]
        download = self.base + self.raw_path(repo, ref, path) if kind == "file" else None
        return {"name": name, "path": path, "type": kind, "size": size, "download_url": download}

    def listing(self, repo: str, path: str, ref: str | None) -> list[dict[str, Any]]:
        return json.loads(self.routes[self.listing_path(repo, path, ref)].body)

    def set_listing(
        self, repo: str, path: str, ref: str | None, entries: list[dict[str, Any]]
    ) -> None:
        self.routes[self.listing_path(repo, path, ref)] = Answer(body=json.dumps(entries).encode())

    def start(self) -> FakeGitHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def _handler(fake: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fake.requests.append(self.path)
            answer = fake.routes.get(self.path)
            if answer is HANG:
                fake.hung.set()
                fake.release.wait(timeout=30)  # until the server stops: the client times out first
                return
            if answer is None:
                answer = Answer(status=404, body=b'{"message": "Not Found"}')
            self.send_response(answer.status)
            for k, v in answer.headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def fake_github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub().start()
    try:
        yield fake
    finally:
        fake.stop()
