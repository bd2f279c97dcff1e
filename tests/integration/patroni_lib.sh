# shellcheck shell=bash
# A Patroni-managed PostgreSQL 15 cluster for the drills, sourced after lib.sh and
# netns_lib.sh: etcd 3.4 (one member, the DCS) on the bridge's host address, and three
# Patroni 3.0.2 members m1..m3, each in a network namespace of its own at .11, .12, .13
# (PostgreSQL on 5432 and Patroni's REST API on 8008 inside each). Patroni runs as the
# postgres user in a directory that user owns. Timings are short so that a drill is short:
# ttl 10 s, loop_wait 1 s, retry_timeout 4 s; master_start_timeout 0 (a primary whose
# PostgreSQL dies is failed over at once, not restarted in place).
#
#   pt_up                       etcd and the three members; waits for a leader and two
#                               streaming replicas; sets PT_URL (the multi-host URL the
#                               daemons get, by environment) and PT_URL_SHORT (the same
#                               without the keepalive options: for psql, and for a
#                               configuration file, whose lines hold 197 bytes)
#   pt_leader                   prints the leader's member name (from any REST API)
#   pt_member_addr NAME         prints m<N>'s address
#   pt_psql NAME SQL            psql as postgres on that member's xmrgate database
#   pt_streaming_replicas       prints how many replicas stream from the leader
#   pt_logs DIR                 copies the members' logs to DIR

PT_DIR=${PT_DIR:-}
PT_ETCD_PORT=$((XG_PORT_BASE + 190))
PT_SCOPE=xg$XG_PORT_BASE
declare -A PT_N=([m1]=11 [m2]=12 [m3]=13)

pt_member_addr() { ns_addr "${PT_N[$1]}"; }

pt_dir() {
	[[ -n $PT_DIR ]] && return 0
	mkdir -p /var/lib/xmrgate
	PT_DIR=$(mktemp -d /var/lib/xmrgate/patroni.XXXXXX)
	chown postgres:postgres "$PT_DIR"
	chmod 700 "$PT_DIR"
	defer pt_cleanup
}

# Before the directory goes: every member's processes (they write into it).
pt_cleanup() {
	local m
	[[ -z ${PT_KEEP_LOGS:-} ]] || pt_logs "$PT_KEEP_LOGS"
	for m in m1 m2 m3; do ns_kill "$m"; done
	[[ -z ${PT_ETCD_PID:-} ]] || kill -9 "$PT_ETCD_PID" 2>/dev/null
	sleep 0.5
	rm -rf "$PT_DIR"
}

pt_etcd() {
	local a
	a=$(ns_addr 1)
	mkdir -p "$PT_DIR/etcd"
	etcd --name xg --data-dir "$PT_DIR/etcd" \
		--listen-client-urls "http://$a:$PT_ETCD_PORT" --advertise-client-urls "http://$a:$PT_ETCD_PORT" \
		--listen-peer-urls "http://$a:$((PT_ETCD_PORT + 1))" \
		--initial-advertise-peer-urls "http://$a:$((PT_ETCD_PORT + 1))" \
		--initial-cluster "xg=http://$a:$((PT_ETCD_PORT + 1))" \
		--enable-v2=true >"$PT_DIR/etcd.log" 2>&1 &
	PT_ETCD_PID=$!
	disown "$PT_ETCD_PID" # killed at the end: no job notice in the test's output
	xg_wait_until 30 curl -sf "http://$a:$PT_ETCD_PORT/health" -o /dev/null
}

