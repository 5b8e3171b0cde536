"""Prints the weekday holidays of pandas' USFederalHolidayCalendar (Debian's
python3-pandas) from FROM to TO as a JSON list of "YYYY-MM-DD", for
calendars/conformance_test.go: python3 pandas_ref.py FROM TO."""
import json
import sys

from pandas.tseries.holiday import USFederalHolidayCalendar

lo, hi = int(sys.argv[1]), int(sys.argv[2])
days = USFederalHolidayCalendar().holidays(f"{lo}-01-01", f"{hi}-12-31")
json.dump(sorted(d.strftime("%Y-%m-%d") for d in days if d.weekday() < 5), sys.stdout)
