"""The figures of the benchmarks: speed against the peers, cost per event.

Shared by ``run_all.py`` and ``bench_peers.py`` (which both redraw
``results.png``), so neither imports the other.
"""
from __future__ import annotations

COLOURS = {"qlib": "C0", "qlib-tasks": "C4", "heapq": "C2", "simpy": "C1", "ciw": "C3"}


def speed_panels(res, ax):
    """Draw events per CPU second (``ax[0]``) and the ratios at n = 1000 (``ax[1]``).

    (a): qlib ÷ peer, the same algorithm in both.  (b): split into the engine
    ratio (per-server qlib ÷ peer, the same algorithm) and the algorithm
    ratio (occupancy chain ÷ per-server qlib, the same engine); the ratio of
    the chain to a peer is their product.  Used by :func:`plot` and by the
    chapter ``performance.md``.
    """
    import numpy as np

    colours = COLOURS
    sp = res["speed"]
    for engine, c in colours.items():
        for model, mk, ls in (("ring", "o", "-"), ("complete", "s", "--")):
            pts = sorted((r["n"], r["events_per_s"]) for r in sp
                         if r["engine"] == engine and r["model"] == model
                         and r["mu_label"] in ("log n", "-"))
            if pts:
                x, y = zip(*pts)
                name = {("qlib", "complete"): "qlib occupancy chain",
                        ("qlib-tasks", "complete"): "qlib per server"}.get((engine, model), engine)
                ax[0].plot(x, y, ls, marker=mk, color=c,
                           label=f"{name}, {'(a) μ = log n' if model == 'ring' else '(b)'}")
    ax[0].set(xscale="log", yscale="log", xlabel="n", ylabel="events per CPU second",
              title="Events per CPU second")
    ax[0].legend(fontsize=6)
    groups = [("ring", "0", "(a) μ = 0"), ("ring", "log n", "(a) μ = log n"),
              ("ring", "inf", "(a) μ = ∞")]
    ratio = {(r["model"], r["mu_label"], r["engine"]): r["ratio"]
             for r in res["ratios"] if r["n"] == 1000}
    split = {r["engine"]: r for r in res.get("ratios_complete", []) if r["n"] == 1000}
    for k, engine in enumerate(("heapq", "simpy", "ciw")):
        vals = [ratio.get((m, lab, engine), np.nan) for m, lab, _ in groups]
        vals.append(split[engine]["engine_ratio"] if engine in split else np.nan)
        ax[1].bar(np.arange(4) + (k - 1) * 0.27, vals, width=0.27,
                  color=colours[engine], label=engine)
    if split:
        ax[1].bar([4], [next(iter(split.values()))["algorithm_ratio"]], width=0.27,
                  color=colours["qlib"], label="chain ÷ qlib per server")
    ax[1].set_xticks(range(5), [g[2] for g in groups]
                     + ["(b) engine:\nqlib per server\n÷ peer",
                        "(b) algorithm:\nchain ÷\nqlib per server"], fontsize=7)
    ax[1].set(yscale="log", ylabel="ratio of events per CPU second",
              title="Speed-up at n = 1000 ((a): qlib ÷ peer)")
    allv = list(ratio.values()) + [r["engine_ratio"] for r in split.values()]
    ax[1].set_ylim(1, 30 * max(allv))
    ax[1].legend(fontsize=7, loc="upper center", ncol=2)
    for y in (100, 1e4):
        ax[1].axhline(y, color="grey", lw=0.8, ls=":")


def plot(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(16, 4.6))
    speed_panels(res, ax)
    for k, lab in enumerate(("0", "log log n", "log n", "n", "inf")):
        pts = sorted((r["n"], r["ns_per_event"]) for r in res["scaling"]
                     if r["mu_label"] == lab)
        if pts:
            x, y = zip(*pts)
            ax[2].plot(x, y, "o-", color=f"C{k}", label=f"μ = {lab}")
    ax[2].set(xscale="log", xlabel="n", ylabel="CPU ns per event",
              title="qlib.simulate on the ring: cost per event")
    ax[2].set_ylim(bottom=0)
    ax[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
