#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# flamegraph-browser.sh SVG SCREENSHOT.png EXPECT_FILE
#
# Opens a flame graph in headless Chromium (chromium-driver, python3-selenium) as a reader
# would, saves a screenshot, and checks from the live DOM what the reader sees and does:
#   frame PATH FRACTION   the frame at PATH (names from the root's child up, joined by ';')
#                         is FRACTION of the full width (within 0.001)
#   hover PATH TEXT       with the mouse over it, the status line says TEXT
#   zoom PATH             clicking it makes it span the full width, keeps its ancestors,
#                         hides a frame beside it; "Reset Zoom" brings the widths back
#   search REGEX PERCENT  searching REGEX (through the Search control, then through Ctrl-F)
#                         fills the matching frames, and only those, with the highlight
#                         colour, and the status line says "Matched: PERCENT%"
# Fields are separated by single tabs; '#' starts a comment line. Exits 0 when every check
# passes, 1 with one line per failed check otherwise, 2 when it cannot run.
set -euo pipefail

if [ "$#" -ne 3 ]; then
	echo "usage: $0 SVG SCREENSHOT.png EXPECT_FILE" >&2
	exit 2
fi
svg=$1
screenshot=$2
expect=$3
for f in "$svg" "$expect"; do
	if [ ! -r "$f" ]; then
		echo "flamegraph-browser: cannot read $f" >&2
		exit 2
	fi
done
for tool in /usr/bin/chromium /usr/bin/chromedriver; do
	if [ ! -x "$tool" ]; then
		echo "flamegraph-browser: $tool is missing (scripts/install-deps.sh installs it)" >&2
		exit 2
	fi
done

# Debian's python3, where python3-selenium is, whatever python3 comes first in PATH.
exec /usr/bin/python3 - "$(realpath "$svg")" "$screenshot" "$expect" <<'PY'
import re
import sys
import tempfile

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

svg_path, screenshot, expect_path = sys.argv[1:4]
failures = []


def fail(message):
    failures.append(message)
    print("flamegraph-browser: FAIL: " + message, file=sys.stderr)


def parse_expect(path):
    checks = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            want = {"frame": 3, "hover": 3, "zoom": 2, "search": 3}.get(fields[0])
            if want != len(fields):
                print(f"flamegraph-browser: {path}:{number}: bad line {line!r}", file=sys.stderr)
                sys.exit(2)
            checks.append(fields)
    return checks


checks = parse_expect(expect_path)

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--window-size=1280,900", "--hide-scrollbars"):
    options.add_argument(arg)
# A profile of its own: two checks at once must not share one.
profile = tempfile.TemporaryDirectory(prefix="pbid-chromium-")
options.add_argument("--user-data-dir=" + profile.name)
try:
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
except WebDriverException as e:
    print("flamegraph-browser: cannot start chromium: " + str(e).strip(), file=sys.stderr)
    sys.exit(2)

FRAMES_JS = """
var out = [];
document.querySelectorAll('g.f').forEach(function (g) {
  var rect = g.querySelector('rect');
  out.push({id: g.id, parent: g.getAttribute('data-parent'), name: g.getAttribute('data-name'),
            kind: g.getAttribute('data-kind'), weight: parseFloat(g.getAttribute('data-weight')),
            x: parseFloat(rect.getAttribute('x')), width: parseFloat(rect.getAttribute('width')),
            fill: rect.getAttribute('fill'), shown: getComputedStyle(g).display !== 'none'});
});
return out;
"""


def frames():
    found = driver.execute_script(FRAMES_JS)
    by_id = {f["id"]: f for f in found}
    for f in found:
        names, p = [], f
        while p and p["kind"] != "root":
            names.append(p["name"])
            p = by_id.get(p["parent"])
        f["path"] = ";".join(reversed(names))
    return found


def by_path(found, path):
    for f in found:
        if f["path"] == path:
            return f
    return None


def text_of(element_id):
    return driver.execute_script(
        "var e = document.getElementById(arguments[0]); return e ? e.textContent : null;",
        element_id)


def run_search(regex, how):
    if how == "control":
        driver.find_element(By.ID, "search").click()
    else:
        ActionChains(driver).key_down(Keys.CONTROL).send_keys("f").key_up(Keys.CONTROL).perform()
    try:
        alert = WebDriverWait(driver, 2).until(lambda d: d.switch_to.alert)
    except Exception:
        fail(f"search {regex!r} via {how}: no prompt appeared")
        return False
    alert.send_keys(regex)
    alert.accept()
    return True


