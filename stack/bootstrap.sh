#!/usr/bin/env bash
# Installs what the local stack needs and is missing: PostgreSQL 15, Prometheus, its PostgreSQL
# exporter, Chromium and npm (Debian packages), the Python venv (pinned, from PyPI), the
# browser files of the dashboard and of the API's /docs (npm) and the JVM components (Maven
# Central). Safe to run again: it skips whatever is already in place. Each failure ends with
# one sentence saying what to do.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "make up stopped: $*" >&2; exit 2; }

command -v python3.11 >/dev/null || die "Python 3.11 is not on PATH: install python3.11, then run make up again."
command -v java >/dev/null || die "java is not on PATH: install a JDK 17+ (apt-get install openjdk-17-jdk-headless), then run make up again."
java_major=$(java -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/{print $2}')
[ "${java_major%%.*}" -ge 17 ] || die "Java ${java_major} is too old: install a JDK 17+, then run make up again."
command -v mvn >/dev/null || die "mvn is not on PATH: install Maven (apt-get install maven), then run make up again."
free_kb=$(df -Pk . | awk 'NR==2{print $4}')
[ "$free_kb" -ge 4194304 ] || die "less than 4 GiB free on $(pwd): free some disk, then run make up again."

if [ ! -x /usr/lib/postgresql/15/bin/postgres ]; then
  [ "$(id -u)" -eq 0 ] || die "PostgreSQL 15 is missing: run make up as root once (it apt-installs postgresql-15)."
  echo "installing PostgreSQL 15 from Debian packages"
  # The stack runs its own cluster; don't let the package create and start a second one on 5432.
  mkdir -p /etc/postgresql-common
  grep -qs '^create_main_cluster *= *false' /etc/postgresql-common/createcluster.conf ||
    echo 'create_main_cluster = false' >> /etc/postgresql-common/createcluster.conf
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || die "apt-get update failed: check the Debian package mirror, then run make up again."
  apt-get install -y -qq -o Dpkg::Options::=--force-confold postgresql-15 >/dev/null ||
    die "apt-get install postgresql-15 failed: see the output above, then run make up again."
fi

# Prometheus and its PostgreSQL exporter run as stack components (docs/observability.md);
# Chromium renders the dashboard headless (screenshots in tests and reports); npm installs the
# dashboard's chart library; curl is what the README's and the runbooks' commands use
# (tests/e2e/test_readme.py and test_runbooks.py run them as pasted).
missing=()
command -v curl >/dev/null || missing+=(curl)
command -v prometheus >/dev/null || missing+=(prometheus)
command -v promtool >/dev/null || missing+=(prometheus)
command -v prometheus-postgres-exporter >/dev/null || missing+=(prometheus-postgres-exporter)
command -v chromium >/dev/null || missing+=(chromium)
command -v npm >/dev/null || missing+=(npm)
# nftables cuts and drops traffic between loopback addresses for the network-fault rehearsals
# (tests/faults, docs/operations.md#rehearsing-network-faults).
command -v nft >/dev/null || [ -x /usr/sbin/nft ] || missing+=(nftables)  # sbin: maybe not on PATH
if [ ${#missing[@]} -gt 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  [ "$(id -u)" -eq 0 ] || die "${missing[*]} missing: run make up as root once (it apt-installs them)."
  echo "installing ${missing[*]} from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  # The stack supervises its own Prometheus and exporter: keep the packages' services from
  # starting on the same ports (invoke-rc.d asks policy-rc.d; 101 = "not now").
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq >/dev/null || die "apt-get update failed: check the Debian package mirror, then run make up again."
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install ${missing[*]} failed: see the output above, then run make up again."
  # ...nor at the next boot, where they would listen on every interface.
  if [ -d /run/systemd/system ]; then
    systemctl disable --now prometheus prometheus-node-exporter prometheus-postgres-exporter \
      >/dev/null 2>&1 || true
  fi
fi

stamp=.venv/.installed-$(cat pyproject.toml requirements.lock 2>/dev/null | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  echo "installing the Python environment (.venv)"
  [ -x .venv/bin/python ] || python3.11 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -c requirements.lock -e ".[dev]" ||
    die "pip install failed: see the output above (PyPI reachable?), then run make up again."
  rm -f .venv/.installed-*; touch "$stamp"
fi

# The browser files served from node_modules (no build step, no CDN), each pinned by its
# package-lock.json: the dashboard's chart library and the order API's Swagger UI (/docs).
for npm_dir in services/dashboard services/orders; do
  npm_stamp=$npm_dir/node_modules/.installed-$(sha256sum "$npm_dir/package-lock.json" | cut -c1-16)
  if [ ! -f "$npm_stamp" ]; then
    echo "installing the browser files of $npm_dir (npm ci)"
    (cd "$npm_dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) ||
      die "npm ci in $npm_dir failed: see the output above (npm registry reachable?), then run make up again."
    touch "$npm_stamp"
  fi
done

# Toxiproxy delays traffic between two nodes for the same rehearsals (this kernel has no tc
# netem): built from its pinned Go module by the Go module proxy, into .stack/bin.
toxiproxy_version=v2.12.0
toxiproxy=.stack/bin/toxiproxy-server
if [ "$("$toxiproxy" -version 2>/dev/null)" != "toxiproxy-server version $toxiproxy_version" ]; then
  command -v go >/dev/null || die "go is not on PATH: install Go 1.23+ (it builds Toxiproxy), then run make up again."
  echo "installing Toxiproxy $toxiproxy_version (go install)"
  gobin=$(mktemp -d)
  GOBIN=$gobin go install -ldflags "-X github.com/Shopify/toxiproxy/v2.Version=$toxiproxy_version" \
    "github.com/Shopify/toxiproxy/v2/cmd/server@$toxiproxy_version" ||
    die "go install of Toxiproxy $toxiproxy_version failed: see the output above (Go module proxy reachable?), then run make up again."
  mkdir -p .stack/bin && mv "$gobin/server" "$toxiproxy" && rm -rf "$gobin"
fi

stack/fetch_jars.sh
stack/build_event_check.sh
