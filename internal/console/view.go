package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages holds one parsed template set per page, each the layout plus the
// page's own file.
type pages struct {
	sets map[string]*template.Template
}

func newPages() (*pages, error) {
	p := &pages{sets: map[string]*template.Template{}}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs()).ParseFS(templateFS, "templates/layout.html", name)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		p.sets[base] = t
	}
	return p, nil
}

// render writes page name with data, buffered so that a template error is
// a clean 500 instead of half a page.
func (p *pages) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := p.sets[name].Execute(&buf, data); err != nil {
		http.Error(w, "console: render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func funcs() template.FuncMap {
	return template.FuncMap{
		"when":    when,
		"whenDay": whenDay,
		"rel":     rel,
		"dur":     durText,
		"pct":     pct,
		"add":     func(a, b int) int { return a + b },
	}
}

// when shows t in loc, with UTC on hover and machine-readable in
// datetime: <time datetime="…Z" title="… UTC">2026-12-01 02:00:00 CET</time>.
func when(t any, loc *time.Location) template.HTML {
	tt, ok := asTime(t)
	if !ok {
		return "—"
	}
	if loc == nil {
		loc = time.UTC
	}
	u := tt.UTC()
	return template.HTML(fmt.Sprintf(`<time datetime="%s" title="%s">%s</time>`,
		u.Format(time.RFC3339Nano), u.Format("2006-01-02 15:04:05.000 UTC"),
		template.HTMLEscapeString(tt.In(loc).Format("2006-01-02 15:04:05 MST"))))
}

// whenDay is when for a date: the day in loc.
func whenDay(t any, loc *time.Location) template.HTML {
	tt, ok := asTime(t)
	if !ok {
		return "—"
	}
	u := tt.UTC()
	return template.HTML(fmt.Sprintf(`<time datetime="%s" title="%s">%s</time>`,
		u.Format(time.RFC3339), u.Format("2006-01-02 15:04 UTC"), tt.In(loc).Format("Mon 2 Jan 2006")))
}

func asTime(t any) (time.Time, bool) {
	switch v := t.(type) {
	case time.Time:
		return v, !v.IsZero()
	case *time.Time:
		if v == nil {
			return time.Time{}, false
		}
		return *v, !v.IsZero()
	}
	return time.Time{}, false
}

// rel says how far t is from now: "in 3m", "12s ago".
func rel(t any) string {
	tt, ok := asTime(t)
	if !ok {
		return ""
	}
	d := time.Until(tt)
	if d >= 0 {
		return "in " + durText(d)
	}
	return durText(-d) + " ago"
}

// durText rounds a duration for people: 3.2s, 4m10s, 2h5m, 3d4h.
func durText(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
	// Round to the hour first, then split, so 6d23h40m is 7d0h, never 6d24h.
	hours := int(d.Round(time.Hour) / time.Hour)
	return fmt.Sprintf("%dd%dh", hours/24, hours%24)
}

func pct(done, total int) int {
	if total <= 0 {
		return 0
	}
	return done * 100 / total
}

// serveStatic serves the embedded CSS and JavaScript.
func serveStatic() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.FileServerFS(sub)
	return http.StripPrefix("/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		files.ServeHTTP(w, r)
	}))
}
