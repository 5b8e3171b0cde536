// Package docscheck keeps the documentation honest about the repository:
// every relative link in README.md and docs/*.md reaches a file of the
// repository (and, for a Markdown file, a heading of it), every repository
// path written in backticks (`internal/fires`, `docs/records.md`,
// `bench/results/`) exists, and nothing points outside the repository
// tree. Its test runs it on the repository itself.
package docscheck
