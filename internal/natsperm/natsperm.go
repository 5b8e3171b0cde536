// Package natsperm writes the nats-server permission blocks of jetsched's
// roles: a worker pinned to its workflows, the scheduler, and the operator.
// natsconf/accounts.conf holds one block of each, printed by these
// functions (its test checks that they stay the same), and `scheduler
// natsconf` prints more of them for an operator to paste.
//
// What each role may do, and why, is in docs/operations.md ("Least
// privilege"). In short: a worker may create only its own consumers, each
// with the filtered create subject ($JS.API.CONSUMER.CREATE.<stream>.
// <name>.<filter>, whose filter token the server checks against the
// consumer's config) so that it can never widen its filter, may pull and
// ack only on those consumers, and may report and dead-letter only on its
// workflows' subjects; it reads replies on an inbox prefix of its own. The
// scheduler may create, update and read its streams and buckets but delete
// or purge none, and never SCHED_AUDIT; the audit head bucket it may
// create and write keys in, never update, delete or purge; it may read
// (only) the KV buckets named as timers' condition buckets. The operator
// is in an account of its own (accounts.go) and reaches the admin API and
// the reads of `scheduler audit verify` only through the services it
// imports. Errors about the input are *InputError.
//
// What subject permissions cannot express: a worker's consumer may be a
// push consumer with any literal deliver subject of the account (the
// create subject carries no deliver subject, and nats-server does not
// check it against the creator's rights). The admin API therefore acts
// only on requests, never on a JetStream delivery (internal/admin), and the
// scheduler's other subscriptions are wildcards, which a push consumer
// does not deliver to (docs/operations.md, "Least privilege").
package natsperm

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/nats-io/nkeys"

	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// ErrInvalid matches every InputError (errors.Is).
var ErrInvalid = errors.New("natsperm: invalid")

// InputError is a bad input. Field is what was wrong, named as the
// `scheduler natsconf` flag without its dashes: "worker", "user",
// "workflows", "condition-buckets", "password", "nkey", or "credential"
// (neither or both of a password and an nkey).
type InputError struct {
	Field, Reason string
}

func (e *InputError) Error() string { return "natsperm: " + e.Field + ": " + e.Reason }

// Is makes an InputError match ErrInvalid.
func (e *InputError) Is(target error) bool { return target == ErrInvalid }

