package cli

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/regfile"
	"github.com/jetsched/jetsched/internal/suggest"
)

// Where a setting of run came from, highest precedence first
// (docs/configuration.md).
const (
	fromFlag    = "flag"
	fromFile    = "file"
	fromEnv     = "env"
	fromDefault = "default"
)

// envPrefix starts the environment variable of every configurable flag:
// JETSCHED_LEASE_TTL is --lease-ttl.
const envPrefix = "JETSCHED_"

// configEnv names the config file when --config is not given.
const configEnv = envPrefix + "CONFIG"

// otherEnv reports the JETSCHED_ variables that are not flags: the config
// file, the audit key's value, and the fault tests' crash hook.
func otherEnv(name string) bool {
	switch name {
	case configEnv, "JETSCHED_AUDIT_KEY", "JETSCHED_CRASH_AT":
		return true
	}
	return false
}

// envName is the environment variable of a flag.
func envName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// configurable reports whether a config file and the environment may set
// f: every flag but help, --config itself, and hidden test settings
// (--clock-offset), which only the command line gives.
func configurable(f *pflag.Flag) bool {
	return !f.Hidden && f.Name != "help" && f.Name != "config"
}

// settings records where each setting of run came from.
type settings struct {
	// file is the config file read ("" none).
	file string
	// origin maps a flag name to fromFlag, fromFile or fromEnv; a flag
	// not in it has its default.
	origin map[string]string
	// where maps a flag set by the file or the environment to "FILE line
	// N" or the variable's name, for messages.
	where map[string]string
	// warnings are JETSCHED_ variables that are neither flags nor close to
	// one (a test harness's, say): logged, not refused.
	warnings []string
}

// source is where the flag's value came from.
func (s *settings) source(name string) string {
	if o, ok := s.origin[name]; ok {
		return o
	}
	return fromDefault
}

// flagRef matches a flag named in an error message.
var flagRef = regexp.MustCompile(`--([a-z0-9][a-z0-9-]*)`)

// annotate adds, to a check's error naming a flag set by the config file
// or the environment, where that value came from: "--replicas 9: must be 1
// to 5 (replicas: /etc/jetsched.yaml line 3)".
func (s *settings) annotate(err error) error {
	if err == nil || s == nil {
		return err
	}
	for _, m := range flagRef.FindAllStringSubmatch(err.Error(), -1) {
		if w, ok := s.where[m[1]]; ok {
			return usageError{fmt.Errorf("%w (%s: %s)", err, m[1], w)}
		}
	}
	return err
}

// value is one setting read from the file or the environment.
type value struct {
	flag  string
	items []string // one for a single value; a list's items
	list  bool     // given as a list (a file's sequence)
	where string   // "FILE line N" or the variable
}

// applyConfig gives fs's flags that the command line left unset their
// values from the config file (file, "" none), else from the JETSCHED_
// variables in environ. ref is a fresh flag set of run: its configurable
// flags are the keys, and every value is first set on it, so that a value
// the command line overrides is still checked. Values go through pflag's
// Set: the flags' own parsing applies and a flag so set counts as Changed
// (given explicitly), as on the command line.
func applyConfig(fs, ref *pflag.FlagSet, file string, environ []string) (*settings, error) {
	s := &settings{file: file, origin: map[string]string{}, where: map[string]string{}}
	fs.Visit(func(f *pflag.Flag) {
		if configurable(f) {
			s.origin[f.Name] = fromFlag
		}
	})
	envVals, warnings, err := readEnv(ref, environ)
	if err != nil {
		return nil, err
	}
	s.warnings = warnings
	var fileVals []value
	if file != "" {
		if fileVals, err = readConfigFile(ref, file); err != nil {
			return nil, err
		}
	}
	// Check every value on ref, environment first, then apply the winners.
	for _, layer := range [][]value{envVals, fileVals} {
		for _, v := range layer {
			if err := setFlag(ref, v); err != nil {
				return nil, err
			}
		}
	}
	// The file's values first: a flag set already (by the command line or
	// the file) keeps its value.
	for _, layer := range []struct {
		origin string
		vals   []value
	}{{fromFile, fileVals}, {fromEnv, envVals}} {
		for _, v := range layer.vals {
			if _, set := s.origin[v.flag]; set {
				continue
			}
			if err := setFlag(fs, v); err != nil {
				return nil, err
			}
			s.origin[v.flag], s.where[v.flag] = layer.origin, v.where
		}
	}
	return s, nil
}