pt_config() {
	local name=$1 a
	a=$(pt_member_addr "$name")
	cat >"$PT_DIR/$name.yml" <<EOF
scope: $PT_SCOPE
name: $name
log:
  level: INFO
restapi:
  listen: $a:8008
  connect_address: $a:8008
etcd3:
  hosts: $(ns_addr 1):$PT_ETCD_PORT
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    master_start_timeout: 0
    maximum_lag_on_failover: 1048576
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_level: logical
        hot_standby: 'on'
        wal_log_hints: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
        fsync: 'off'
        tcp_keepalives_idle: 5
        tcp_keepalives_interval: 2
        tcp_keepalives_count: 3
  initdb:
  - encoding: UTF8
  - no-sync
  - locale: C
  pg_hba:
  - local all all trust
  - host replication replicator $NS_PREFIX.0/24 trust
  - host all all $NS_PREFIX.0/24 trust
  - host all all 127.0.0.1/32 trust
postgresql:
  listen: $a:5432
  connect_address: $a:5432
  data_dir: $PT_DIR/$name/data
  bin_dir: /usr/lib/postgresql/15/bin
  pgpass: $PT_DIR/$name/pgpass
  authentication:
    replication:
      username: replicator
      password: replicator
    superuser:
      username: postgres
      password: postgres
  parameters:
    unix_socket_directories: $PT_DIR/$name
watchdog:
  mode: off
EOF
	mkdir -p "$PT_DIR/$name"
	chown -R postgres:postgres "$PT_DIR/$name" "$PT_DIR/$name.yml"
}

pt_start_member() {
	local name=$1
	# without the stack's PG* variables: Patroni's own libpq connections use its config; from
	# /, which postgres can enter (a clone under /root, mode 700, it cannot)
	(cd / && ns_exec "$name" env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE -u DATABASE_URL \
		runuser -u postgres -- patroni "$PT_DIR/$name.yml") >>"$PT_DIR/$name.log" 2>&1 &
}

pt_leader() {
	local m
	for m in m1 m2 m3; do
		curl -s --max-time 2 "http://$(pt_member_addr "$m"):8008/cluster" 2>/dev/null |
			jq -er '.members[] | select(.role == "leader" and .state == "running") | .name' 2>/dev/null &&
			return 0
	done
	return 1
}

pt_psql() { psql -X -q -At -h "$(pt_member_addr "$1")" -p 5432 -U postgres -d xmrgate -c "$2"; }

pt_streaming_replicas() {
	local l
	l=$(pt_leader) || return 1
	psql -X -At -h "$(pt_member_addr "$l")" -p 5432 -U postgres -d postgres -c \
		"SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
}

pt_two_streaming() { [[ $(pt_streaming_replicas 2>/dev/null) == 2 ]]; }

pt_up() {
	pt_dir
	pt_etcd || return 1
	local m
	for m in m1 m2 m3; do
		ns_add "$m" "${PT_N[$m]}" || return 1
		pt_config "$m"
	done
	# all three at once: one wins the initialize key and bootstraps, the others wait for it
	# and clone it
	for m in m1 m2 m3; do pt_start_member "$m"; done
	xg_wait_until 120 pt_leader >/dev/null || {
		for m in m1 m2 m3; do
			echo "# no leader within 120 s; $m's log ends:"
			tail -n 8 "$PT_DIR/$m.log" | sed 's/^/#   /'
		done >&2
		return 1
	}
	psql -X -q -h "$(pt_member_addr "$(pt_leader)")" -p 5432 -U postgres -d postgres \
		-c 'CREATE DATABASE xmrgate' || return 1
	xg_wait_until 120 pt_two_streaming || return 1
	PT_URL="postgresql://postgres@$(pt_member_addr m1):5432,$(pt_member_addr m2):5432,$(pt_member_addr m3):5432/xmrgate"
	PT_URL+="?target_session_attrs=read-write&connect_timeout=2"
	PT_URL_SHORT=$PT_URL
	# A primary whose machine vanished sends no reset: an idle connection to it (the LISTEN
	# session) is found dead by keepalives, a busy one by tcp_user_timeout: ~8 s either way.
	PT_URL+="&keepalives_idle=5&keepalives_interval=1&keepalives_count=3&tcp_user_timeout=8000"
}

pt_logs() { cp "$PT_DIR"/*.log "$1"/ 2>/dev/null || true; }
