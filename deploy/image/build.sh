#!/usr/bin/env bash
# Builds jetsched's OCI image without Docker: a static scheduler binary in
# an image FROM scratch, assembled and committed with buildah. See
# docs/image.md.
#
#   deploy/image/build.sh                          # ghcr.io/jetsched/scheduler:<version> and :latest
#   deploy/image/build.sh --output oci-archive:scheduler.tar
#   deploy/image/build.sh --print-storage-driver   # the driver podman must use to see the image
#
# It installs buildah and podman with apt-get when they are missing (as
# root), picks a containers-storage driver that works on this machine, and
# is safe to run again: the image's timestamps come from the commit, so an
# unchanged tree gives the same image ID and leaves nothing dangling.
#
# Environment: JETSCHED_IMAGE (repository, default ghcr.io/jetsched/scheduler),
# STORAGE_DRIVER (overlay or vfs; default: overlay when it works here, else
# vfs), GOARCH (default: the host's).
set -euo pipefail

usage() {
  echo "usage: $0 [--output oci-archive:PATH] [--print-storage-driver]"
}

output=""
print_driver=false
while [ $# -gt 0 ]; do
  case "$1" in
    --output) [ $# -ge 2 ] || { echo "build.sh: --output needs a value" >&2; exit 2; }; output=$2; shift 2 ;;
    --output=*) output=${1#--output=}; shift ;;
    --print-storage-driver) print_driver=true; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
case "$output" in
  ""|oci-archive:?*) ;;
  *) echo "build.sh: --output $output: must be oci-archive:PATH" >&2; exit 2 ;;
esac
# A relative PATH is relative to where the script was started.
case "$output" in
  oci-archive:/*|"") ;;
  *) output="oci-archive:$PWD/${output#oci-archive:}" ;;
esac

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

# The image's user: 65532 is the "nonroot" id of distroless images, so
# volumes prepared for those fit this one too.
uid=65532
data_dir=/var/lib/jetsched
image=${JETSCHED_IMAGE:-ghcr.io/jetsched/scheduler}
ca_bundle=/etc/ssl/certs/ca-certificates.crt

# --- tools -----------------------------------------------------------------
# buildah builds; podman runs (and the test checks the image with it).
# fuse-overlayfs and uidmap are what rootless storage and --chown need.
# runc beside crun (podman's default runtime in Debian): crun 1.8 of
# bookworm refuses a hybrid cgroup v1/v2 host ("cgroups in hybrid mode not
# supported"), runc runs there. Host networking needs no slirp4netns or
# passt, so they are left out. ca-certificates provides the bundle copied
# into the image.
missing=()
command -v buildah >/dev/null 2>&1 || missing+=(buildah)
command -v podman >/dev/null 2>&1 || missing+=(podman crun)
command -v runc >/dev/null 2>&1 || missing+=(runc)
[ -s "$ca_bundle" ] || missing+=(ca-certificates)
if [ "$(id -u)" != 0 ]; then
  command -v newuidmap >/dev/null 2>&1 || missing+=(uidmap)
  command -v fuse-overlayfs >/dev/null 2>&1 || missing+=(fuse-overlayfs)
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "build.sh: installing ${missing[*]}" >&2
    apt-get -o DPkg::Lock::Timeout=120 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends \
      "${missing[@]}" fuse-overlayfs uidmap >/dev/null
  else
    echo "build.sh: missing ${missing[*]}: install them (apt-get install -y buildah podman), or run as root with apt-get" >&2
    exit 1
  fi
fi

# --- storage driver ----------------------------------------------------------
# overlay is fast and podman's default, but fails on some hosts (an overlay
# or fuse filesystem under /var/lib/containers, a container without
# CAP_SYS_ADMIN); vfs works everywhere at the cost of a full copy per
# layer. A scratch image has a single layer, so vfs costs little here.
# buildah and podman both read STORAGE_DRIVER, and podman sees an image only
# in the driver it was built with.
overlay_works() {
  local ctr
  ctr=$(STORAGE_DRIVER=overlay buildah from scratch 2>/dev/null) || return 1
  if STORAGE_DRIVER=overlay buildah mount "$ctr" >/dev/null 2>&1; then
    STORAGE_DRIVER=overlay buildah rm "$ctr" >/dev/null 2>&1 || true
    return 0
  fi
  STORAGE_DRIVER=overlay buildah rm "$ctr" >/dev/null 2>&1 || true
  return 1
}
if [ -z "${STORAGE_DRIVER:-}" ]; then
  if overlay_works; then STORAGE_DRIVER=overlay; else STORAGE_DRIVER=vfs; fi
fi
export STORAGE_DRIVER
if $print_driver; then
  echo "$STORAGE_DRIVER"
  exit 0
fi

# --- binary --------------------------------------------------------------------
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
# The commit's time, not now: the same tree gives the same image.
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)

work=$(mktemp -d)
ctr=""
cleanup() {
  if [ -n "$ctr" ]; then buildah rm "$ctr" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Static (no libc in scratch), no paths of this machine, no symbols. Time
# zones are the product: the zone database must be in the binary, since
# scratch has no /usr/share/zoneinfo. cmd/scheduler imports time/tzdata;
# the timetzdata tag keeps it there should that import ever go.
arch=${GOARCH:-$(go env GOARCH)}
CGO_ENABLED=0 GOOS=linux GOARCH=$arch \
  go build -trimpath -tags timetzdata -ldflags "-s -w" -o "$work/scheduler" ./cmd/scheduler

# --- root filesystem -------------------------------------------------------------
# Staged with explicit modes (buildah copy keeps them; its --chmod would
# apply to a directory's contents only) and copied owned by root; then the
# data dir, alone, owned by the user: a --chown on the first copy would
# give the user /var and /var/lib too.
root="$work/rootfs"
install -d -m 0755 "$root" "$root/etc" "$root/etc/ssl" "$root/etc/ssl/certs" "$root/var" "$root/var/lib"
install -d -m 1777 "$root/tmp" # for anything that asks os.TempDir
install -m 0755 "$work/scheduler" "$root/scheduler"
install -m 0644 "$ca_bundle" "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\njetsched:x:%s:%s:jetsched:%s:/sbin/nologin\n' "$uid" "$uid" "$data_dir" >"$root/etc/passwd"
printf 'root:x:0:\njetsched:x:%s:\n' "$uid" >"$root/etc/group"
chmod 0644 "$root/etc/passwd" "$root/etc/group"
# The embedded server's store, writable by the user only.
install -d -m 0755 "$work/data"
install -d -m 0750 "$work/data/${data_dir##*/}"

