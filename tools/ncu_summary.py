#!/usr/bin/env python3
"""Summaries of Nsight Compute reports for the device calls' steps (tools/call.sh's NM and NSRC).

  ncu_summary.py metrics CSV   one line a kernel launch of `ncu -i REP --page raw --csv`: time, the
                               max SM cycles and clock, L2 read sectors, their hardware-coalesced
                               share, L2 fabric and DRAM sectors (whichever of them were collected)
  ncu_summary.py raw CSV       the same CSV in full: each launch's kernel, then every metric it holds
  ncu_summary.py source CSV    per kernel of `ncu -i REP --page source --csv --print-source sass`:
                               stall samples by opcode and the instructions holding the most
"""
import collections
import csv
import sys

METRICS = [  # (label, metric, format): times in us, clocks in GHz, counts in millions (sectors) or thousands (cycles)
    ("us", "gpu__time_duration.sum", "%.1f"),
    ("cyc K", "sm__cycles_elapsed.max", "%.0f"),
    ("GHz", "sm__cycles_elapsed.avg.per_second", "%.3f"),
    ("L2 M", "lts__t_sectors_srcunit_tex_op_read.sum", "%.1f"),
    ("hwcoal M", "lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum", "%.1f"),
    ("fabric M", "lts__t_sectors_srcunit_ltcfabric.sum", "%.1f"),
    ("dram M", "dram__sectors_read.sum", "%.1f"),
]
# ncu's units row names each column's unit; these bring them to the labels' units.
TO_LABEL = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6, "cycle/nsecond": 1.0, "cycle/usecond": 1e-3,
            "cycle/second": 1e-9, "Ghz": 1.0, "Mhz": 1e-3, "hz": 1e-9, "cycle": 1e-3, "sector": 1e-6, "Ksector": 1e-3,
            "Msector": 1.0, "Kcycle": 1.0, "Mcycle": 1e3}


def metrics(path):
    rows = list(csv.reader(open(path)))
    hdr, units = rows[0], rows[1]
    for r in rows[2:]:
        if len(r) != len(hdr):
            continue
        parts = [r[hdr.index("Kernel Name")][:48]]
        for label, m, fmt in METRICS:
            if m not in hdr:
                continue
            i = hdr.index(m)
            try:
                v = float(r[i].replace(",", "")) * TO_LABEL.get(units[i], float("nan"))
            except ValueError:
                continue
            parts.append(("%s " + fmt) % (label, v) + ("" if units[i] in TO_LABEL else " (%s?)" % units[i]))
        print("  " + "  ".join(parts))


def raw(path):
    rows = list(csv.reader(open(path)))
    hdr = rows[0]
    for r in rows[2:]:
        if len(r) != len(hdr):
            continue
        print(r[hdr.index("Kernel Name")][:60])
        for i, h in enumerate(hdr):
            if "__" in h:
                print("   %-62s %s" % (h, r[i]))


def source(path):
    kernels, name, hdr, body = [], None, None, None
    for r in csv.reader(open(path)):
        if r and r[0] == "Kernel Name":
            if body:
                kernels.append((name, body))
            name, hdr, body = r[1], None, []
        elif hdr is None and "Source" in r and "Address" in r:
            hdr = r
        elif hdr is not None:
            try:
                body.append((int(r[hdr.index("Warp Stall Sampling (All Samples)")]), int(r[hdr.index("Instructions Executed")]),
                             r[hdr.index("Source")].strip()))
            except (ValueError, IndexError):
                pass
    if body:
        kernels.append((name, body))
    seen = set()
    for name, body in kernels:
        if (name, tuple(body)) in seen:  # (ncu's source page lists each launch twice)
            continue
        seen.add((name, tuple(body)))
        tot = max(1, sum(b[0] for b in body))
        kinds = collections.Counter()
        for s, _, t in body:
            w = t.split()
            op = w[1] if w and w[0].startswith("@") and len(w) > 1 else (w[0] if w else "?")
            kinds[op.split(".")[0]] += s
        print("== %s: %d instructions, %d stall samples, %d executed" % (name[:90], len(body), tot, sum(b[1] for b in body)))
        print("   by opcode:", ", ".join("%s %.1f%%" % (k, 100.0 * v / tot) for k, v in kinds.most_common(12)))
        for s, n, t in sorted(body, reverse=True)[:18]:
            print("   %7d %5.1f%% %10d  %s" % (s, 100.0 * s / tot, n, t[:90]))


if __name__ == "__main__":
    modes = {"metrics": metrics, "raw": raw, "source": source}
    if len(sys.argv) != 3 or sys.argv[1] not in modes:
        sys.exit(__doc__)
    modes[sys.argv[1]](sys.argv[2])
