"""``python -m benchmarks.details_shot GRAPH_DIR LABEL OUT.png``: a screenshot of kg serve's details panel.

Serves the build in GRAPH_DIR on a free port, finds LABEL with the explorer's search as a user would
(Chromium at /usr/bin/chromium), and saves the top 1,400 pixels of the details panel: the README's
picture of a typed concept (docs/explorer-typed-10k.png: a 10,000-abstract build, "graph neural networks").
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from kg.serve.worker import free_port


def _wait(url: str, server: subprocess.Popen, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"kg serve stopped: {server.stderr.read().decode(errors='replace')[-2000:]}") from None
            if time.monotonic() > deadline:
                raise SystemExit(f"kg serve did not answer {url} within {seconds:.0f} s") from None
            time.sleep(1)


def shoot(graph: Path, label: str, out: Path, height: int = 1400) -> None:
    from playwright.sync_api import sync_playwright

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "kg", "serve", "--graph", str(graph), "--port", str(port)],
                              env=dict(os.environ, HF_HUB_OFFLINE="1"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait(url + "api/status", server)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 2400})
            page.goto(url)
            page.wait_for_selector("#kg-drawn:not(:empty)", timeout=120_000)  # the map is drawn
            page.fill("#kg-search", label)
            page.press("#kg-search", "Enter")
            page.wait_for_selector("#kg-details[data-node]", timeout=60_000)
            page.wait_for_timeout(1000)
            box = page.locator("#kg-details").bounding_box()
            page.screenshot(path=str(out), full_page=True,
                            clip={"x": box["x"], "y": box["y"], "width": box["width"], "height": min(height, box["height"])})
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=60)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.details_shot", description=__doc__.split("\n")[0])
    parser.add_argument("graph", type=Path, help="a kg build folder")
    parser.add_argument("label", help="what to type in the explorer's search")
    parser.add_argument("out", type=Path, help="the PNG to write")
    args = parser.parse_args(argv)
    shoot(args.graph, args.label, args.out)
    print(args.out)


if __name__ == "__main__":
    main()
