package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/jetsched/jetsched/internal/redact"
)

// redacted replaces a secret in config print's output.
const redacted = redact.Redacted

func (a *app) configCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "The settings of scheduler run: config file, JETSCHED_ variables, flags"}
	var (
		f      daemonFlags
		format string
	)
	print := &cobra.Command{
		Use:   "print [--config FILE] [--format yaml|json] [run's flags...]",
		Short: "Print the configuration scheduler run would use: every key, its value and where it came from",
		Long: `Print the effective configuration of scheduler run, given the same
--config file, JETSCHED_ variables and flags: every key (flag name) with its
value and where it came from (flag, file, env or default).

The YAML output is a config file run --config accepts back. Keys at their
default, and keys holding a secret (--password, a password or token in
--nats-url), are commented out, so that loading it changes nothing: a key
in a file counts as given explicitly (an explicit --listen or --data-dir
overrides --server-config's). Secrets are printed as <redacted>: --password,
a password, token or query in --nats-url (with or without nats://), and an
nkey seed or PEM block (credentials, a key) given where a path belongs;
paths to secret files (--creds, --nkey, --tls-key, --audit-key-file,
token:FILE) are not secrets and are printed. --format json prints an object of
{"value", "source", "env", "redacted"} per key, for tools.

Values are parsed as run parses them; rules between flags and the files
they name are checked by run when it starts. See docs/configuration.md.`,
		Example: `  scheduler config print --config /etc/jetsched/jetsched.yaml
  JETSCHED_LEASE_TTL=5s scheduler config print --format json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "yaml" && format != "json" {
				return invalidf("--format %q: want yaml or json", format)
			}
			st, err := a.configure(cmd, f.configFile)
			if err != nil {
				return err
			}
			entries := a.configEntries(cmd.Flags(), st)
			if format == "json" {
				return writeConfigJSON(a.stdout, entries)
			}
			return a.writeConfigYAML(a.stdout, entries, st)
		},
	}
	f.register(print, "./jetsched-data", "")
	print.Flags().StringVar(&format, "format", "yaml", "output format: yaml (a config file) or json")
	cmd.AddCommand(print, a.configValidate())
	return cmd
}

// configEntry is one key of config print.
type configEntry struct {
	key, source, env string
	value            any // bool, int64, string or []string
	secret           bool
}

// configEntries are the configurable flags of run with their values in fs,
// in name order, secrets redacted.
func (a *app) configEntries(fs *pflag.FlagSet, st *settings) []configEntry {
	var out []configEntry
	a.runFlagSet().VisitAll(func(ref *pflag.Flag) {
		if !configurable(ref) {
			return
		}
		f := fs.Lookup(ref.Name)
		e := configEntry{key: f.Name, source: st.source(f.Name), env: envName(f.Name)}
		e.value, e.secret = flagValue(f)
		out = append(out, e)
	})
	return out
}

// flagValue is f's value as YAML types it, redacted when it is a secret.
func flagValue(f *pflag.Flag) (any, bool) {
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		return append([]string{}, sv.GetSlice()...), false
	}
	s := f.Value.String()
	switch f.Value.Type() {
	case "bool":
		return s == "true", false
	case "int", "int64", "int32":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, false
		}
	}
	if shown, secret := redactFlag(f.Name, s); secret {
		return shown, true
	}
	return s, false
}

// redactFlag hides the secrets in a flag's value: all of --password; in
// --nats-url's URLs a password, a token and a query (redact.URL);
// and any value that holds key material rather than a path to it (an nkey
// seed, a PEM block such as credentials or a private key). Paths to secret
// files are not secrets.
func redactFlag(name, v string) (string, bool) {
	switch {
	case v == "":
		return v, false
	case name == "password" || keyMaterial(v):
		return redacted, true
	case name == "nats-url":
		shown := redact.URL(v)
		return shown, shown != v
	}
	return v, false
}

// seedPattern matches an nkey seed: 'S', the key type, 56 more base32
// characters.
var seedPattern = regexp.MustCompile(`S[UAONCXP][A-Z2-7]{56}`)

// keyMaterial reports whether v holds a secret key itself: an nkey seed,
// or a PEM block (a credentials file's JWT and seed, a TLS key).
func keyMaterial(v string) bool {
	return strings.Contains(v, "-----BEGIN") || seedPattern.MatchString(v)
}

// writeConfigYAML prints entries as a config file: one "key: value" line
// each, ending in a comment saying where it came from; keys at their
// default and secrets commented out.
func (a *app) writeConfigYAML(w io.Writer, entries []configEntry, st *settings) error {
	var b strings.Builder
	b.WriteString("# scheduler run: effective configuration (scheduler config print; docs/configuration.md).\n")
	if st.file != "" {
		fmt.Fprintf(&b, "# config file: %s\n", st.file)
	}
	b.WriteString("# Each key ends with where its value came from: flag, file, env NAME or default.\n")
	b.WriteString("# Keys at their default and secrets are commented out: loading this file with\n")
	b.WriteString("# --config changes nothing.\n")
	for _, note := range a.envNotes() {
		fmt.Fprintf(&b, "# %s\n", note)
	}
	for _, e := range entries {
		line, err := yamlLine(e.key, e.value)
		if err != nil {
			return err
		}
		source := e.source
		if source == fromEnv {
			source += " " + e.env
		}
		if e.secret {
			source += ", a secret: not printed"
		}
		if e.source == fromDefault || e.secret {
			line = "# " + line
		}
		fmt.Fprintf(&b, "%s  # %s\n", line, source)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// envNotes name the variables that are not keys but change what run does.
func (a *app) envNotes() []string {
	var notes []string
	if a.getenv("JETSCHED_AUDIT_KEY") != "" {
		notes = append(notes, "JETSCHED_AUDIT_KEY is set: the audit trail's key when audit-key-file is empty (value not printed).")
	}
	if a.getenv("NATS_URL") != "" {
		notes = append(notes, "NATS_URL is set: the default of nats-url.")
	}
	if v := a.getenv("GOGC"); v != "" {
		notes = append(notes, fmt.Sprintf("GOGC=%s is set: it wins over gc-percent.", v))
	}
	if v := a.getenv("GOMEMLIMIT"); v != "" {
		notes = append(notes, fmt.Sprintf("GOMEMLIMIT=%s is set: it wins over memory-limit.", v))
	}
	return notes
}

// yamlLine is "key: value" in YAML, a list in flow style.
func yamlLine(key string, v any) (string, error) {
	var val yaml.Node
	if err := val.Encode(v); err != nil {
		return "", fmt.Errorf("config print: %s: %w", key, err)
	}
	switch {
	case val.Kind == yaml.SequenceNode:
		val.Style = yaml.FlowStyle
	case strings.ContainsAny(val.Value, "\r\n"):
		val.Style = yaml.DoubleQuotedStyle // one line, so that it can be commented out
	}
	doc := yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: key}, &val}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(&doc); err != nil {
		return "", fmt.Errorf("config print: %s: %w", key, err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("config print: %s: %w", key, err)
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// jsonEntry is a key of config print --format json.
type jsonEntry struct {
	Value    any    `json:"value"`
	Source   string `json:"source"`
	Env      string `json:"env"`
	Redacted bool   `json:"redacted,omitempty"`
}

func writeConfigJSON(w io.Writer, entries []configEntry) error {
	out := make(map[string]jsonEntry, len(entries))
	for _, e := range entries {
		out[e.key] = jsonEntry{Value: e.value, Source: e.source, Env: e.env, Redacted: e.secret}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // <redacted> as written
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("config print: %w", err)
	}
	return nil
}
