package image

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testRepo is the repository the test builds its image as, so that it
// neither replaces nor removes a developer's ghcr.io/jetsched/scheduler.
const testRepo = "localhost/jetsched-imagetest/scheduler"

// maxImageBytes bounds the image uncompressed: the static binary is most
// of it (about 28 MiB today).
const maxImageBytes = 64 << 20

// TestImage builds the container image with deploy/image/build.sh, checks
// what is in it, and, where podman can run containers here, runs it twice:
// with its embedded server and against a separate nats-server.
//
//	sudo go test -count=1 -v -run TestImage ./integration/image/
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a container image with buildah (the first run also installs buildah and podman with apt-get)")
	}
	if why := cannotBuild(); why != "" {
		if os.Getenv("CI") != "" { // CI runs as root with apt-get: the build must run there
			t.Fatal(why)
		}
		t.Skip(why)
	}
	script, err := filepath.Abs("../../deploy/image/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "image.tar")
	start := time.Now()
	out, err := runScript(t, 15*time.Minute, script, "--output", "oci-archive:"+archive)
	if err != nil {
		t.Fatalf("build.sh: %v\n%s", err, out)
	}
	t.Logf("build.sh took %s", time.Since(start).Round(100*time.Millisecond))
	driver, err := runScript(t, time.Minute, script, "--print-storage-driver")
	if err != nil {
		t.Fatalf("build.sh --print-storage-driver: %v\n%s", err, driver)
	}
	pm := &podman{driver: strings.TrimSpace(driver), image: testRepo + ":latest"}
	t.Cleanup(func() { pm.removeTestImages(t) })

	img, err := readOCIArchive(archive)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("contents", func(t *testing.T) { checkContents(t, img) })
	t.Run("config", func(t *testing.T) { checkConfig(t, img) })

	if err := pm.probe(t); err != nil {
		// The build and the image's contents are checked; running needs
		// what this host may lack (cgroups, namespaces, a storage driver).
		t.Skipf("the image is built and checked, but podman cannot run containers here: %v", err)
	}
	t.Logf("podman runs the image with %q (storage driver %s)", pm.runOpts, pm.driver)
	t.Run("embedded", func(t *testing.T) { testEmbedded(t, pm) })
	t.Run("external", func(t *testing.T) { testExternal(t, pm) })
}

// cannotBuild says why build.sh cannot build here, or "" when it can:
// buildah is installed, or the script may install it (root with apt-get).
func cannotBuild() string {
	if _, err := exec.LookPath("buildah"); err == nil {
		return ""
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "buildah is not installed and there is no apt-get to install it (apt-get install -y buildah podman)"
	}
	if os.Geteuid() != 0 {
		return "buildah is not installed and installing it with apt-get needs root (sudo apt-get install -y buildah podman)"
	}
	return ""
}

// runScript runs the build script with the test's repository name and
// returns its stdout and stderr.
func runScript(t *testing.T, timeout time.Duration, script string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "JETSCHED_IMAGE="+testRepo)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	return out.String(), err
}

