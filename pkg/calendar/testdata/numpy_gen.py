#!/usr/bin/python3
"""Writes numpy_busday.json: reference vectors for pkg/calendar's
arithmetic in both directions, computed by numpy's busday_offset and
busday_count and pandas' CustomBusinessHour (TestNumpyReference reads
them). Run from this directory with Debian's python3-numpy and
python3-pandas:

    apt-get install -y python3-numpy python3-pandas
    /usr/bin/python3 numpy_gen.py

Dates are days since 1970-01-01; instants are seconds since the epoch in
UTC (the calendars are in UTC). The holidays are random dates: the
arithmetic, not the holiday rules, is under test here.
"""
import json
import random

import numpy as np
import pandas as pd

random.seed(55)
LO, HI = np.datetime64("2018-01-01"), np.datetime64("2034-12-31")
EPOCH = np.datetime64("1970-01-01")

CALENDARS = [
    # name, numpy weekmask (Monday first), weekend for the calendar JSON
    ("mon-fri", "1111100", ["sat", "sun"]),
    ("sun-thu", "1111001", ["fri", "sat"]),
    ("mon-sat", "1111110", ["sun"]),
]
ROLLS = ["forward", "backward", "modifiedfollowing", "modifiedpreceding"]


def day(d):
    return int((d - EPOCH).astype(int))


def rand_date():
    return LO + np.timedelta64(random.randrange(int((HI - LO).astype(int))), "D")


out = {"generator": "numpy " + np.__version__ + ", pandas " + pd.__version__, "calendars": []}
for name, mask, weekend in CALENDARS:
    holidays = sorted({rand_date() for _ in range(160)})
    # numpy holidays on weekend days are harmless; keep them all.
    cal = np.busdaycalendar(weekmask=mask, holidays=holidays)
    offsets, counts, rolls = [], [], []
    for _ in range(1500):
        d = rand_date()
        n = random.choice([random.randint(-40, 40), random.randint(-600, 600)])
        roll = random.choice(ROLLS)
        try:
            r = np.busday_offset(d, n, roll=roll, busdaycal=cal)
        except ValueError:
            continue  # out of numpy's range
        offsets.append([day(d), n, roll, day(r)])
    for _ in range(800):
        a, b = rand_date(), rand_date()
        if random.random() < 0.5:
            b = a + np.timedelta64(random.randint(-20, 20), "D")
        counts.append([day(a), day(b), int(np.busday_count(a, b, busdaycal=cal))])
    for _ in range(400):
        d = rand_date()
        roll = random.choice(ROLLS)
        rolls.append([day(d), roll, day(np.busday_offset(d, 0, roll=roll, busdaycal=cal))])
    # Working hours 09:00-17:00 on the mask's days, by pandas.
    names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    wm = " ".join(n for n, bit in zip(names, mask) if bit == "1")
    hol = [pd.Timestamp(h) for h in holidays]
    hours = []
    for _ in range(700):
        t = pd.Timestamp(rand_date()) + pd.Timedelta(minutes=30 * random.randrange(48))
        n = random.choice([random.randint(-30, 30), random.randint(-400, 400)])
        if n == 0:
            continue
        r = t + pd.offsets.CustomBusinessHour(n=n, start="09:00", end="17:00", weekmask=wm, holidays=hol)
        hours.append([int(t.timestamp()), n, int(r.timestamp())])
    out["calendars"].append({
        "name": name, "weekend": weekend,
        "holidays": [str(h) for h in holidays],
        "offsets": offsets, "counts": counts, "rolls": rolls, "hours": hours,
    })

with open("numpy_busday.json", "w") as f:
    json.dump(out, f, separators=(",", ":"))
    f.write("\n")
