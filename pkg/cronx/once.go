package cronx

import "time"

// Once fires exactly once, at At. The zero Once never fires.
type Once struct {
	At time.Time
}

// Next returns At in UTC if it is strictly after after, and the zero time
// otherwise.
func (o Once) Next(after time.Time) time.Time {
	if o.At.IsZero() || !o.At.Round(0).After(after.Round(0)) {
		return time.Time{}
	}
	return o.At.UTC()
}

// String returns "once at <At>" (RFC 3339, UTC), or "never" for the zero
// Once.
func (o Once) String() string {
	if o.At.IsZero() {
		return "never"
	}
	return "once at " + o.At.UTC().Format(time.RFC3339Nano)
}
