package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/memlimit"
	"github.com/jetsched/jetsched/internal/redact"
)

// configValidate is `scheduler config validate [FILE]`.
func (a *app) configValidate() *cobra.Command {
	var f daemonFlags
	cmd := &cobra.Command{
		Use:   "validate [FILE] [run's flags...]",
		Short: "Check a config file, and the static schedules files it names, without starting anything",
		Long: `Check the configuration scheduler run would use (FILE, else --config or
JETSCHED_CONFIG, with the JETSCHED_ variables and the flags given here)
as run checks it at start, without connecting, listening or writing
anything: every key known and of its type, the rules between keys, the
files the keys name (--schedules files with every schedule in them,
--server-config, --audit-key-file, the console's token file). A problem
exits with status 2, naming the key, the file and line it came from and
the reason; a valid configuration prints what run would use and exits 0.

What only the NATS system can tell (that it is reachable, that the
credentials are accepted, that calendars named by static schedules
exist) is checked by run when it starts.`,
		Example: `  scheduler config validate /etc/jetsched/jetsched.yaml
  JETSCHED_CONFIG=jetsched.yaml scheduler config validate`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.MaximumNArgs(1)(cmd, args); err != nil {
				return usageError{err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if cmd.Flags().Changed("config") {
					return invalidf("give the config file as FILE or --config, not both")
				}
				if err := cmd.Flags().Set("config", args[0]); err != nil {
					return usageError{err}
				}
			}
			st, cfg, err := a.configured(cmd, &f)
			if err != nil {
				return err
			}
			if err := f.checkMemory(); err != nil {
				return st.annotate(err)
			}
			a.printValidated(a.stdout, st, cfg)
			return nil
		},
	}
	f.register(cmd, "./jetsched-data", "")
	return cmd
}

// checkMemory checks --memory-limit and --gc-headroom as run reads them,
// without applying them.
func (f *daemonFlags) checkMemory() error {
	switch strings.ToLower(f.memoryLimit) {
	case "", "auto", "off", "0":
	default:
		if _, err := memlimit.ParseSize(f.memoryLimit); err != nil {
			return usageError{fmt.Errorf("--memory-limit: %w", err)}
		}
	}
	if _, err := memlimit.ParseHeadroom(f.gcHeadroom); err != nil {
		return usageError{fmt.Errorf("--gc-headroom: %w", err)}
	}
	return nil
}

// printValidated says what run would use: where the settings came from,
// the NATS system, the layout, the static schedules and the listeners.
func (a *app) printValidated(w io.Writer, st *settings, cfg daemon.Config) {
	file := st.file
	if file == "" {
		file = "none (flags, JETSCHED_ variables and defaults)"
	}
	fmt.Fprintf(w, "config file: %s\n", file)
	if cfg.Embedded {
		server := ""
		if cfg.ServerConfig != "" {
			server = ", server config " + cfg.ServerConfig
		}
		fmt.Fprintf(w, "nats: embedded, listening on %s, data in %s%s\n", orDefault(cfg.Listen, "the server config's"), orDefault(cfg.DataDir, "the server config's"), server)
	} else {
		fmt.Fprintf(w, "nats: %s\n", redact.URL(cfg.Conn.URL))
	}
	fmt.Fprintf(w, "names: buckets %s_*, streams %s_*, subjects %s.>; %d shards, %d replica(s)\n",
		cfg.Setup.Layout.Prefix, strings.ToUpper(cfg.Setup.Layout.Prefix), cfg.Setup.Layout.Prefix, cfg.Setup.Shards, cfg.Setup.Replicas)
	for _, set := range cfg.Static {
		fmt.Fprintf(w, "static schedules: %s, %d schedule(s)\n", set.Source, len(set.Schedules))
	}
	fmt.Fprintf(w, "audit trail: %s\n", onOff(len(cfg.AuditKey) > 0))
	if cfg.Console.Listen != "" {
		fmt.Fprintf(w, "console: %s\n", cfg.Console.Listen)
	}
	if cfg.MetricsListen != "" {
		fmt.Fprintf(w, "metrics: %s\n", cfg.MetricsListen)
	}
	fmt.Fprintln(w, "valid: scheduler run would start with these settings (scheduler config print lists every key)")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
