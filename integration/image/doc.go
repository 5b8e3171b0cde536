// Package image tests jetsched's container image: deploy/image/build.sh
// builds it with buildah, the tests check what is in it and run it with
// podman, with its embedded nats-server and against a separate one. See
// docs/image.md.
package image
