package calendars_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// debianPython is Debian's interpreter, which finds the python3-pandas
// package (another python3 on the PATH may not).
const debianPython = "/usr/bin/python3"

// TestConformancePandas compares builtin:us-federal's weekday holidays,
// 2000 to 2040, with pandas' USFederalHolidayCalendar (Debian's
// python3-pandas, which test.sh installs): every date one has and the
// other has not must be listed in about.differences against "pandas",
// and every listed one must still differ. pandas gives only the days off
// (a Saturday's Friday, not the Saturday), so weekends are left out. Without
// python3-pandas the test is skipped, except under CI where it fails.
func TestConformancePandas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := exec.CommandContext(ctx, debianPython, "-c", "import pandas").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3-pandas is not installed (apt-get install python3-pandas): us-federal is compared with it in CI: %v", err)
		}
		t.Skipf("python3-pandas is not installed: us-federal's comparison with pandas is skipped (%v)", err)
	}
	cmd := exec.CommandContext(ctx, debianPython, "pandas_ref.py", strconv.Itoa(firstYear), strconv.Itoa(lastYear))
	cmd.Dir = dateHolidaysDir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pandas_ref.py: %v", err)
	}
	var dates []string
	if err := json.Unmarshal(out, &dates); err != nil {
		t.Fatalf("pandas_ref.py printed %.200q: %v", out, err)
	}
	theirs := map[string]bool{}
	for _, d := range dates {
		theirs[d] = true
	}
	const name = "builtin:us-federal"
	ours := holidayDates(t, name)
	for d := range ours {
		if wd := mustDate(t, d).Weekday(); wd == time.Saturday || wd == time.Sunday {
			delete(ours, d)
		}
	}
	checkDifferences(t, name, "pandas", ours, theirs)
}

// mustDate parses "YYYY-MM-DD".
func mustDate(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
