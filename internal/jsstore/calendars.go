package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/calendars"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// ErrInUse is returned when removing a calendar that schedules still name.
var ErrInUse = errors.New("kvstore: in use")

// CalendarEntry is a stored calendar with its name and revision.
type CalendarEntry struct {
	Name     string
	Calendar *calendar.Calendar
	Revision uint64
}

// PutCalendar validates a calendar's JSON form and stores it under name,
// in canonical form. Nothing is written when it does not parse.
func (s *Store) PutCalendar(ctx context.Context, name string, data []byte) (CalendarEntry, error) {
	if err := CheckStoredCalendarName(name); err != nil {
		return CalendarEntry{}, err
	}
	cal, err := calendar.Parse(data)
	if err != nil {
		return CalendarEntry{}, &kvstore.FieldError{Field: "calendar", Value: name, Err: err}
	}
	canon, err := cal.MarshalJSON()
	if err != nil {
		return CalendarEntry{}, fmt.Errorf("kvstore: encode calendar %q: %w", name, err)
	}
	var rev uint64
	err = s.WriteAhead(ctx, Intent{Action: "calendar.put", Target: name, Detail: json.RawMessage(canon), Bucket: s.layout.CalendarsBucket, Key: name, SHA256: sha256Hex(canon)},
		func(mark AuditMark) (err error) {
			rev, err = s.putMarked(ctx, s.calendars, name, canon, mark)
			return err
		})
	if err != nil {
		return CalendarEntry{}, fmt.Errorf("kvstore: put calendar %q: %w", name, err)
	}
	return CalendarEntry{Name: name, Calendar: cal, Revision: rev}, nil
}

// GetCalendar reads and parses a calendar; ErrNotFound when there is none.
// A shipped calendar (builtin:NAME) comes from the binary, with revision 0.
func (s *Store) GetCalendar(ctx context.Context, name string) (CalendarEntry, error) {
	if calendars.IsBuiltin(name) {
		return builtinCalendar(name)
	}
	e, err := get(ctx, s.calendars, "calendar", name)
	if err != nil {
		return CalendarEntry{}, fmt.Errorf("kvstore: get calendar %q: %w", name, err)
	}
	cal, err := calendar.Parse(e.Value())
	if err != nil {
		return CalendarEntry{Name: name, Revision: e.Revision()}, &kvstore.FieldError{Field: "calendar", Value: name, Err: err}
	}
	return CalendarEntry{Name: name, Calendar: cal, Revision: e.Revision()}, nil
}

// ListCalendars returns every calendar; ones that do not parse come back
// with a nil Calendar and their error in the map.
func (s *Store) ListCalendars(ctx context.Context) ([]CalendarEntry, map[string]error, error) {
	var out []CalendarEntry
	bad := map[string]error{}
	err := s.readAll(ctx, s.calendars, ">", func(e jetstream.KeyValueEntry) {
		cal, err := calendar.Parse(e.Value())
		if err != nil {
			bad[e.Key()] = err
		}
		out = append(out, CalendarEntry{Name: e.Key(), Calendar: cal, Revision: e.Revision()})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("kvstore: list calendars: %w", err)
	}
	return out, bad, nil
}

// DeleteCalendar removes a calendar. Unless force is set, a calendar that
// a spec names is refused with ErrInUse (listing the schedules).
func (s *Store) DeleteCalendar(ctx context.Context, name string, force bool) error {
	if err := CheckStoredCalendarName(name); err != nil {
		return err
	}
	if _, err := get(ctx, s.calendars, "calendar", name); err != nil {
		return fmt.Errorf("kvstore: delete calendar %q: %w", name, err)
	}
	if !force {
		users, err := s.CalendarUsers(ctx, name)
		if err != nil {
			return err
		}
		if len(users) > 0 {
			return userErrorf(ErrInUse, "in use: calendar %q is used by %d schedule(s) %s; remove them first or force", name, len(users), firstFew(users))
		}
	}
	err := s.WriteAhead(ctx, Intent{Action: "calendar.delete", Target: name, Detail: map[string]bool{"force": force}, Bucket: s.layout.CalendarsBucket, Key: name},
		func(mark AuditMark) error {
			_, err := s.deleteKey(ctx, s.calendars, name, 0, mark)
			return err
		})
	if err != nil {
		return fmt.Errorf("kvstore: delete calendar %q: %w", name, err)
	}
	return nil
}

// CalendarUsers lists the ids of the specs that name calendar name. It
// reads the specs one at a time and keeps only the ids of the users.
func (s *Store) CalendarUsers(ctx context.Context, name string) ([]string, error) {
	var users []string
	err := s.readAll(ctx, s.specs, ">", func(e jetstream.KeyValueEntry) {
		var ref struct {
			Calendar string `json:"calendar"`
		}
		if json.Unmarshal(e.Value(), &ref) == nil && ref.Calendar == name {
			users = append(users, e.Key())
		}
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: schedules using calendar %q: %w", name, err)
	}
	return users, nil
}

// WatchCalendars watches every calendar like WatchSpecs.
func (s *Store) WatchCalendars(ctx context.Context) (jetstream.KeyWatcher, error) {
	return s.watch(ctx, s.calendars, watchOpts{})
}

// CalendarSource looks a calendar up by name for compile.Compile.
func (s *Store) CalendarSource(ctx context.Context) compile.CalendarSource {
	return func(name string) (*calendar.Calendar, error) {
		e, err := s.GetCalendar(ctx, name)
		if err != nil {
			return nil, err
		}
		return e.Calendar, nil
	}
}

// readAll calls fn with the current value of every key of a bucket that
// matches filter (">" for all).
func (s *Store) readAll(ctx context.Context, kv jetstream.KeyValue, filter string, fn func(jetstream.KeyValueEntry)) error {
	w, err := s.watch(ctx, kv, watchOpts{filter: filter, ignoreDeletes: true})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("watch closed")
			}
			if e == nil {
				return nil
			}
			fn(e)
		}
	}
}

// firstFew renders ids for a message, at most ten of them, so that an
// error reply stays small however many there are.
func firstFew(ids []string) string {
	const most = 10
	if len(ids) <= most {
		return fmt.Sprint(ids)
	}
	return fmt.Sprintf("%v and %d more", ids[:most], len(ids)-most)
}
