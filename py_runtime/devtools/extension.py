"""Chromium with the built extension (``dist/extension/``) loaded, for the WPT runner's
``--via-extension`` and the extension's tests.

A fresh profile each time (so a fresh install and a fresh engine); the extension's
settings are written through its service worker before any page loads, and the
runner waits until the content scripts are registered for them.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .browser import launch_args
from .wpt_host import DEFAULT_DIST

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Playwright, Worker

DEFAULT_EXTENSION = DEFAULT_DIST / "extension"
_READY_TIMEOUT_S = 30.0

_STATUS_JS = "() => chrome.storage.local.get('status').then(({status}) => status ?? null)"
_SET_SETTINGS_JS = """async (settings) => {
  const {settings: old = {}} = await chrome.storage.local.get('settings');
  await chrome.storage.local.set({settings: {...old, ...settings}});
  return Date.now();
}"""


class ExtensionBrowser:
    """A persistent Chromium context with the extension, and its service worker."""

    def __init__(self, context: BrowserContext, service_worker: Worker) -> None:
        self.context = context
        self.service_worker = service_worker

    @property
    def id(self) -> str:
        """The extension's id (its origin is ``chrome-extension://<id>``)."""
        return self.service_worker.url.split("/")[2]

    def url(self, page: str) -> str:
        """The URL of one of the extension's pages (``options.html``)."""
        return f"chrome-extension://{self.id}/{page}"

    def status(self) -> dict[str, Any] | None:
        """The service worker's last registration: ``{installs, native, at}``."""
        return self.service_worker.evaluate(_STATUS_JS)

    def configure(self, settings: dict[str, Any]) -> None:
        """Merge ``settings`` into the extension's, and wait until they apply."""
        since = self.service_worker.evaluate(_SET_SETTINGS_JS, settings)
        self._wait_for_registration(since)

    def offscreen_status(self) -> dict[str, Any] | None:
        """The engine's router: connections, sessions and requests open."""
        return self.service_worker.evaluate(
            "() => chrome.runtime.sendMessage({kind: 'offscreen-status'}).catch(() => null)"
        )

    def _wait_for_registration(self, since: float = 0) -> None:
        deadline = time.monotonic() + _READY_TIMEOUT_S
        while time.monotonic() < deadline:
            status = self.status()
            if status and status.get("at", 0) >= since:
                return
            time.sleep(0.05)
        raise TimeoutError("the extension did not register its content scripts")


@contextmanager
def extension_browser(
    playwright: Playwright,
    extension: Path = DEFAULT_EXTENSION,
    settings: dict[str, Any] | None = None,
    headless: bool = True,
    extra_args: list[str] | None = None,
) -> Iterator[ExtensionBrowser]:
    """Launch Chromium with ``extension`` installed in a new profile."""
    extension = Path(extension).resolve()
    if not (extension / "manifest.json").is_file():
        raise FileNotFoundError(f"{extension}/manifest.json is missing: build dist/ first")
    profile = tempfile.mkdtemp(prefix="prompt-api-extension-")
    flags = [f"--disable-extensions-except={extension}", f"--load-extension={extension}"]
    options = launch_args([*flags, *(extra_args or [])])
    options["headless"] = headless
    context = playwright.chromium.launch_persistent_context(profile, **options)
    try:
        worker = (
            context.service_workers[0]
            if context.service_workers
            else context.wait_for_event("serviceworker")
        )
        browser = ExtensionBrowser(context, worker)
        browser._wait_for_registration()
        if settings:
            browser.configure(settings)
        yield browser
    finally:
        context.close()
        shutil.rmtree(profile, ignore_errors=True)
