#!/bin/sh
# Cross-compiles and vets drivers/kqueue and its tests, and the integration
# module that runs the driver suite against it, for every system the driver
# targets. This machine (and CI) runs Linux, where the driver's
# logic is tested against an emulation of kqueue; on these targets the
# code is compiled only, never run.
#
# For each target: go vet ./... and go test -c -o /dev/null ./..., both
# inside the workspace (go.work) and on the module alone (GOWORK=off).
# Exits non-zero if any step fails.
set -eu

cd "$(dirname "$0")"

targets="darwin/amd64 darwin/arm64 freebsd/amd64 netbsd/amd64 openbsd/amd64"
status=0

run() {
	if ! "$@"; then
		echo "crossbuild: FAILED: $*" >&2
		status=1
	fi
}

for target in $targets; do
	goos=${target%/*}
	goarch=${target#*/}
	for work in on off; do
		if [ "$work" = off ]; then
			gowork=off
		else
			gowork=
		fi
		for dir in . ../../integration; do
			echo "crossbuild: $goos/$goarch $dir (workspace $work)"
			run env -C "$dir" GOOS="$goos" GOARCH="$goarch" CGO_ENABLED=0 GOWORK="$gowork" go vet ./...
			# go test -c with several packages writes each test binary
			# to the -o directory; /dev/null discards them.
			run env -C "$dir" GOOS="$goos" GOARCH="$goarch" CGO_ENABLED=0 GOWORK="$gowork" go test -c -o /dev/null ./...
		done
	done
done

if [ "$status" -ne 0 ]; then
	echo "crossbuild: some targets failed" >&2
fi
exit "$status"
