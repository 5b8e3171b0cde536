package cronx

import "time"

// LoadZone resolves an IANA time zone name such as "Europe/London".
// The empty name means UTC. "Local" is rejected because its meaning depends
// on the host, which a distributed scheduler must not rely on.
// Errors are *ParseError with Field "tz".
//
// Zone data comes from the host or the Go installation, as for
// time.LoadLocation; binaries that run where neither is available should
// import time/tzdata.
func LoadZone(name string) (*time.Location, error) {
	switch name {
	case "":
		return time.UTC, nil
	case "Local":
		return nil, &ParseError{Field: "tz", Value: name, Reason: `"Local" depends on the host; use an IANA zone name such as "Europe/London"`}
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, &ParseError{Field: "tz", Value: name, Reason: "unknown time zone"}
	}
	return loc, nil
}
