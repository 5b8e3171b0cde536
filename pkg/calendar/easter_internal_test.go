package calendar

import (
	"testing"
	"time"
)

// knownEaster lists well-known Western Easter Sundays.
var knownEaster = []string{
	"2000-04-23", "2001-04-15", "2002-03-31", "2003-04-20", "2004-04-11",
	"2005-03-27", "2006-04-16", "2007-04-08", "2008-03-23", "2009-04-12",
	"2010-04-04", "2011-04-24", "2012-04-08", "2013-03-31", "2014-04-20",
	"2015-04-05", "2016-03-27", "2017-04-16", "2018-04-01", "2019-04-21",
	"2020-04-12", "2021-04-04", "2022-04-17", "2023-04-09", "2024-03-31",
	"2025-04-20", "2026-04-05", "2027-03-28", "2028-04-16", "2029-04-01",
	"2030-04-21", "2031-04-13", "2032-03-28", "2033-04-17", "2034-04-09",
	"2035-03-25", "2036-04-13", "2037-04-05", "2038-04-25", "2039-04-10",
	"2040-04-01", "2100-03-28",
}

// easter2000To2100 holds Easter Sunday ("MM-DD") of each year from 2000 to
// 2100, one row per decade (generated once with Oudin's algorithm and
// checked against published tables).
var easter2000To2100 = []string{
	"04-23", "04-15", "03-31", "04-20", "04-11", "03-27", "04-16", "04-08", "03-23", "04-12", // 2000
	"04-04", "04-24", "04-08", "03-31", "04-20", "04-05", "03-27", "04-16", "04-01", "04-21", // 2010
	"04-12", "04-04", "04-17", "04-09", "03-31", "04-20", "04-05", "03-28", "04-16", "04-01", // 2020
	"04-21", "04-13", "03-28", "04-17", "04-09", "03-25", "04-13", "04-05", "04-25", "04-10", // 2030
	"04-01", "04-21", "04-06", "03-29", "04-17", "04-09", "03-25", "04-14", "04-05", "04-18", // 2040
	"04-10", "04-02", "04-21", "04-06", "03-29", "04-18", "04-02", "04-22", "04-14", "03-30", // 2050
	"04-18", "04-10", "03-26", "04-15", "04-06", "03-29", "04-11", "04-03", "04-22", "04-14", // 2060
	"03-30", "04-19", "04-10", "03-26", "04-15", "04-07", "04-19", "04-11", "04-03", "04-23", // 2070
	"04-07", "03-30", "04-19", "04-04", "03-26", "04-15", "03-31", "04-20", "04-11", "04-03", // 2080
	"04-16", "04-08", "03-30", "04-12", "04-04", "04-24", "04-15", "03-31", "04-20", "04-12", // 2090
	"03-28", // 2100
}

// oudinEaster is Oudin's (1940) algorithm for Gregorian Easter, as given in
// Tøndering's Calendar FAQ: an independent check of easterSunday.
func oudinEaster(y int) date {
	g := y % 19
	c := y / 100
	h := (c - c/4 - (8*c+13)/25 + 19*g + 15) % 30
	i := h - (h/28)*(1-(29/(h+1))*((21-g)/11))
	j := (y + y/4 + i + 2 - c + c/4) % 7
	l := i - j
	month := 3 + (l+40)/44
	day := l + 28 - 31*(month/4)
	return date{y, time.Month(month), day}
}

func TestEasterKnownDates(t *testing.T) {
	for _, s := range knownEaster {
		want, ok := parseFullDate(s)
		if !ok {
			t.Fatalf("bad date %q", s)
		}
		if got := easterSunday(want.y); got != want {
			t.Errorf("easterSunday(%d) = %s, want %s", want.y, got, want)
		}
	}
}

func TestEasterEveryYear2000To2100(t *testing.T) {
	if len(easter2000To2100) != 101 {
		t.Fatalf("table has %d years", len(easter2000To2100))
	}
	for y := 2000; y <= 2100; y++ {
		got := easterSunday(y)
		if md := monthDay(got.m, got.d); md != easter2000To2100[y-2000] {
			t.Errorf("easterSunday(%d) = %s, table says %s", y, got, easter2000To2100[y-2000])
		}
		if want := oudinEaster(y); got != want {
			t.Errorf("easterSunday(%d) = %s, Oudin says %s", y, got, want)
		}
		if got.weekday() != time.Sunday {
			t.Errorf("easterSunday(%d) = %s is a %s", y, got, got.weekday())
		}
		// Western Easter falls between 22 March and 25 April.
		if got.before(date{y, time.March, 22}) || (date{y, time.April, 25}).before(got) {
			t.Errorf("easterSunday(%d) = %s out of range", y, got)
		}
	}
	// And over the algorithm's whole cycle of use.
	for y := 1583; y <= 4099; y++ {
		if got, want := easterSunday(y), oudinEaster(y); got != want {
			t.Errorf("easterSunday(%d) = %s, Oudin says %s", y, got, want)
		}
	}
}
