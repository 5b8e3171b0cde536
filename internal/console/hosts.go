package console

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// hostAllowList is the names the console answers to: a request under any
// other Host is refused before anything else, so that a page of another
// site whose name the attacker points at the console's address (DNS
// rebinding) never reads a page, a token, or acts.
type hostAllowList struct {
	hosts []allowedHost
}

// allowedHost is a host name or address, lower case, without brackets and
// without a trailing dot, and its port ("": any port).
type allowedHost struct {
	host, port string
}

// newHostAllowList allows the loopback names (always, with any port), the
// host of a specific listen address, the machine's own names and
// addresses when listen binds every address (0.0.0.0, ::), and the
// entries of --allowed-hosts.
func newHostAllowList(listen string, extra []string) (*hostAllowList, error) {
	l := &hostAllowList{}
	for _, e := range extra {
		h, err := parseAllowedHost(e)
		if err != nil {
			return nil, err
		}
		l.hosts = append(l.hosts, h)
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return l, nil
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		l.hosts = append(l.hosts, machineNames()...)
	} else if h, ok := splitHost(host); ok {
		l.hosts = append(l.hosts, allowedHost{host: h})
	}
	return l, nil
}

// machineNames are the machine's host name and interface addresses: the
// names a console listening on every address answers to by itself.
func machineNames() []allowedHost {
	var out []allowedHost
	if name, err := os.Hostname(); err == nil && name != "" {
		out = append(out, allowedHost{host: strings.ToLower(name)})
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out = append(out, allowedHost{host: n.IP.String()})
		}
	}
	return out
}

// parseAllowedHost reads an --allowed-hosts entry: a host name or an
// address, with an optional :PORT.
func parseAllowedHost(entry string) (allowedHost, error) {
	bad := func(why string) (allowedHost, error) {
		return allowedHost{}, fmt.Errorf("console: --allowed-hosts %q: %s; want a host name or address with an optional :PORT, such as console.example.com, 10.0.0.5 or console.example.com:8443", entry, why)
	}
	host, port, ok := splitHostPort(entry)
	if !ok {
		return bad("not a host[:port]")
	}
	if host == "" {
		return bad("no host")
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return bad("the port is not a number from 1 to 65535")
		}
	}
	if net.ParseIP(host) == nil && !validHostName(host) {
		return bad("not a host name (letters, digits, '-' and '_' between dots; no scheme, path or wildcard)")
	}
	return allowedHost{host: host, port: port}, nil
}

// validHostName reports whether h is a DNS name of letters, digits, '-'
// and '_'.
func validHostName(h string) bool {
	if len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// splitHostPort splits a Host header or an entry into its host (lower
// case, without brackets or a trailing dot) and port ("" when absent).
// It refuses what is neither "host", "host:port", "[v6]" nor "[v6]:port"
// (a bare IPv6 address is taken whole).
func splitHostPort(s string) (host, port string, ok bool) {
	if s == "" {
		return "", "", false
	}
	if net.ParseIP(s) != nil { // a bare IPv6 (or IPv4) address
		return strings.ToLower(s), "", true
	}
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", false
		}
		rest := s[end+1:]
		if rest != "" {
			var found bool
			if rest, found = strings.CutPrefix(rest, ":"); !found || rest == "" {
				return "", "", false
			}
		}
		if ip := net.ParseIP(s[1:end]); ip == nil || ip.To4() != nil {
			return "", "", false
		}
		return strings.ToLower(s[1:end]), rest, validPort(rest)
	}
	host, port, found := strings.Cut(s, ":")
	if found && port == "" || strings.Contains(port, ":") {
		return "", "", false
	}
	h, ok := splitHost(host)
	return h, port, ok && validPort(port)
}

// validPort reports whether p is "" or only digits.
func validPort(p string) bool {
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(p) <= 5
}

// splitHost normalises a host without a port: lower case, no trailing dot,
// no brackets.
func splitHost(h string) (string, bool) {
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")), ".")
	return h, h != ""
}

// allows reports whether hostport (a Host header, or the host of an
// Origin) is one of the console's names.
func (l *hostAllowList) allows(hostport string) bool {
	host, port, ok := splitHostPort(hostport)
	if !ok {
		return false
	}
	if host == "localhost" {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, h := range l.hosts {
		if h.host == host && (h.port == "" || h.port == port) {
			return true
		}
	}
	return false
}

// guard refuses, with 421 and a plain explanation and nothing else, a
// request under a Host that is not one of the console's names, and an
// unsafe request (POST) whose Origin is not one of them.
func (l *hostAllowList) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !l.allows(r.Host) {
			http.Error(w, fmt.Sprintf("console: this console does not answer to the host name %q (it answers to localhost, 127.0.0.1, [::1] "+
				"and the names given with --allowed-hosts; if this name is the console's, add it there). This guards against DNS rebinding.", r.Host),
				http.StatusMisdirectedRequest)
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if origin := r.Header.Get("Origin"); origin != "" && !l.allowsOrigin(origin) {
				http.Error(w, fmt.Sprintf("console: a request from the origin %q is refused: it is not one of the console's names", origin), http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// allowsOrigin reports whether an Origin header names one of the
// console's names ("null" never does).
func (l *hostAllowList) allowsOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return false
	}
	return l.allows(u.Host)
}
