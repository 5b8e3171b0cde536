package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jetsched/jetsched/internal/admin"
)

// deadLetterPageSize is how many dead letters a page of the list holds.
const deadLetterPageSize = 50

type deadLettersData struct {
	base
	Workflow string
	Letters  []admin.DeadLetter
	Total    int
	NextURL  string
	FirstURL string
}

type deadLetterData struct {
	base
	Seq     uint64
	Letter  *admin.DeadLetterDetail
	Headers []headerLine
	Body    string
	Binary  bool // the body is not UTF-8 text: shown as Go quotes it
}

// headerLine is one header value of a dead letter.
type headerLine struct{ Name, Value string }

// deadLettersPage is the list: newest first, by workflow when filtered,
// paged with the admin API's cursor.
func (s *Server) deadLettersPage(w http.ResponseWriter, r *http.Request) {
	s.renderDeadLetters(w, r, r.URL.Query().Get("workflow"), "", http.StatusOK)
}

// renderDeadLetters shows the list of workflow's dead letters (every
// workflow's for ""), with msg as the error banner when not "".
func (s *Server) renderDeadLetters(w http.ResponseWriter, r *http.Request, workflow, msg string, status int) {
	cursor := r.URL.Query().Get("cursor")
	d := deadLettersData{base: s.base(r, "Dead letters", "deadletters", ""), Workflow: workflow}
	var pg admin.Page[admin.DeadLetter]
	if err := s.api.call(r.Context(), "", "deadletter.list", admin.DeadLetterListRequest{Workflow: workflow, Cursor: cursor, Limit: deadLetterPageSize}, &pg); err != nil {
		d.Error, status = err.Error(), max(status, statusOf(err))
	}
	if msg != "" {
		d.Error = msg
	}
	d.Letters, d.Total = pg.Items, pg.Total
	link := func(cursor string) string {
		v := url.Values{}
		if workflow != "" {
			v.Set("workflow", workflow)
		}
		if cursor != "" {
			v.Set("cursor", cursor)
		}
		if len(v) == 0 {
			return "/deadletters"
		}
		return "/deadletters?" + v.Encode()
	}
	if pg.NextCursor != "" {
		d.NextURL = link(pg.NextCursor)
	}
	if cursor != "" {
		d.FirstURL = link("")
	}
	s.pages.render(w, status, "deadletters", d)
}

