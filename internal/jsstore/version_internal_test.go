package jsstore

import "testing"

func TestVersionCheck(t *testing.T) {
	for v, ok := range map[string]bool{
		"2.11.0": true, "2.15.3": true, "2.12.0-RC.1": true, "v2.11.1": true, "3.0.0": true,
		"2.10.22": false, "2.9.0": false, "1.99.99": false, "": false,
	} {
		if got := versionAtLeast(v, MinServerVersion); got != ok {
			t.Errorf("versionAtLeast(%q) = %v, want %v", v, got, ok)
		}
	}
}
