package calendar

import (
	"math"
	"time"
)

// The equinoxes, by J. Meeus, Astronomical Algorithms (2nd ed.), chapter
// 27: a mean instant from a polynomial in the year, corrected by 24
// periodic terms, in Terrestrial Time; ΔT (TT - UT) by the polynomials of
// Espenak and Meeus. The instant is within a minute or two of the true one
// for the years 1000 to 3000, which settles the date in a zone but for an
// equinox within minutes of midnight; far from the present (ΔT is then a
// guess, and past 3000 the mean equinox year carries on) the date is an
// estimate, within days.

// equinoxTerms are Meeus's periodic terms: A, B (degrees), C (degrees per
// Julian century).
var equinoxTerms = [24][3]float64{
	{485, 324.96, 1934.136}, {203, 337.23, 32964.467}, {199, 342.08, 20.186}, {182, 27.85, 445267.112},
	{156, 73.14, 45036.886}, {136, 171.52, 22518.443}, {77, 222.54, 65928.934}, {74, 296.72, 3034.906},
	{70, 243.58, 9037.513}, {58, 119.81, 33718.147}, {52, 297.17, 150.678}, {50, 21.02, 2281.226},
	{45, 247.54, 29929.562}, {44, 325.15, 31555.956}, {29, 60.93, 4443.417}, {18, 155.12, 67555.328},
	{17, 288.79, 4562.452}, {16, 198.04, 62894.029}, {14, 199.76, 31436.921}, {12, 95.39, 14577.848},
	{12, 287.11, 31931.756}, {12, 320.81, 34777.259}, {9, 227.73, 1222.114}, {8, 15.45, 16859.074},
}

// equinoxInstant is the instant of the March (month March) or September
// equinox of year y, as unix seconds.
func equinoxInstant(y int, month time.Month) int64 {
	var jde0 float64
	if y < 1000 {
		t := float64(y) / 1000
		if month == time.March {
			jde0 = 1721139.29189 + 365242.13740*t + 0.06134*t*t + 0.00111*t*t*t - 0.00071*t*t*t*t
		} else {
			jde0 = 1721325.70455 + 365242.49558*t - 0.11677*t*t - 0.00297*t*t*t + 0.00074*t*t*t*t
		}
	} else {
		// Past 3000 the polynomials diverge: continue from 3000 along
		// their slope there, the length of the equinox year.
		t := (float64(min(y, 3000)) - 2000) / 1000
		if month == time.March {
			jde0 = 2451623.80984 + 365242.37404*t + 0.05169*t*t - 0.00411*t*t*t - 0.00057*t*t*t*t
		} else {
			jde0 = 2451810.21715 + 365242.01767*t - 0.11575*t*t + 0.00337*t*t*t + 0.00078*t*t*t*t
		}
		if y > 3000 {
			year := 365.2424629 // d/dy of the March polynomial at 3000
			if month == time.September {
				year = 365.2417995
			}
			jde0 += float64(y-3000) * year
		}
	}
	const rad = math.Pi / 180
	tc := (jde0 - 2451545.0) / 36525
	w := (35999.373*tc - 2.47) * rad
	dl := 1 + 0.0334*math.Cos(w) + 0.0007*math.Cos(2*w)
	var s float64
	for _, k := range equinoxTerms {
		s += k[0] * math.Cos((k[1]+k[2]*tc)*rad)
	}
	jde := jde0 + 0.00001*s/dl
	ut := (jde-2440587.5)*secondsPerDay - deltaT(float64(y)+float64(month-1)/12)
	return int64(math.Round(ut))
}

// deltaT is TT - UT in seconds at decimal year y (Espenak and Meeus, for
// NASA's eclipse canon; their long-term parabola outside -500 to 2150).
func deltaT(y float64) float64 {
	switch {
	case y >= 1900 && y < 1920:
		t := y - 1900
		return -2.79 + 1.494119*t - 0.0598939*t*t + 0.0061966*t*t*t - 0.000197*t*t*t*t
	case y >= 1920 && y < 1941:
		t := y - 1920
		return 21.20 + 0.84493*t - 0.076100*t*t + 0.0020936*t*t*t
	case y >= 1941 && y < 1961:
		t := y - 1950
		return 29.07 + 0.407*t - t*t/233 + t*t*t/2547
	case y >= 1961 && y < 1986:
		t := y - 1975
		return 45.45 + 1.067*t - t*t/260 - t*t*t/718
	case y >= 1986 && y < 2005:
		t := y - 2000
		return 63.86 + 0.3345*t - 0.060374*t*t + 0.0017275*t*t*t + 0.000651814*t*t*t*t + 0.00002373599*t*t*t*t*t
	case y >= 2005 && y < 2050:
		t := y - 2000
		return 62.92 + 0.32217*t + 0.005589*t*t
	case y >= 2050 && y < 2150:
		u := (y - 1820) / 100
		return -20 + 32*u*u - 0.5628*(2150-y)
	case y >= 1800 && y < 1900:
		t := y - 1860
		return 13.72 - 0.332447*t + 0.0068612*t*t + 0.0041116*t*t*t - 0.00037436*t*t*t*t +
			0.0000121272*t*t*t*t*t - 0.0000001699*t*t*t*t*t*t + 0.000000000875*t*t*t*t*t*t*t
	}
	u := (y - 1820) / 100
	return -20 + 32*u*u
}

// equinoxDate is the date of the equinox in zone loc.
func equinoxDate(y int, month time.Month, loc *time.Location) date {
	if loc == nil {
		loc = time.UTC
	}
	return dateOf(time.Unix(equinoxInstant(y, month), 0).In(loc))
}
