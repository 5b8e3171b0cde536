package readmodel

import (
	"encoding/json"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Flags is what a listing keeps of a schedule to name its state: the
// admin API's catalogue and the console's index hold one a schedule.
type Flags uint8

// The flags of a schedule.
const (
	FlagInvalid Flags = 1 << iota // the spec does not decode or validate
	FlagState                     // a state record exists
	FlagPaused                    // the state record says paused
	FlagEnded                     // the state record says ended
	// FlagListed: an ended list names the one-shot's time (it stands for
	// the ended record while the schedule has none of its own).
	FlagListed
)

// RecordBits are the flags a state record sets.
const RecordBits = FlagState | FlagPaused | FlagEnded

// State is the listing state the flags name (one of admin.States). Every
// schedule is in exactly one: invalid (its spec does not decode or
// validate), ended (its record says so, or, without a record, an ended
// list names it), paused, planned (valid, no state record yet: it has not
// fired), or active.
func (f Flags) State() string {
	switch {
	case f&FlagInvalid != 0:
		return admin.StateInvalid
	case f&FlagEnded != 0, f&(FlagState|FlagListed) == FlagListed:
		return admin.StateEnded
	case f&FlagPaused != 0:
		return admin.StatePaused
	case f&FlagState == 0:
		return admin.StatePlanned
	}
	return admin.StateActive
}

// StateFlags are the flags of a decoded state record st.
func StateFlags(st *kvstore.State) Flags {
	f := FlagState
	if st.Paused != nil {
		f |= FlagPaused
	}
	if st.Ended {
		f |= FlagEnded
	}
	return f
}

// RecordFlags reads the flags of a state record's value without decoding
// the rest of it (a catalogue of a million schedules loads them all); one
// that does not decode is a record all the same.
func RecordFlags(value []byte) Flags {
	var st struct {
		Paused *json.RawMessage `json:"paused"`
		Ended  bool             `json:"ended"`
	}
	flags := FlagState
	if json.Unmarshal(value, &st) != nil {
		return flags
	}
	if st.Paused != nil {
		flags |= FlagPaused
	}
	if st.Ended {
		flags |= FlagEnded
	}
	return flags
}

// StateOf is the listing state of a schedule as Model.Info shows it.
func StateOf(v admin.ScheduleInfo) string {
	var flags Flags
	if v.Invalid != "" {
		flags |= FlagInvalid
	}
	if st := v.State; st != nil && !v.Planned {
		flags |= StateFlags(st)
	}
	return flags.State()
}
