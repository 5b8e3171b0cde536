package cronx

import (
	"sync"
	"time"

	"github.com/jetsched/jetsched/internal/suggest"
)

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
		reason := "unknown time zone"
		if near := suggest.Zone(name); near != "" {
			reason += `; did you mean "` + near + `"?`
		}
		return nil, &ParseError{Field: "tz", Value: name, Reason: reason}
	}
	return loc, nil
}

// Zones resolves zone names as LoadZone does, and hands out one shared
// *time.Location per name: each time.LoadLocation builds a new one with
// its own transition tables (several KB), so a scheduler holding a
// million schedules in a few zones keeps a few Locations, not a million.
// The zero Zones is ready to use and safe for concurrent use; a nil *Zones
// loads every time.
type Zones struct {
	m sync.Map // name -> *time.Location
}

// Load is LoadZone, shared.
func (z *Zones) Load(name string) (*time.Location, error) {
	if z == nil || name == "" {
		return LoadZone(name)
	}
	if loc, ok := z.m.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := LoadZone(name)
	if err != nil {
		return nil, err
	}
	actual, _ := z.m.LoadOrStore(name, loc)
	return actual.(*time.Location), nil
}
