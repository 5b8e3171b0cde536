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

// julianEasterSunday is Orthodox Easter Sunday of year y: Easter computed
// in the Julian calendar (Meeus's Julian algorithm), as a Gregorian date.
func julianEasterSunday(y int) date {
	a, b, c := y%4, y%7, y%19
	d := (19*c + 15) % 30
	e := (2*a + 4*b - d + 34) % 7
	month := (d + e + 114) / 31
	day := (d+e+114)%31 + 1
	return dateOfDays(julianDays(y, month, day))
}

// julianDays is the number of days from 1970-01-01 (Gregorian) to y-m-d
// in the Julian calendar, by its Julian Day Number.
func julianDays(y, m, d int) int64 {
	a := (14 - m) / 12
	yy := int64(y) + 4800 - int64(a)
	mm := int64(m) + 12*int64(a) - 3
	jdn := int64(d) + (153*mm+2)/5 + 365*yy + floorDiv(yy, 4) - 32083
	return jdn - 2440588
}
