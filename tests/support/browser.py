"""A real headless browser for the web page's tests and screenshots: Debian's Chromium, driven by
Selenium through Debian's chromium-driver (installed with apt-get when missing, as `make test`
does; no browser or driver is ever downloaded)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service as DriverService
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PACKAGES = ("chromium", "chromium-driver")

# Waiting for the page to show an answer on a busy two-core machine: generous, never tight.
WAIT_SECONDS = 30.0


def ensure_chromium() -> None:
    """Install Debian's chromium and chromium-driver when missing (root only, as in CI).

    Raises:
        RuntimeError: they are missing and cannot be installed here.
    """
    if os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK):
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise RuntimeError(
            "the web page's tests need Debian's chromium and chromium-driver: "
            "apt-get install chromium chromium-driver (as root), or run make test as root"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", *PACKAGES], check=True, env=env)


@contextmanager
def chromium(width: int = 1200, height: int = 800) -> Iterator[webdriver.Chrome]:
    """Headless Chromium at that window size, logging its console and its network requests
    (the tests read both); quit on exit."""
    ensure_chromium()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",  # as root, in a container
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",  # no request but the page's own
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--window-size={width},{height}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=DriverService(CHROMEDRIVER))
    try:
        driver.set_page_load_timeout(WAIT_SECONDS)
        yield driver
    finally:
        driver.quit()


def wait(driver: webdriver.Chrome) -> WebDriverWait[Any]:
    """Poll until the condition holds. The page re-renders its lists as answers arrive, so an
    element found in one poll may be gone by the time it is read: that poll just fails and the
    next one looks again."""
    return WebDriverWait(
        driver,
        WAIT_SECONDS,
        poll_frequency=0.05,
        ignored_exceptions=(StaleElementReferenceException,),
    )
