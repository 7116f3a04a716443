#!/usr/bin/env bash
# (Re)creates the symlinks of one release folder: every shared source of src/ and its compat file.
#   test/oracle/link.sh 1.35 positional|config
set -euo pipefail
cd "$(dirname "$0")/v$1"
find . -maxdepth 1 -type l -delete
for f in ../src/*.go; do ln -s "$f" .; done
ln -s "../compat/$2.go" compat.go
