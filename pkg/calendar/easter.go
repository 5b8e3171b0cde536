package calendar

import "time"

// easterSunday is Western (Gregorian) Easter Sunday of year y, by the
// anonymous Gregorian algorithm.
func easterSunday(y int) date {
	a := y % 19
	b, c := y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return date{y, time.Month(month), day}
}
