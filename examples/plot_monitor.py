"""
=====================================================================
Monitoring a deployed model: test, detect, and a tolerance
=====================================================================

A model scores 3,000 rows a day. For two months it is *practically* calibrated (its l1
calibration error ``E|E[y | p] - p|`` is about 0.007, a trained model's honest imperfection), then
an upstream change makes it over-confident (an error of about 0.035). Three monitors read the
same log, every night:

* the **exact test** (``tolerance=0``) asks "has the model been exactly calibrated?": with enough
  rows every real model fails it, and this one does long before the drift;
* the **tolerance test** (``tolerance=0.01``) asks "has the calibration error exceeded 0.01?":
  it stays silent on the honest imperfection and alarms after the drift, with a time-uniform
  lower confidence bound of the error that an operator can read on any night;
* the **detector** (``mode="detect"``) asks "has it become worse than 0.01?", with its false
  alarms stated in rows (at most one per ``false_alarm_rows_`` rows on average).

After the alarm the model is retrained and a new segment starts; the history is kept.
"""

# %%
# The log: two months near calibration, then a drift
# ---------------------------------------------------
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from skcal.monitor import CalibrationMonitor, render_prometheus

rng = np.random.default_rng(0)
per_day, days, drift_day = 3_000, 90, 60
n = per_day * days
time = pd.Timestamp("2024-03-01") + pd.to_timedelta(np.sort(rng.uniform(0, days, size=n)), unit="D")
p = rng.beta(2, 2, size=n)
logit = np.log(p / (1 - p))
temperature = np.where(time < pd.Timestamp("2024-03-01") + pd.Timedelta(days=drift_day), 1.05, 1.35)
truth = 1 / (1 + np.exp(-logit / temperature))  # the model's p is over-confident by this factor
y = rng.uniform(size=n) < truth

# %%
# Three monitors, fed night by night
# ----------------------------------
monitors = {
    "exact test (tolerance 0)": CalibrationMonitor(),
    "tolerance test (0.01)": CalibrationMonitor(tolerance=0.01),
    "detector (0.01)": CalibrationMonitor(tolerance=0.01, mode="detect"),
}
night = time.floor("D")
for day in np.unique(night):
    rows = night == day
    for m in monitors.values():
        m.update(y[rows], p[rows], time=time[rows])
for name, m in monitors.items():
    st = m.status()
    when = "none" if st["alarm_time"] is None else pd.Timestamp(st["alarm_time"]).strftime("%Y-%m-%d %H:%M")
    print(
        f"{name}: alarm at {when}; calibration error at least "
        f"{st['calibration_error_lcb']:.4f}; log10 evidence {st['log10_evidence']:.1f}"
    )
print(monitors["detector (0.01)"].guarantee())

# %%
# What each one saw
# -----------------
# Top: the time-uniform lower confidence bound of the calibration error (valid on every night at
# once) against the tolerance; the tolerance test alarms when it reaches 0.01. Bottom: the
# evidence in log10 against each alarm threshold.
fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True, layout="constrained")
for (name, m), color in zip(monitors.items(), ("C0", "C1", "C2"), strict=True):
    h = m.history_
    if m.mode == "test":
        top.step(h["time_end"], h["calibration_error_lcb"], where="post", color=color, label=name)
    bottom.plot(h["time_end"], h["log10_evidence"], color=color, label=name)
    bottom.axhline(m.log10_threshold_, color=color, ls=":", lw=1)
    if m.alarm_:
        for ax in (top, bottom):
            ax.axvline(pd.Timestamp(m.status()["alarm_time"]), color=color, lw=1, alpha=0.7)
drift = pd.Timestamp("2024-03-01") + pd.Timedelta(days=drift_day)
for ax in (top, bottom):
    ax.axvline(drift, color="0.3", ls="--", lw=1)
top.axhline(0.01, color="C1", ls="--", lw=1, label="tolerance 0.01")
top.set_ylabel("calibration error at least")
top.legend(fontsize="small", loc="upper left")
bottom.set_ylabel("log10 evidence")
bottom.set_ylim(-5, 25)
bottom.legend(fontsize="small", loc="upper left")
top.set_title("The drift (dashed) and each monitor's alarm (solid)")

# %%
# Retrained: a new segment, the history kept
# ------------------------------------------
# After the alarm the model is retrained; the tolerance monitor starts a new segment (its
# evidence, bound and alarm start again) and its state, written as JSON each night, keeps the
# earlier segment for the page. The status goes to the alerting stack in the Prometheus text
# format.
m = monitors["tolerance test (0.01)"]
m.new_segment("retrained 2024-06-01")
rng2 = np.random.default_rng(1)
p_new = rng2.beta(2, 2, size=20_000)
t_new = pd.Timestamp("2024-06-01") + pd.to_timedelta(np.sort(rng2.uniform(0, 7, 20_000)), unit="D")
m.update(rng2.uniform(size=20_000) < p_new, p_new, time=t_new)
print(m.segments_[["label", "first_row", "alarm_at", "calibration_error_lcb"]])
print(render_prometheus(m, labels={"model": "churn"}))
