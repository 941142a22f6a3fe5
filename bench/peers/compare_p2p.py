#!/usr/bin/env python3
"""symmem-bench p2p beside bench/peers/nvshmem_p2p.cu, both run in one call on one machine.

    compare_p2p.py SYMMEM_JSON NVSHMEM_JSON [--out MERGED_JSON]

Prints, size by size, symmem's time over NVSHMEM's for each row both programs measured (one-way
put-with-signal latency, and symmem's LL put beside NVSHMEM's put with signal; SM and copy-engine
put and get, both directions at once; below 1: symmem faster), the latency variants at the first
size (a signal alone, released and relaxed, against NVSHMEM's, which orders nothing; a remote
fetch-add's round trip),
and the bytes either program found wrong. --out writes both programs' rows and the ratios as one
JSON (for bench/results/).
"""
import argparse
import json
import sys


def rows_by_key(doc):
    out = {}
    for r in doc.get("rows", []):
        out[(r["op"], r["algo"], int(r["bytes"]))] = r
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("symmem_json")
    ap.add_argument("nvshmem_json")
    ap.add_argument("--out")
    a = ap.parse_args()
    sym = json.load(open(a.symmem_json))
    nvs = json.load(open(a.nvshmem_json))
    S, N = rows_by_key(sym), rows_by_key(nvs)
    cols = [("p2p_latency", "put_signal", "lat"), ("p2p_put", "sm", "put_sm"), ("p2p_put", "copy_engine", "put_ce"),
            ("p2p_get", "sm", "get_sm"), ("p2p_get", "copy_engine", "get_ce"), ("p2p_put_bidir", "sm", "bi_sm"),
            ("p2p_put_bidir", "copy_engine", "bi_ce")]
    sizes = sorted({k[2] for k in S} & {k[2] for k in N})
    if not sizes:
        print("compare_p2p: no size in both files", file=sys.stderr)
        return 1
    print("# symmem / NVSHMEM %s time (below 1: symmem faster), %s, symmem %s, NVSHMEM %s" %
          ("p2p", sym.get("device", "?"), sym.get("commit", "?"), nvs.get("nvshmem_version", "?")))
    names = [c[2] for c in cols]
    names.insert(1, "ll/nvsh_put")
    print("%10s " % "size" + " ".join("%14s" % c for c in names) + " %7s %7s" % ("wrong_s", "wrong_n"))
    ratios = []
    bad = 0
    for n in sizes:
        cells = []
        ws = wn = 0
        for op, algo, name in cols:
            s, v = S.get((op, algo, n)), N.get((op, algo, n))
            if s is not None:
                ws = max(ws, int(s.get("wrong", 0) or 0))
            if v is not None:
                wn = max(wn, int(v.get("wrong", 0) or 0))
            su = s.get("symmem_us") if s else None
            nu = v.get("nvshmem_us") if v else None
            if su and nu:
                cells.append("%6.2f/%-6.2f" % (su, nu) if op == "p2p_latency" else "%5.2fx" % (su / nu))
                ratios.append({"op": op, "algo": algo, "bytes": n, "symmem_us": su, "nvshmem_us": nu, "ratio": su / nu})
            else:
                cells.append("-")
            if op == "p2p_latency":  # symmem's LL put beside NVSHMEM's put with signal (it has no LL form)
                lu = s.get("ll_put_us") if s else None
                if lu and nu:
                    cells.append("%6.2f/%-6.2f" % (lu, nu))
                    ratios.append({"op": op, "algo": "ll_put", "bytes": n, "symmem_us": lu, "nvshmem_us": nu, "ratio": lu / nu})
                else:
                    cells.append("-")
        bad += ws + wn
        print("%10d " % n + " ".join("%14s" % c for c in cells) + " %7d %7d" % (ws, wn))
    # The first size's latency variants.
    n0 = sizes[0]
    s0, v0 = S.get(("p2p_latency", "put_signal", n0)), N.get(("p2p_latency", "put_signal", n0))
    if s0 and v0:
        # (NVSHMEM's signal alone orders nothing: symmem's signal_relaxed is its like; signal releases.
        # NVSHMEM's wait makes a put-with-signal's data visible, as wait_signal does; relaxed_pair also
        # waits by relaxed polls, wait_signal_relaxed, which orders nothing)
        for skey, nkey in (("signal_only_us", "signal_only_us"), ("signal_relaxed_us", "signal_only_us"),
                           ("relaxed_pair_us", "signal_only_us"),
                           ("atomic_fetch_add_us", "atomic_fetch_add_us")):
            if s0.get(skey) and v0.get(nkey):
                print("# %s at %d B: symmem %.2f us, NVSHMEM %s %.2f us (%.2fx)" % (skey, n0, s0[skey], nkey, v0[nkey], s0[skey] / v0[nkey]))
                ratios.append({"op": "p2p_latency", "algo": skey[:-3], "bytes": n0, "symmem_us": s0[skey], "nvshmem_us": v0[nkey],
                               "ratio": s0[skey] / v0[nkey]})
    if a.out:
        json.dump({"symmem": sym, "nvshmem": nvs, "ratios": ratios}, open(a.out, "w"), indent=1)
    if bad:
        print("compare_p2p: %d bytes wrong" % bad, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