// setFlag sets v on fs through pflag's Set, item by item for a list (the
// first replaces the default, the next ones append).
func setFlag(fs *pflag.FlagSet, v value) error {
	f := fs.Lookup(v.flag)
	if f == nil {
		return nil // a flag of run the command does not have
	}
	sv, isList := f.Value.(pflag.SliceValue)
	if isList && len(v.items) == 0 {
		if err := sv.Replace(nil); err != nil {
			return usageError{fmt.Errorf("%s: %s: %w", v.where, v.flag, err)}
		}
		f.Changed = true
		return nil
	}
	if !isList && v.list {
		return invalidf("%s: %s: want a single %s, not a list", v.where, v.flag, f.Value.Type())
	}
	for _, item := range v.items {
		if err := fs.Set(v.flag, item); err != nil {
			if iv := (*pflag.InvalidValueError)(nil); errors.As(err, &iv) {
				err = fmt.Errorf("invalid %s %q: %w", v.flag, item, valueReason(iv))
			}
			return usageError{fmt.Errorf("%s: %w", v.where, err)}
		}
	}
	return nil
}

// readEnv reads the JETSCHED_ variables of ref's configurable flags. An
// empty one counts as unset. One that names a hidden flag, or is a letter
// or two off a flag's (a typo), is refused; any other unknown one becomes
// a warning.
func readEnv(ref *pflag.FlagSet, environ []string) ([]value, []string, error) {
	byEnv := map[string]*pflag.Flag{}
	var names []string
	ref.VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" && f.Name != "config" {
			byEnv[envName(f.Name)] = f
			if configurable(f) {
				names = append(names, envName(f.Name))
			}
		}
	})
	var vals []value
	var warnings []string
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) || otherEnv(name) || val == "" {
			continue
		}
		f, ok := byEnv[name]
		switch {
		case ok && !configurable(f):
			return nil, nil, invalidf("%s: --%s is a test setting, given only on the command line", name, f.Name)
		case !ok:
			if near := suggest.Nearest(name, names, 2); near != "" {
				return nil, nil, invalidf("%s: no such setting (did you mean %s?)", name, near)
			}
			warnings = append(warnings, fmt.Sprintf("%s is not a setting of jetsched: ignored (settings: docs/configuration.md)", name))
			continue
		}
		items := []string{val}
		if _, isList := f.Value.(pflag.SliceValue); isList {
			r, err := csv.NewReader(strings.NewReader(val)).Read()
			if err != nil {
				return nil, nil, invalidf("%s: a comma-separated list: %v", name, err)
			}
			items = r
		}
		vals = append(vals, value{flag: f.Name, items: items, where: name})
	}
	return vals, warnings, nil
}

