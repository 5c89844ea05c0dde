#!/bin/sh
# PostgreSQL + pgvector for goldeval's tests, built to run on any x86-64 CPU (`make pgvector`, run by `make test`).
#
# The server is Debian's own postgresql-$PG_MAJOR (15 on bookworm). pgvector is compiled from Debian's
# source package of it (trixie carries pgvector 0.8; bookworm and bookworm-backports have none), fetched by
# apt with a temporary deb-src list, so apt checks it against Debian's signed index. It is built with
# OPTFLAGS="" as Debian builds it (pgvector's Makefile otherwise uses -march=native, which is how a wheel
# built on an AVX-512 machine ends up killing the server with SIGILL on an AVX2-only one, issue 17);
# pgvector >= 0.7 then picks its FMA and AVX-512 code paths at run time, after a CPU check.
# tests/test_pgvector_portable.py proves it on an emulated AMD EPYC (AVX2, no AVX-512). See docs/pgvector.md.
#
# Idempotent: once vector.so and vector.control are installed for $PG_MAJOR (and qemu-user) it does nothing.
# Installing needs root (apt-get, and files under /usr); CI runs `make test` as root.
set -eu

PG_MAJOR=${PG_MAJOR:-15}
PGVECTOR_SUITE=${PGVECTOR_SUITE:-trixie}
PG_CONFIG=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config

if [ -f "/usr/lib/postgresql/$PG_MAJOR/lib/vector.so" ] && [ -f "/usr/share/postgresql/$PG_MAJOR/extension/vector.control" ] \
    && command -v qemu-x86_64 >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "tools/install_pgvector.sh: pgvector for PostgreSQL $PG_MAJOR is not installed; run as root: sudo make pgvector" >&2
    exit 2
fi

# The server, its build files, a compiler, and qemu-user (the portability test runs the server on an
# emulated CPU). Only what is missing is installed; --no-install-recommends keeps qemu's binfmt hooks out.
missing=""
for package in postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR gcc make dpkg-dev qemu-user; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing="$missing $package"
done
if [ -n "$missing" ]; then
    echo "tools/install_pgvector.sh: apt-get install$missing" >&2
    apt-get update -qq
    # shellcheck disable=SC2086  # the list is word-split on purpose
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

if [ -f "/usr/lib/postgresql/$PG_MAJOR/lib/vector.so" ] && [ -f "/usr/share/postgresql/$PG_MAJOR/extension/vector.control" ]; then
    exit 0  # only qemu-user was missing
fi
work=$(mktemp -d /tmp/goldeval-pgvector.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
# A list of its own, with lists and caches of their own: the machine's apt sources are not touched. The
# archive is the one this machine's own Debian sources name (its first `URIs:` or `deb` entry).
mirror=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | tr ' ' '\n' | grep -i debian | head -n 1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n 1)
if [ -z "$mirror" ]; then
    echo "tools/install_pgvector.sh: found no Debian archive in /etc/apt/sources.list*; add one, or install pgvector for PostgreSQL $PG_MAJOR by hand" >&2
    exit 2
fi
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $PGVECTOR_SUITE main" \
    >"$work/sources.list"
set -- -o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$work/lists" \
    -o "Dir::Cache=$work/cache" -o APT::Sandbox::User=root
apt-get "$@" update -qq
# apt-get source checks the files against the signed Sources index and applies Debian's patches.
(cd "$work/src" && apt-get "$@" source -qq pgvector >/dev/null)
tree=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*')
echo "tools/install_pgvector.sh: building $(basename "$tree") for PostgreSQL $PG_MAJOR (OPTFLAGS=\"\": any x86-64)" >&2
make -s -C "$tree" OPTFLAGS="" PG_CONFIG="$PG_CONFIG" >/dev/null
make -s -C "$tree" OPTFLAGS="" PG_CONFIG="$PG_CONFIG" install >/dev/null
