"""Where the webhook learns a review's namespace labels (the tenant comes from them).

In a cluster, `NamespaceWatch`: the API server's namespaces, listed and watched. The decider takes
any `NamespaceSource` (tests give it a fixed one, tests/tools/namespaces.py) or a plain function. A
namespace no source knows is unknown, and the review is denied.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any, Protocol

log = logging.getLogger("mm2gov.admission")


class NamespaceSource(Protocol):
    """Where the webhook reads a namespace's labels: `lookup` is None for a namespace it does not know."""

    def ready(self) -> bool: ...

    def lookup(self, namespace: str) -> dict[str, str] | None: ...


class NamespaceWatch:
    """Every namespace's labels, as the API server has them: one LIST, then a WATCH from its
    resourceVersion (bookmarks keep it current), LIST again when the watch expires (410 Gone) or
    fails (after a back-off), so a missed event is repaired. Ready once the first LIST is in.

    A namespace not in the cache (created a moment ago, its event still on the way) is read once
    with a GET; one that does not exist is unknown, and the webhook denies.
    """

    def __init__(self, api_client: Any, watch_seconds: int = 240, request_timeout: float = 10.0,
                 max_backoff: float = 30.0) -> None:
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.watch_seconds = watch_seconds
        self.request_timeout = request_timeout
        self.max_backoff = max_backoff
        self.resource_version: str | None = None
        self.restarts = 0  # LISTs after the first: expired or failed watches
        self.misses = 0  # lookups the cache could not answer (a GET was made)
        self.last_error = ""
        self._labels: dict[str, dict[str, str]] = {}
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watch: Any = None

    # -- the cache ---------------------------------------------------------------------------
    def ready(self) -> bool:
        return self._ready.is_set()

    def lookup(self, namespace: str) -> dict[str, str] | None:
        labels = self._labels.get(namespace)
        if labels is not None or not namespace or not self._ready.is_set():
            return labels
        self.misses += 1
        return self._read(namespace)

    def _read(self, namespace: str) -> dict[str, str] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            answer = self.core.read_namespace(namespace, _request_timeout=2, _preload_content=False)
            metadata = json.loads(answer.data).get("metadata") or {}
        except ApiException as exc:
            if exc.status != 404:
                log.warning("cannot read namespace %s: HTTP %s", namespace[:64], exc.status)
            return None
        except Exception as exc:  # noqa: BLE001 - unreadable is unknown: the webhook denies
            log.warning("cannot read namespace %s: %s", namespace[:64], type(exc).__name__)
            return None
        labels = _labels_of(metadata)
        if labels is not None and metadata.get("name") == namespace:
            self._labels.setdefault(namespace, labels)  # the watch's own event, when it comes, wins
        return labels

    def status(self) -> dict[str, Any]:
        return {"ready": self.ready(), "namespaces": len(self._labels), "restarts": self.restarts,
                "misses": self.misses, "last_error": self.last_error}

    # -- list and watch ----------------------------------------------------------------------
    def start(self) -> threading.Thread:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="mm2gov-namespace-watch", daemon=True)
            self._thread.start()
        return self._thread

    def stop(self) -> None:
        self._stop.set()
        if self._watch is not None:
            self._watch.stop()

    def wait_ready(self, timeout: float) -> bool:
        return self._ready.wait(timeout)

    def _run(self) -> None:
        from kubernetes.client.exceptions import ApiException

        backoff, listed = 0.5, False
        while not self._stop.is_set():
            try:
                if not listed:
                    self._list()
                    listed, backoff = True, 0.5
                self._stream()  # returns when the watch times out: watch again from the last version
            except ApiException as exc:
                listed = False
                if exc.status == 410:  # the version expired: list again now
                    log.info("namespace watch expired (410 Gone): listing again")
                    self.restarts += 1
                    continue
                self._failed(f"HTTP {exc.status}", backoff)
                backoff = min(backoff * 2, self.max_backoff)
            except Exception as exc:  # noqa: BLE001 - whatever broke, list again after a pause
                listed = False
                self._failed(type(exc).__name__, backoff)
                backoff = min(backoff * 2, self.max_backoff)

    def _failed(self, why: str, backoff: float) -> None:
        self.last_error = why
        self.restarts += 1
        log.warning("namespace watch failed (%s): listing again in %.1f s (the cache stays as it was)", why, backoff)
        self._stop.wait(backoff)

    def _list(self) -> None:
        answer = self.core.list_namespace(_request_timeout=self.request_timeout, _preload_content=False)
        listing = json.loads(answer.data)
        labels = {}
        for item in listing.get("items") or []:
            metadata = item.get("metadata") or {}
            found = _labels_of(metadata)
            if isinstance(metadata.get("name"), str) and found is not None:
                labels[metadata["name"]] = found
        self._labels = labels  # one swap: a namespace deleted while the watch was down is gone now
        self.resource_version = (listing.get("metadata") or {}).get("resourceVersion")
        if not self._ready.is_set():
            log.info("namespace cache filled: %d namespaces", len(labels))
        self._ready.set()

    def _stream(self) -> None:
        from kubernetes import watch

        self._watch = watch.Watch()
        for event in self._watch.stream(self.core.list_namespace, resource_version=self.resource_version,
                                        allow_watch_bookmarks=True, timeout_seconds=self.watch_seconds,
                                        _request_timeout=self.watch_seconds + self.request_timeout):
            if self._stop.is_set():
                self._watch.stop()
                return
            raw = event.get("raw_object") if isinstance(event, dict) else None
            metadata = raw.get("metadata") if isinstance(raw, dict) else None
            if not isinstance(metadata, dict):
                continue
            kind, name = event.get("type"), metadata.get("name")
            if kind in ("ADDED", "MODIFIED") and isinstance(name, str):
                labels = _labels_of(metadata)
                if labels is not None:
                    self._labels[name] = labels
            elif kind == "DELETED" and isinstance(name, str):
                self._labels.pop(name, None)
            if isinstance(metadata.get("resourceVersion"), str):
                self.resource_version = metadata["resourceVersion"]


def _labels_of(metadata: dict[str, Any]) -> dict[str, str] | None:
    labels = metadata.get("labels") or {}
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else None


class _CallableNamespaces:
    """A plain function namespace -> labels (older callers); an exception means unknown."""

    def __init__(self, function: Any) -> None:
        self.function = function

    def ready(self) -> bool:
        return True

    def lookup(self, namespace: str) -> dict[str, str] | None:
        try:
            return dict(self.function(namespace))
        except Exception:  # noqa: BLE001 - unknown: the webhook denies
            return None

    def status(self) -> dict[str, Any]:
        return {"ready": True, "namespaces": 0, "restarts": 0, "misses": 0}


def namespace_source(value: Any) -> NamespaceSource | None:
    """A NamespaceSource as given, a plain function wrapped in one, or None (every review is denied)."""
    if value is None or hasattr(value, "lookup"):
        return value
    return _CallableNamespaces(value)