// deadLetterPage is one dead letter: what the list shows, every header,
// the body and the slot's ledger entry when the API finds one.
func (s *Server) deadLetterPage(w http.ResponseWriter, r *http.Request) {
	seq, err := parseSeq(r.PathValue("seq"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.renderDeadLetter(w, r, seq, "", http.StatusOK)
}

// renderDeadLetter shows the dead letter at seq, with msg as the error
// banner when not "".
func (s *Server) renderDeadLetter(w http.ResponseWriter, r *http.Request, seq uint64, msg string, status int) {
	d := deadLetterData{base: s.base(r, fmt.Sprintf("Dead letter %d", seq), "deadletters", ""), Seq: seq}
	var dl admin.DeadLetterDetail
	if err := s.api.call(r.Context(), "", "deadletter.get", admin.DeadLetterRequest{Seq: seq}, &dl); err != nil {
		d.Error, status = err.Error(), max(status, statusOf(err))
	} else {
		d.Letter = &dl
		d.Headers = headerLines(dl.Headers)
		d.Body, d.Binary = bodyText(dl.Body)
	}
	if msg != "" {
		d.Error = msg
	}
	s.pages.render(w, status, "deadletter", d)
}

// deadLetterAction retries or purges one dead letter through the admin
// API as the console user, then redirects with a done banner: to the dead
// letter after a retry, to the list after a purge.
func (s *Server) deadLetterAction(w http.ResponseWriter, r *http.Request) {
	who, ok := s.dlActor(w, r)
	if !ok {
		return
	}
	seq, err := parseSeq(r.PathValue("seq"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, actor, action := r.Context(), who, r.PathValue("action")
	req := admin.DeadLetterActionRequest{Seq: seq}
	back := "/deadletters/" + strconv.FormatUint(seq, 10)
	switch action {
	case "retry":
		var reply admin.DeadLetterRetryReply
		if err = s.api.call(ctx, actor, "deadletter.retry", req, &reply); err == nil {
			done := "dl-retried"
			if len(reply.Retried) == 1 && reply.Retried[0].Duplicate {
				done = "dl-already"
			}
			http.Redirect(w, r, back+"?done="+done, http.StatusSeeOther)
			return
		}
	case "purge":
		var reply admin.DeadLetterPurgeReply
		if err = s.api.call(ctx, actor, "deadletter.purge", req, &reply); err == nil {
			http.Redirect(w, r, deadLettersURL(r.PostFormValue("workflow"), "dl-purged"), http.StatusSeeOther)
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	s.log.WarnContext(ctx, "console: action failed", "dead_letter", seq, "action", action, "actor", actor, "err", err)
	s.renderDeadLetter(w, r, seq, action+": "+err.Error(), statusOf(err))
}

// purgeWorkflow purges every dead letter of the form's workflow, which
// the operator typed again in confirm, through the admin API (as many
// requests as it takes: each deletes at most admin.MaxDeadLetterPurge).
func (s *Server) purgeWorkflow(w http.ResponseWriter, r *http.Request) {
	who, ok := s.dlActor(w, r)
	if !ok {
		return
	}
	workflow := r.PostFormValue("workflow")
	var err error
	switch {
	case workflow == "":
		err = fieldError("workflow", errors.New("required: filter the list by a workflow first"))
	case r.PostFormValue("confirm") != workflow:
		err = fieldError("confirm", fmt.Errorf("type the workflow's name, %s, to purge all its dead letters", workflow))
	default:
		err = s.purgeAll(r, who, workflow)
	}
	if err != nil {
		s.log.WarnContext(r.Context(), "console: action failed", "workflow", workflow, "action", "purge all", "actor", who, "err", err)
		s.renderDeadLetters(w, r, workflow, "purge all: "+err.Error(), statusOf(err))
		return
	}
	http.Redirect(w, r, deadLettersURL(workflow, "dl-purged-all"), http.StatusSeeOther)
}

// dlActor bounds an action's form and names the operator acting
// (console:<user>); it answers 403 and reports false when the user may
// not act (see mayAct).
func (s *Server) dlActor(w http.ResponseWriter, r *http.Request) (string, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	who, err := s.mayAct(r)
	if err != nil {
		s.log.InfoContext(r.Context(), "console: action refused", "path", r.URL.Path, "err", err)
		http.Error(w, err.Error(), http.StatusForbidden)
		return "", false
	}
	return who.Actor(), true
}

// purgeAll asks the admin API to purge workflow's dead letters until it
// says none is left.
func (s *Server) purgeAll(r *http.Request, actor, workflow string) error {
	for {
		var reply admin.DeadLetterPurgeReply
		if err := s.api.call(r.Context(), actor, "deadletter.purge", admin.DeadLetterActionRequest{Workflow: workflow, All: true}, &reply); err != nil {
			return err
		}
		if !reply.More || len(reply.Purged) == 0 {
			return nil
		}
	}
}

// deadLettersURL is the dead letter list (of workflow, when not "") with the
// done banner.
func deadLettersURL(workflow, done string) string {
	u := "/deadletters?done=" + done
	if workflow != "" {
		u += "&workflow=" + url.QueryEscape(workflow)
	}
	return u
}

// parseSeq reads a dead letter's sequence from the URL.
func parseSeq(s string) (uint64, error) {
	seq, err := strconv.ParseUint(s, 10, 64)
	if err != nil || seq == 0 {
		return 0, fmt.Errorf("seq: %q is not a dead letter's sequence (a whole number, as the list shows)", s)
	}
	return seq, nil
}

// headerLines is every header value, by name.
func headerLines(h map[string][]string) []headerLine {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []headerLine
	for _, name := range names {
		for _, v := range h[name] {
			out = append(out, headerLine{Name: name, Value: v})
		}
	}
	return out
}

// bodyText is a body to show: JSON indented, other text as it is, bytes
// that are not UTF-8 quoted (binary true).
func bodyText(body []byte) (string, bool) {
	if !utf8.Valid(body) {
		return strconv.Quote(string(body)), true
	}
	var buf bytes.Buffer
	if json.Valid(body) && json.Indent(&buf, body, "", "  ") == nil {
		return buf.String(), false
	}
	return strings.TrimRight(string(body), "\n"), false
}