// checkContents: a static binary, the CA bundle, the user, the data dir,
// and nothing else (in particular no shell).
func checkContents(t *testing.T, img *ociImage) {
	t.Logf("image size uncompressed: %.1f MiB (%d bytes)", float64(img.layerBytes)/(1<<20), img.layerBytes)
	if img.layerBytes >= maxImageBytes {
		t.Errorf("image is %d bytes uncompressed, want < %d", img.layerBytes, maxImageBytes)
	}
	var regular []string
	for name, f := range img.files {
		if f.hdr.Typeflag != tar.TypeDir {
			regular = append(regular, name)
		}
	}
	slices.Sort(regular)
	want := []string{"/etc/group", "/etc/passwd", "/etc/ssl/certs/ca-certificates.crt", "/scheduler"}
	if !slices.Equal(regular, want) {
		t.Errorf("files (other than directories) %q, want exactly %q", regular, want)
	}
	if _, ok := img.files["/bin/sh"]; ok {
		t.Error("the image has /bin/sh")
	}

	bin := img.files["/scheduler"]
	if bin.hdr == nil {
		t.Fatal("no /scheduler")
	}
	if bin.hdr.Mode&0o777 != 0o755 {
		t.Errorf("/scheduler mode %o, want 755", bin.hdr.Mode&0o777)
	}
	checkStatic(t, bin.body)

	if ca := img.files["/etc/ssl/certs/ca-certificates.crt"]; !bytes.Contains(ca.body, []byte("BEGIN CERTIFICATE")) {
		t.Errorf("/etc/ssl/certs/ca-certificates.crt holds no certificate (%d bytes)", len(ca.body))
	}
	if p := string(img.files["/etc/passwd"].body); !regexp.MustCompile(`(?m)^jetsched:x:65532:65532:[^:]*:/var/lib/jetsched:`).MatchString(p) {
		t.Errorf("/etc/passwd has no jetsched user 65532 at home in /var/lib/jetsched:\n%s", p)
	}
	if g := string(img.files["/etc/group"].body); !strings.Contains(g, "jetsched:x:65532:") {
		t.Errorf("/etc/group has no jetsched group 65532:\n%s", g)
	}
	for dir, mode := range map[string]int64{"/var/lib/jetsched": 0o750, "/tmp": 0o1777} {
		d := img.files[dir]
		if d.hdr == nil || d.hdr.Typeflag != tar.TypeDir {
			t.Errorf("no directory %s", dir)
			continue
		}
		perm := d.hdr.Mode & 0o7777
		if perm != mode {
			t.Errorf("%s mode %o, want %o", dir, perm, mode)
		}
	}
	for name, f := range img.files {
		owner := [2]int{0, 0}
		if name == "/var/lib/jetsched" {
			owner = [2]int{65532, 65532}
		}
		if got := [2]int{f.hdr.Uid, f.hdr.Gid}; got != owner {
			t.Errorf("%s owned by %d:%d, want %d:%d", name, got[0], got[1], owner[0], owner[1])
		}
	}
}

// checkStatic fails unless bin is an ELF executable that needs no dynamic
// loader or shared library: a scratch image has neither.
func checkStatic(t *testing.T, bin []byte) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("/scheduler is not an ELF binary: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("/scheduler is dynamically linked (has PT_INTERP)")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("/scheduler needs shared libraries %q", libs)
	}
	if f.Section(".symtab") != nil {
		t.Error("/scheduler keeps its symbol table: not built with -ldflags -s")
	}
}

// checkConfig: the non-root user, the entrypoint, a default command that
// serves from a container, the ports and the OCI labels.
func checkConfig(t *testing.T, img *ociImage) {
	c := img.config
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/scheduler"}) {
		t.Errorf("entrypoint %q, want [/scheduler]", c.Entrypoint)
	}
	wantCmd := []string{"run", "--listen", "0.0.0.0:4222", "--data-dir", "/var/lib/jetsched", "--metrics-listen", "0.0.0.0:9464"}
	if !slices.Equal(c.Cmd, wantCmd) {
		t.Errorf("cmd %q, want %q", c.Cmd, wantCmd)
	}
	if c.WorkingDir != "/var/lib/jetsched" {
		t.Errorf("working dir %q, want /var/lib/jetsched", c.WorkingDir)
	}
	for _, p := range []string{"4222/tcp", "9464/tcp"} {
		if _, ok := c.ExposedPorts[p]; !ok {
			t.Errorf("port %s not exposed: %v", p, c.ExposedPorts)
		}
	}
	if _, ok := c.Volumes["/var/lib/jetsched"]; !ok {
		t.Errorf("/var/lib/jetsched is not a volume: %v", c.Volumes)
	}
	if s := c.Labels["org.opencontainers.image.source"]; s != "https://github.com/jetsched/jetsched" {
		t.Errorf("label org.opencontainers.image.source %q", s)
	}
	if v := c.Labels["org.opencontainers.image.version"]; v == "" {
		t.Error("no label org.opencontainers.image.version")
	}
	if r := c.Labels["org.opencontainers.image.revision"]; !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(r) {
		t.Errorf("label org.opencontainers.image.revision %q, want a commit hash", r)
	}
}