func inputErr(field, format string, args ...any) error {
	return &InputError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Credential is how a user authenticates: a password or an nkey.
type Credential struct {
	// Password is the user's password (plain or a bcrypt hash).
	Password string
	// NKey is the user's public nkey ("U..."), or the path of a seed file
	// whose public key is used.
	NKey string
}

// User is one entry of an account's users list.
type User struct {
	// Comment is printed above the entry, one line each.
	Comment []string
	// Name is the user name (empty for an nkey user).
	Name string
	// Password or NKey authenticate the user.
	Password, NKey string
	// PublishAllow, PublishDeny and SubscribeAllow are the permissions.
	PublishAllow, PublishDeny, SubscribeAllow Rights
	// AllowResponses lets the user reply to requests it received on any
	// subject (one response each).
	AllowResponses bool
}

// Rights are subjects in groups (a consumer's rights, a stream's): each
// group starts on a new line when rendered.
type Rights [][]string

// Subjects are all the subjects, in order.
func (r Rights) Subjects() []string { return slices.Concat(r...) }

// Worker describes a worker service.
type Worker struct {
	// Name is the worker's name, worker.Config.Name: its consumers are
	// "<name>-fire-<workflow>" (and "<name>-wakeup-<workflow>"). Required.
	Name string
	// User is the NATS user name. Default "<name>-worker".
	User string
	// Workflows are the workflows it handles. At least one.
	Workflows []string
	// Wakeups adds consumers on the wakeup stream for the same workflows.
	Wakeups bool
	// Layout names the streams and subjects. Zero value: the defaults.
	Layout kvstore.Layout
	// Credential authenticates the user.
	Credential Credential
}

// InboxPrefix is the inbox prefix of a worker user: its replies (pulled
// messages included) arrive there, and no other user may subscribe to it.
// Connect with nats.CustomInboxPrefix(InboxPrefix(user)).
func InboxPrefix(user string) string { return "_INBOX_" + user }

// WorkerUser is the permission block of a worker pinned to its workflows.
func WorkerUser(w Worker) (User, error) {
	if err := validToken("worker", w.Name); err != nil {
		return User{}, err
	}
	if w.User == "" {
		w.User = w.Name + "-worker"
	}
	if err := validToken("user", w.User); err != nil {
		return User{}, err
	}
	if len(w.Workflows) == 0 {
		return User{}, inputErr("workflows", "at least one workflow is needed (a worker is pinned to its workflows)")
	}
	for i, wf := range w.Workflows {
		if err := kvstore.ValidateWorkflow(wf); err != nil {
			return User{}, inputErr("workflows", "%v", err)
		}
		if slices.Contains(w.Workflows[:i], wf) {
			return User{}, inputErr("workflows", "%q is given twice", wf)
		}
	}
	u, err := credential(w.User, w.Credential)
	if err != nil {
		return User{}, err
	}
	l := w.Layout.WithDefaults()
	inbox := InboxPrefix(w.User)
	kinds := "fires"
	if w.Wakeups {
		kinds = "fires and wakeups"
	}
	u.Comment = wrap(fmt.Sprintf("Worker %q, %s of workflows %s: only its own consumers, created with "+
		"their filter in the subject (never the DURABLE form), pulls and acks on them, completion reports "+
		"and dead letters of its workflows. It connects with the inbox prefix %s "+
		"(nats.CustomInboxPrefix, --inbox-prefix), which only it may read.",
		w.Name, kinds, strings.Join(w.Workflows, ", "), inbox))
	subscribe := []string{inbox + ".>"}
	for _, wf := range w.Workflows {
		// The consumer of the per-schedule subjects, and for one release
		// the one of the workflow-only form older schedulers publish on.
		u.PublishAllow = append(u.PublishAllow, consumerRights(l.FiresStream, w.Name+"-fire-"+wf, l.WorkflowFires(wf)),
			consumerRights(l.FiresStream, w.Name+"-fire-"+wf+"-legacy", l.LegacyFireSubject(wf)))
		if w.Wakeups {
			u.PublishAllow = append(u.PublishAllow, consumerRights(l.WakeupsStream, w.Name+"-wakeup-"+wf, l.WakeupSubject(wf)))
		}
		// Its reports, and its dead letters: sched.event.dead_letter.<wf>.>
		// (wf is one token, so EventSubject leaves it as it is).
		u.PublishAllow = append(u.PublishAllow, []string{l.DoneSubject(wf, ">"), l.EventSubject(kvstore.EventDeadLetter, wf) + ".>"})
		subscribe = append(subscribe, l.CancelSubject(wf, ">"))
	}
	u.SubscribeAllow = Rights{subscribe}
	return u, nil
}

// consumerRights are a worker's rights on one of its consumers: create it
// with exactly this filter, read its info, pull, and ack (the v1 and the
// v2 ack subject, for servers with the js_ack_fc_v2 feature flag).
func consumerRights(stream, consumer, filter string) []string {
	return []string{
		"$JS.API.CONSUMER.CREATE." + stream + "." + consumer + "." + filter,
		"$JS.API.CONSUMER.INFO." + stream + "." + consumer,
		"$JS.API.CONSUMER.MSG.NEXT." + stream + "." + consumer,
		"$JS.ACK." + stream + "." + consumer + ".>",
		"$JS.ACK.*.*." + stream + "." + consumer + ".>",
	}
}

// SchedulerUser is the permission block of the scheduler processes; user
// is its name (default "scheduler"). conditionBuckets are the KV buckets
// of timers' condition keys (wakeup --condition-key BUCKET/KEY), which the
// scheduler reads when a timer falls due and checks exist at
// registration: read-only rights (stream info and message gets) on each.
func SchedulerUser(l kvstore.Layout, user string, c Credential, conditionBuckets ...string) (User, error) {
	u, err := roleUser(cmp.Or(user, "scheduler"), c)
	if err != nil {
		return User{}, err
	}
	for i, b := range conditionBuckets {
		if err := validBucket(b); err != nil {
			return User{}, err
		}
		if slices.Contains(conditionBuckets[:i], b) {
			return User{}, inputErr("condition-buckets", "%q is given twice", b)
		}
	}
	l = l.WithDefaults()
	head := "KV_" + audit.HeadBucket
	u.Comment = wrap("The scheduler processes: on each of their streams and buckets only create, update, " +
		"read, their consumers, acks and flow control (no delete, no purge; single messages of " + l.EventsStream +
		" only, the dead letters an operator purges); their subjects; the admin " +
		"API (a micro service) and its replies; which account they are in ($SYS.REQ.USER.INFO, so that " +
		"the API trusts only the requester info of other accounts). They can never delete, purge or " +
		"erase entries of the audit trail " + audit.Stream + ", nor update, delete or purge the bucket " +
		"anchoring its head (" + audit.HeadBucket + ").")
	u.PublishAllow = Rights{{"$JS.API.INFO", "$SYS.REQ.USER.INFO"}}
	for _, s := range append(Streams(l), audit.Stream) {
		u.PublishAllow = append(u.PublishAllow, streamRights(s))
	}
	u.PublishAllow = append(u.PublishAllow, []string{"$JS.API.STREAM.CREATE." + head, "$JS.API.STREAM.INFO." + head, "$JS.API.STREAM.MSG.GET." + head})
	// Deleting single messages of the event stream: the admin API's
	// deadletter.purge (an operator's action, written ahead in the trail).
	u.PublishAllow = append(u.PublishAllow, []string{"$JS.API.STREAM.MSG.DELETE." + l.EventsStream})
	var kv []string
	for _, b := range append(l.Buckets(), audit.HeadBucket) {
		kv = append(kv, "$KV."+b+".>")
	}
	p := l.Prefix
	// Completion reports too: the scheduler writes the ledger itself, so
	// this grants nothing new, and `scheduler demo` runs its demo worker on
	// the scheduler's connection. "_R_.>" are the replies to requests that
	// crossed a service import (the operators' API calls): allow_responses
	// alone is not enough, because a request the connection receives on
	// two subscriptions (an endpoint and the unknown-verb catch-all) uses
	// up its one allowed response before the endpoint answers.
	u.PublishAllow = append(u.PublishAllow, kv,
		[]string{p + ".fire.>", p + ".wakeup.>", p + ".event.>", p + ".cancel.>", l.DoneSubjects(), audit.Subject + ".>", "_INBOX.>", "_R_.>"})
	for _, b := range conditionBuckets {
		u.PublishAllow = append(u.PublishAllow, conditionRights(b))
	}
	u.PublishDeny = Rights{{
		"$JS.API.STREAM.DELETE." + audit.Stream, "$JS.API.STREAM.PURGE." + audit.Stream,
		"$JS.API.STREAM.MSG.DELETE." + audit.Stream,
	}, {
		"$JS.API.STREAM.UPDATE." + head, "$JS.API.STREAM.DELETE." + head, "$JS.API.STREAM.PURGE." + head,
		"$JS.API.STREAM.MSG.DELETE." + head,
	}}
	// Cancel requests too, which it publishes itself: the demo worker on
	// its connection honours them (overlap cancel_other). The server's
	// max-deliveries advisories of the fire and wakeup streams: a fire
	// no consumer acked in max_deliver deliveries is reported
	// (undeliverable events).
	u.SubscribeAllow = Rights{{"_INBOX.>", l.DoneSubjects(), p + ".cancel.>", p + ".api.>", "$SRV.>"},
		{MaxDeliveriesAdvisory(l.FiresStream), MaxDeliveriesAdvisory(l.WakeupsStream)}}
	u.AllowResponses = true
	return u, nil
}

// MaxDeliveriesAdvisory is the subject of the server's advisories of a
// stream's messages delivered max_deliver times without an ack, for any
// of its consumers.
func MaxDeliveriesAdvisory(stream string) string {
	return "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + stream + ".*"
}

// conditionRights are the scheduler's rights on a condition bucket: read
// only (is it there, and what does a key hold), directly or through the
// API.
func conditionRights(bucket string) []string {
	s := "KV_" + bucket
	return []string{"$JS.API.STREAM.INFO." + s, "$JS.API.STREAM.MSG.GET." + s, "$JS.API.DIRECT.GET." + s + ".>"}
}

// validBucket checks a KV bucket name: letters, digits, '-' and '_'.
func validBucket(b string) error {
	if b == "" || strings.IndexFunc(b, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) >= 0 {
		return inputErr("condition-buckets", "%q: a KV bucket name has letters, digits, '-' and '_' only", b)
	}
	return nil
}

// streamRights are the scheduler's rights on one of its streams: create,
// update and inspect it; read messages (direct or through the API); any
// consumer operation on it and pulls (KV watches, ordered readers); acks
// and flow control of its consumers (v1 and v2 subject forms).
func streamRights(s string) []string {
	return []string{
		"$JS.API.STREAM.CREATE." + s, "$JS.API.STREAM.UPDATE." + s, "$JS.API.STREAM.INFO." + s,
		"$JS.API.STREAM.MSG.GET." + s, "$JS.API.DIRECT.GET." + s, "$JS.API.DIRECT.GET." + s + ".>",
		"$JS.API.CONSUMER.*." + s + ".>", "$JS.API.CONSUMER.MSG.NEXT." + s + ".*",
		"$JS.ACK." + s + ".>", "$JS.FC." + s + ".>", "$JS.ACK.*.*." + s + ".>", "$JS.FC.*.*." + s + ".>",
	}
}

// OperatorUser is the permission block of an operator, a user of the
// operators' account (OperatorAccount): the admin API, service discovery,
// and reading (not writing) the audit trail, its anchored heads and the
// dispatch streams for `scheduler audit verify`, and subscribing to the
// writes of the buckets --watch follows (WatchedBuckets), all through what
// the account imports (OperatorServices).
func OperatorUser(l kvstore.Layout, user string, c Credential) (User, error) {
	u, err := roleUser(cmp.Or(user, "operator"), c)
	if err != nil {
		return User{}, err
	}
	l = l.WithDefaults()
	u.Comment = wrap("An operator, in the account " + OperatorAccount + ": the admin API and service discovery " +
		"(`scheduler` CLI over the API, `nats micro ls`, `nats req " + l.Prefix + ".api...`), and reading the " +
		"audit trail for `scheduler audit verify`, and following the writes of the specs, state and wakeups " +
		"buckets (`--watch`), through what " + OperatorAccount + " imports; " +
		"nothing else. The scheduler records this user as the actor of its API requests.")
	// $JS.API.INFO answers "JetStream not enabled" in an account without
	// it: how the CLI learns to read under APIPrefix.
	api, reads, feeds := []string(nil), []string{"$JS.API.INFO"}, []string(nil)
	for _, s := range OperatorServices(l) {
		switch {
		case s.Feed:
			feeds = append(feeds, s.Import())
		case strings.HasPrefix(s.Import(), APIPrefix+"."):
			reads = append(reads, s.Import())
		default:
			api = append(api, s.Import())
		}
	}
	u.PublishAllow = Rights{api, reads}
	u.SubscribeAllow = Rights{{"_INBOX.>"}, feeds}
	return u, nil
}

// roleUser starts the User of a role.
func roleUser(name string, c Credential) (User, error) {
	if err := validToken("user", name); err != nil {
		return User{}, err
	}
	return credential(name, c)
}

// credential starts a User named name with c, exactly one of a password or
// an nkey.
func credential(name string, c Credential) (User, error) {
	switch {
	case c.Password != "" && c.NKey != "":
		return User{}, inputErr("credential", "give a password or an nkey, not both")
	case c.Password != "":
		if strings.ContainsFunc(c.Password, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return User{}, inputErr("password", "control characters are not allowed")
		}
		return User{Name: name, Password: c.Password}, nil
	case c.NKey != "":
		pub, err := publicNKey(c.NKey)
		if err != nil {
			return User{}, err
		}
		return User{NKey: pub}, nil
	}
	return User{}, inputErr("credential", "a password or an nkey is needed")
}

// publicNKey is key if it is a public user nkey, else the public key of
// the seed in the file named key.
func publicNKey(key string) (string, error) {
	if nkeys.IsValidPublicUserKey(key) {
		return key, nil
	}
	data, err := os.ReadFile(key)
	if err != nil {
		return "", inputErr("nkey", "%q is neither a public user key (U...) nor a readable seed file: %v", key, err)
	}
	kp, err := nkeys.ParseDecoratedNKey(data)
	if err != nil {
		return "", inputErr("nkey", "seed file %q: %v", key, err)
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return "", inputErr("nkey", "seed file %q does not hold a user seed (SU...)", key)
	}
	return pub, nil
}

func validToken(field, s string) error {
	if err := kvstore.ValidateID(s); err != nil {
		return inputErr(field, "%v", err)
	}
	return nil
}

// Render writes u as an entry of an account's `users: [...]` list, each
// line starting with indent.
func (u User) Render(indent string) string {
	var b strings.Builder
	line := func(depth int, s string) {
		b.WriteString(indent + strings.Repeat("  ", depth) + s + "\n")
	}
	for _, c := range u.Comment {
		line(0, "# "+c)
	}
	line(0, "{")
	if u.NKey != "" {
		line(1, "nkey: "+u.NKey)
	} else {
		line(1, "user: "+quote(u.Name)+", password: "+quote(u.Password))
	}
	line(1, "permissions: {")
	line(2, "publish: {")
	list(line, 3, "allow", u.PublishAllow)
	if len(u.PublishDeny) > 0 {
		list(line, 3, "deny", u.PublishDeny)
	}
	line(2, "}")
	line(2, "subscribe: {")
	list(line, 3, "allow", u.SubscribeAllow)
	line(2, "}")
	if u.AllowResponses {
		line(2, "allow_responses: true")
	}
	line(1, "}")
	line(0, "}")
	return b.String()
}

// list writes `name: [...]`: each group of quoted subjects on lines of
// its own, filled up to 100 bytes.
func list(line func(int, string), depth int, name string, r Rights) {
	line(depth, name+": [")
	n, last := 0, len(r.Subjects())
	for _, group := range r {
		items := make([]string, len(group))
		for i, s := range group {
			n++
			items[i] = quote(s)
			if n < last {
				items[i] += ","
			}
		}
		for _, l := range fill(items, 100) {
			line(depth+1, l)
		}
	}
	line(depth, "]")
}

// wrap breaks text into comment lines of at most 72 bytes.
func wrap(text string) []string { return fill(strings.Fields(text), 72) }

// fill joins words with spaces into lines of at most width bytes (a longer
// word gets a line of its own).
func fill(words []string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range words {
		if cur != "" && len(cur)+1+len(w) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// quote writes s as a nats-server config string.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// Streams names every stream of layout l, the key-value buckets' backing
// streams ("KV_<bucket>") included: what a scheduler creates (jsstore.Setup),
// updates and reads, and so what its user may manage. The audit trail's
// stream (shared by every layout) is not among them.
func Streams(l kvstore.Layout) []string {
	l = l.WithDefaults()
	streams := make([]string, 0, 9)
	for _, b := range l.Buckets() {
		streams = append(streams, "KV_"+b)
	}
	return append(streams, l.FiresStream, l.WakeupsStream, l.EventsStream)
}
