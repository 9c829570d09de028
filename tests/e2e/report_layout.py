"""report_layout.py DOM WIDTH - read what tests/e2e/report_check.js wrote into
the DOM Chromium dumped of kiln report's page at WIDTH px, and fail unless the
page and its tables fit, and every chart has a legend, ticks on both axes,
both axis titles and no text clipped by its viewBox."""
import re
import sys

dom, width = open(sys.argv[1]).read(), int(sys.argv[2])
m = re.search(r'<pre id="kiln-check">(.*?)</pre>', dom, re.S)
assert m, "the check did not run (no #kiln-check in the DOM)"
lines = m.group(1).split("\n")
w, scroll = map(int, re.match(r"width (\d+) scroll (\d+)", lines[0]).groups())
assert w == width, "the window is %d px wide, not %d" % (w, width)
assert scroll <= w, "the page overflows: %d px wide in a %d px window" % (scroll, w)
tables = [l.split() for l in lines if l.startswith("table ")]
assert [t[1] for t in tables] == ["lifetimes", "groups", "finops"], tables
for t in tables:
    assert int(t[2]) <= int(t[4]), "table %s is wider than its box: %s" % (t[1], t)
svgs = [l.split() for l in lines if l.startswith("svg ")]
assert [s[1] for s in svgs] == ["chart-burn", "chart-split", "chart-util", "chart-cost"], svgs
for s in svgs:
    f = dict(zip(s[2::2], map(int, s[3::2])))
    assert f["legend"] >= 1, "no legend: %s" % s
    assert f["xticks"] >= 2 and f["yticks"] >= 2, "an axis without ticks: %s" % s
    assert f["titles"] == 2, "an axis without its title: %s" % s
    assert f["clipped"] == 0, "text outside the chart: %s" % s
    assert f["right"] <= w, "the chart overflows: %s" % s
