#!/usr/bin/python3
"""Draw dlasim's timing JSON (dlasim trace --timing --json, dlasim estimate
--json) as a PNG: on top, a timeline with one row per unit and one bar per
layer (the unit's busy cycles from the layer's start); below, each layer's
cycles with its MAC utilisation.  Needs Debian's python3-matplotlib.

  timing_plot.py TIMING.json OUT.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

UNITS = ["CONV", "SDP", "PDP", "CDP", "BDMA", "RUBIK"]
COLORS = {"conv": "#4c72b0", "sdp": "#55a868", "pdp": "#c44e52", "cdp": "#8172b2",
          "bdma": "#ccb974", "rubik": "#64b5cd"}


def main(src, out):
    with open(src) as f:
        doc = json.load(f)
    layers = doc.get("layers", [])
    if not layers:
        sys.exit("timing_plot: no layers in " + src)
    used = [u for u in UNITS if any(l["unit_cycles"].get(u, 0) for l in layers)]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(11, 3.2 + 0.45 * len(used)),
                                   gridspec_kw={"height_ratios": [max(1, len(used)), 2]})
    for row, unit in enumerate(used):
        for l in layers:
            busy = l["unit_cycles"].get(unit, 0)
            if busy:
                ax1.broken_barh([(l["start"], busy)], (row - 0.4, 0.8),
                                facecolors=COLORS.get(l["kind"], "#999999"), edgecolor="black",
                                linewidth=0.3)
    for l in layers:
        ax1.axvline(l["end"], color="#dddddd", linewidth=0.5, zorder=0)
    ax1.set_yticks(range(len(used)))
    ax1.set_yticklabels(used)
    ax1.invert_yaxis()
    ax1.set_xlabel("cycle")
    title = "%s: %d layers" % (doc.get("case", doc.get("network", "")), len(layers))
    if "cycles_to_last_intr" in doc:
        title += ", %d cycles" % doc["cycles_to_last_intr"]
    ax1.set_title(title)
    x = range(len(layers))
    cyc = [l["end"] - l["start"] for l in layers]
    ax2.bar(x, cyc, color=[COLORS.get(l["kind"], "#999999") for l in layers])
    ax2.set_ylabel("cycles")
    ax2.set_xticks(list(x))
    ax2.set_xticklabels(["%d %s\n%s" % (l["index"], l["kind"], l["bound"]) for l in layers],
                        fontsize=7, rotation=90 if len(layers) > 12 else 0)
    util = ax2.twinx()
    util.plot(list(x), [100 * l.get("mac_util", 0) for l in layers], "o-", color="black",
              markersize=3, linewidth=1)
    util.set_ylabel("MAC utilisation %")
    util.set_ylim(0, 100)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