def check_search(regex, percent, how):
    if not run_search(regex, how):
        return
    highlight = driver.execute_script(
        "return document.documentElement.getAttribute('data-highlight-fill');")
    pattern = re.compile(regex)
    found = frames()
    hits = 0
    for f in found:
        if f["kind"] == "root":
            continue
        should = bool(pattern.search(f["name"]))
        hits += should
        if should and f["fill"] != highlight:
            fail(f"search {regex!r} via {how}: matching frame {f['path']!r} has fill "
                 f"{f['fill']}, not the highlight {highlight}")
        elif not should and f["fill"] == highlight:
            fail(f"search {regex!r} via {how}: frame {f['path']!r} does not match but is "
                 f"highlighted")
    if hits == 0:
        fail(f"search {regex!r}: no frame matches it, so the check proves nothing")
    matched = text_of("matched")
    want = f"Matched: {percent}%"
    if (matched or "").strip() != want:
        fail(f"search {regex!r} via {how}: status says {matched!r}, expected {want!r}")
    # An empty search clears the highlight.
    if run_search("", how):
        left = [f["path"] for f in frames() if f["fill"] == highlight]
        if left:
            fail(f"search {regex!r} via {how}: an empty search left {left} highlighted")


try:
    driver.get("file://" + svg_path)
    WebDriverWait(driver, 5).until(
        lambda d: d.execute_script("return document.readyState") == "complete")
    if not driver.save_screenshot(screenshot):
        fail(f"could not save the screenshot to {screenshot}")

    initial = frames()
    root = next((f for f in initial if f["kind"] == "root"), None)
    if root is None:
        fail("no root frame (g.f with data-kind=\"root\") in the document")
        full = None
    else:
        full = root["width"]
    for check in checks:
        if check[0] == "frame" and full:
            path, fraction = check[1], float(check[2])
            f = by_path(initial, path)
            if f is None:
                fail(f"frame {path!r}: not in the document")
            elif abs(f["width"] / full - fraction) > 0.001:
                fail(f"frame {path!r}: width {f['width']:.3f} px is "
                     f"{f['width'] / full:.4f} of the full width, expected {fraction}")
        elif check[0] == "hover":
            path, want = check[1], check[2]
            f = by_path(initial, path)
            if f is None:
                fail(f"hover {path!r}: not in the document")
                continue
            rect = driver.find_element(By.CSS_SELECTOR, f'g.f[id="{f["id"]}"] rect')
            ActionChains(driver).move_to_element(rect).perform()
            got = text_of("details")
            if got != want:
                fail(f"hover {path!r}: status line says {got!r}, expected {want!r}")
            ActionChains(driver).move_to_element(driver.find_element(By.ID, "title")).perform()
        elif check[0] == "zoom" and full:
            path = check[1]
            f = by_path(initial, path)
            if f is None:
                fail(f"zoom {path!r}: not in the document")
                continue
            siblings = [s for s in initial if s["parent"] == f["parent"] and s is not f]
            if not siblings:
                fail(f"zoom {path!r}: has no sibling to see hidden; choose another frame")
                continue
            driver.find_element(By.CSS_SELECTOR, f'g.f[id="{f["id"]}"] rect').click()
            zoomed = {z["id"]: z for z in frames()}
            z = zoomed[f["id"]]
            if abs(z["width"] - full) > 0.01 or abs(z["x"] - root["x"]) > 0.01:
                fail(f"zoom {path!r}: after the click it spans x={z['x']:.3f} "
                     f"width={z['width']:.3f}, not the full width {full:.3f} from "
                     f"{root['x']:.3f}")
            for s in siblings:
                if zoomed[s["id"]]["shown"]:
                    fail(f"zoom {path!r}: its sibling {s['path']!r} is still shown")
            p = zoomed.get(f["parent"])
            while p:
                if not p["shown"] or abs(p["width"] - full) > 0.01:
                    fail(f"zoom {path!r}: its ancestor {p['name']!r} is not shown at full "
                         f"width")
                p = zoomed.get(p["parent"])
            reset = driver.find_element(By.ID, "reset-zoom")
            if not reset.is_displayed():
                fail(f"zoom {path!r}: no visible Reset Zoom control after zooming")
            else:
                reset.click()
                after = {a["id"]: a for a in frames()}
                moved = [i["path"] for i in initial
                         if not after[i["id"]]["shown"]
                         or abs(after[i["id"]]["width"] - i["width"]) > 0.01]
                if moved:
                    fail(f"zoom {path!r}: Reset Zoom did not restore {moved}")
        elif check[0] == "search":
            check_search(check[1], check[2], "control")
            check_search(check[1], check[2], "ctrl-f")
except WebDriverException as e:
    fail("the browser failed: " + str(e).strip().splitlines()[0])
finally:
    try:
        driver.switch_to.alert.dismiss()
    except (NoAlertPresentException, WebDriverException):
        pass
    driver.quit()

if failures:
    print(f"flamegraph-browser: {len(failures)} check(s) failed on {svg_path}", file=sys.stderr)
    sys.exit(1)
print(f"flamegraph-browser: {len(checks)} checks passed on {svg_path}; screenshot {screenshot}")
PY