// readConfigFile reads the YAML (or JSON) mapping of flag names to values
// in path, refusing an unknown or repeated key and a value that is neither
// a scalar nor a list of scalars.
func readConfigFile(ref *pflag.FlagSet, path string) ([]value, error) {
	b, err := regfile.Read(path, maxConfigFile)
	if err != nil {
		return nil, invalidf("--config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, invalidf("--config %s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		return nil, nil // empty, or only comments
	}
	top := resolve(doc.Content[0])
	if top.Kind != yaml.MappingNode {
		return nil, invalidf("--config %s line %d: want a mapping of settings (lease-ttl: 10s, ...)", path, top.Line)
	}
	var keys []string
	ref.VisitAll(func(f *pflag.Flag) {
		if configurable(f) {
			keys = append(keys, f.Name)
		}
	})
	seen := map[string]int{}
	var vals []value
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], resolve(top.Content[i+1])
		where := fmt.Sprintf("%s line %d", path, k.Line)
		key := k.Value
		f := ref.Lookup(key)
		switch {
		case key == "config":
			return nil, invalidf("%s: config: a config file does not name another", where)
		case f != nil && !configurable(f):
			return nil, invalidf("%s: %s: a test setting, given only on the command line (--%s)", where, key, key)
		case f == nil:
			if near := suggest.Nearest(key, keys, 3); near != "" {
				return nil, invalidf("%s: unknown key %q (did you mean %s?)", where, key, near)
			}
			return nil, invalidf("%s: unknown key %q (keys: docs/configuration.md)", where, key)
		case seen[key] != 0:
			return nil, invalidf("%s: %s given twice (first on line %d)", where, key, seen[key])
		}
		seen[key] = k.Line
		val, err := nodeValue(f.Name, v, where)
		if err != nil {
			return nil, err
		}
		vals = append(vals, val)
	}
	return vals, nil
}

// nodeValue is the value of a key: a scalar, or a list of scalars.
func nodeValue(key string, n *yaml.Node, where string) (value, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return value{}, invalidf("%s: %s: no value (write \"\" for an empty string, [] for an empty list)", where, key)
		}
		return value{flag: key, items: []string{n.Value}, where: where}, nil
	case yaml.SequenceNode:
		v := value{flag: key, list: true, where: where}
		for _, item := range n.Content {
			item = resolve(item)
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
				return value{}, invalidf("%s: %s: item %d of the list is not a single value", where, key, len(v.items)+1)
			}
			v.items = append(v.items, item.Value)
		}
		return v, nil
	}
	return value{}, invalidf("%s: %s: want a value or a list of values, not a mapping", where, key)
}

// resolve follows a YAML alias to its anchor.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// warn logs the warnings about unknown JETSCHED_ variables.
func (s *settings) warn(log *slog.Logger) {
	for _, w := range s.warnings {
		log.Warn(w)
	}
}

// configure applies the config file (--config, else JETSCHED_CONFIG) and
// the JETSCHED_ variables to the flags of cmd, a command with run's flags.
func (a *app) configure(cmd *cobra.Command, file string) (*settings, error) {
	if !cmd.Flags().Changed("config") {
		file = a.getenv(configEnv)
	}
	return applyConfig(cmd.Flags(), a.runFlagSet(), file, a.environ)
}

// configured applies the config file and variables to cmd's flags (run's,
// in f) and builds the daemon's configuration from them, as run does
// before it starts: an error names the flag and where its value came from.
func (a *app) configured(cmd *cobra.Command, f *daemonFlags) (*settings, daemon.Config, error) {
	st, err := a.configure(cmd, f.configFile)
	if err != nil {
		return nil, daemon.Config{}, err
	}
	cfg, err := a.daemonConfig(f)
	if err != nil {
		return nil, daemon.Config{}, st.annotate(err)
	}
	return st, cfg, nil
}

// runFlagSet is a fresh set of every flag of run, its persistent ones
// included, at their defaults: the keys of a config file.
func (a *app) runFlagSet() *pflag.FlagSet {
	fresh := &app{stdout: io.Discard, stderr: io.Discard, environ: a.environ}
	run, _, err := fresh.rootCommand().Find([]string{"run"})
	if err != nil {
		panic(fmt.Sprintf("cli: the root command has no run: %v", err)) // a programming error
	}
	run.InheritedFlags() // merges the persistent flags into run.Flags()
	return run.Flags()
}

// maxConfigFile caps a --config file's size: a setting per line, a few
// KiB in practice.
const maxConfigFile = 1 << 20