ctr=$(buildah from scratch)
buildah copy -q "$ctr" "$root" / >/dev/null
buildah copy -q --chown "$uid:$uid" "$ctr" "$work/data" "${data_dir%/*}" >/dev/null

# --- configuration -----------------------------------------------------------------
# The default command serves a container: the embedded server listens on
# every interface (a loopback one is unreachable from outside the
# container), the store is the volume, metrics and health on 9464. Given
# NATS_URL (or --nats-url) the scheduler joins that system instead and
# ignores --listen and --data-dir.
buildah config \
  --os linux --arch "$arch" \
  --user "$uid:$uid" \
  --workingdir "$data_dir" \
  --entrypoint '["/scheduler"]' \
  --cmd "[\"run\", \"--listen\", \"0.0.0.0:4222\", \"--data-dir\", \"$data_dir\", \"--metrics-listen\", \"0.0.0.0:9464\"]" \
  --port 4222/tcp --port 9464/tcp \
  --volume "$data_dir" \
  --label org.opencontainers.image.title=jetsched \
  --label "org.opencontainers.image.description=jetsched scheduler: durable schedules and timers on NATS JetStream" \
  --label org.opencontainers.image.source=https://github.com/jetsched/jetsched \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$revision" \
  --label "org.opencontainers.image.created=$created" \
  "$ctr"
buildah commit -q --timestamp "$epoch" --identity-label=false "$ctr" "$image:$version" >/dev/null
buildah tag "$image:$version" "$image:latest"
if [ -n "$output" ]; then
  rm -f "${output#oci-archive:}"
  buildah push -q "$image:$version" "$output"
fi
echo "build.sh: built $image:$version and $image:latest (storage driver $STORAGE_DRIVER)${output:+, wrote $output}" >&2
