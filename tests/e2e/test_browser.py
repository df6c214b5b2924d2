"""report.html in a real browser: headless Chromium (Debian's ``chromium``) lays out the page of the reference
predictions' report at 1400 x 900, and a script added to a copy of the page measures, from the page itself, what a
reader sees: the headline tables fit the window without scrolling sideways, the first benchmark's headline table and
task-type grid end within the first screen, the first plot starts within the first three screens, every image loads,
and only warnings are styled as warnings."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess

import pytest

from postprocess.report import write_report
from tests.helpers.reference_data import reference_predictions
from tests.helpers.report_tables import FAST, reference_tables

WIDTH, HEIGHT = 1400, 900
#: The colour of ``.flag`` (postprocess.rendering.pages' CSS): a warning.
WARNING_COLOUR = "rgb(164, 0, 0)"
#: What a warning may say: flags, tables that could not be computed, runs built by different transform versions.
WARNINGS = re.compile(r"^(\d+ of \d+ model runs have flags|Not computed|Skipped|.*transform version)", re.I)

MEASURE = """
<script>
window.addEventListener("load", () => {
  const heading = document.getElementById("at-a-glance");
  const wraps = [];
  for (let el = heading.nextElementSibling; el && el.tagName !== "H2"; el = el.nextElementSibling) {
    if (el.classList.contains("wrap")) wraps.push(el);
  }
  const plot = document.querySelector("figure img");
  const leaves = Array.from(document.querySelectorAll("body *")).filter((e) => e.children.length === 0);
  const metrics = {
    width: window.innerWidth,
    headline: wraps.map((w) => ({scroll: w.scrollWidth, client: w.clientWidth,
                                 right: w.getBoundingClientRect().right})),
    firstGridBottom: wraps.length > 1 ? wraps[1].getBoundingClientRect().bottom + window.scrollY : null,
    firstPlotTop: plot ? plot.getBoundingClientRect().top + window.scrollY : null,
    images: Array.from(document.images).map((i) => ({alt: i.alt, ok: i.complete && i.naturalWidth > 0})),
    warnings: leaves.filter((e) => getComputedStyle(e).color === "WARNING_COLOUR").map((e) => e.textContent.trim()),
  };
  const out = document.createElement("pre");
  out.id = "vdg-metrics";
  out.textContent = JSON.stringify(metrics);
  document.body.appendChild(out);
});
</script>
""".replace("WARNING_COLOUR", WARNING_COLOUR)


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs Debian's chromium for this test")
        pytest.skip("no chromium here (apt-get install chromium)")
    return found


@pytest.mark.slow
def test_report_html_reads_in_a_browser(tmp_path):
    chromium = _chromium()
    out = tmp_path / "report"
    write_report(reference_tables(), out, options=FAST, inputs={"predictions": reference_predictions()})
    page = (out / "report.html").read_text(encoding="utf-8")
    measured = tmp_path / "measured.html"
    measured.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    window = f"--window-size={WIDTH},{HEIGHT}"
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", window,
               "--virtual-time-budget=10000", "--dump-dom", measured.as_uri()]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    found = re.search(r'<pre id="vdg-metrics">(.*?)</pre>', done.stdout, flags=re.S)
    assert found, done.stderr[-2000:]
    metrics = json.loads(html.unescape(found.group(1)))
    assert metrics["width"] == WIDTH
    assert metrics["headline"], "no headline table under At a glance"
    for table in metrics["headline"]:
        assert table["scroll"] <= table["client"] and table["right"] <= WIDTH, table
    # the first benchmark's headline and task-type grid on the first screen (the contents list is collapsed)
    assert metrics["firstGridBottom"] is not None and metrics["firstGridBottom"] <= HEIGHT, metrics["firstGridBottom"]
    assert metrics["firstPlotTop"] is not None and metrics["firstPlotTop"] <= 3 * HEIGHT, metrics["firstPlotTop"]
    assert metrics["images"] and all(image["ok"] for image in metrics["images"]), metrics["images"]
    assert len(metrics["images"]) == len(list((out / "plots").iterdir()))
    for text in metrics["warnings"]:
        assert WARNINGS.match(text), f"styled as a warning: {text!r}"
