package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestBenchRefusesABadContention: --contend and the co-tenant's own
// --burn take a number of cores; anything else exits 2 naming the flag,
// before a server is started.
func TestBenchRefusesABadContention(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--contend", "-1"}, "contend -1: must be a number of cores"},
		{[]string{"--contend", "NaN"}, "contend NaN"},
		{[]string{"--contend", "two"}, `invalid --contend "two": want a number`},
		{[]string{"--burn", "0"}, "--burn 0: must be a number of cores above 0"},
	} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), append([]string{"bench"}, tc.args...), &out, &errOut)
		if code != ExitInvalid || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("bench %q: exit %d, stderr %q: want %d and %q", tc.args, code, errOut.String(), ExitInvalid, tc.want)
		}
	}
}
