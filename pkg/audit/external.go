package audit

import "time"

// External is the detail of an external entry: changes to specs,
// calendars and timers that were written straight into their buckets (not
// through the admin API), as the scheduler holding the audit lease saw them
// in its watch, and how far that watch has looked.
type External struct {
	Changes []Change `json:"changes,omitempty"`
	// Watermarks say, per bucket, the last revision examined: every change
	// up to it came through the API or is recorded in this entry or an
	// earlier one.
	Watermarks []Watermark `json:"watermarks"`
}

// Change is one external write.
type Change struct {
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
	Rev    uint64 `json:"rev"`
	// Op is "put", "delete" or "purge".
	Op string `json:"op"`
	// SHA256 is the hash of the value written (hex; "" for a delete).
	SHA256 string    `json:"sha256,omitempty"`
	At     time.Time `json:"at"`
}

// Watermark is the last revision of a bucket a watch has examined, and
// when it was written.
type Watermark struct {
	Bucket string    `json:"bucket"`
	Rev    uint64    `json:"rev"`
	At     time.Time `json:"at,omitzero"`
}
