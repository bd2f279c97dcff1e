#!/usr/bin/env bash
# Malformed bodies answered as monerod answers them (issue #34, part 1). The same bodies go
# to node A (monerod 0.18.0) directly and through a gateway over A alone, then to node B
# (0.18.4) and through a gateway over B alone, for each endpoint
# kind — JSON-RPC (/json_rpc), plain JSON (/get_height, /get_transactions, and
# /get_transaction_pool_hashes.bin, which monerod reads as JSON despite its name) and epee
# (/get_blocks_by_height.bin, /get_blocks.bin) — and the status, the content type and the
# body must be the same: JSON bodies compared as JSON (the gateway writes compact JSON,
# monerod indented), others byte for byte (but for the clock 0.18.3 and newer put in every
# get_blocks.bin answer, daemon_time, as nodes_lib.sh's same_bin masks it). The rules are gateway/rpc/jsonrpc.c
# (jsonrpc_load_body: the first value, whatever follows, an empty body an empty object) and
# gateway/rpc/epee.c (epee_measure: bytes after the root section dropped), table-tested in
# tests/unit/gateway/rpc/.
#
# Two documented differences (README, "Request path"):
#   - a JSON body that ends before its value does is refused by the gateway every time
#     (400, or -32700 on /json_rpc), where monerod's reader answers some such bodies as if
#     they were complete (one that ends right after `{`, `[`, `:` or `,`: `{"txs_hashes":[`
#     is an empty list) and refuses others (one that ends inside a string or a number): a
#     request cut short is the client's failure, and answered as if complete it may ask a
#     different question (a list of transactions cut short asks for fewer);
#   - a body over the gateway's [server] max_body (1 MiB) is refused with 413 before it is
#     read, where monerod reads it (up to its own limit) or drops the connection.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

check "the nodes agree on one chain" wait_until 120 nodes_agree
check_here "a tenant is granted" grant_tenant --bare sovereign 1

dir=$(mktemp -d)
defer rm -rf "$dir"

genesis=$(rpc "$NODE_A_URL" get_block_header_by_height '{"height":0}' | jq -r .block_header.hash)
rpc_call='{"jsonrpc":"2.0","id":0,"method":"get_block_count"}'

# body NAME PRINTF_FORMAT: writes the body file NAME (printf %b escapes, NUL included).
body() { printf '%b' "$2" >"$dir/$1"; }
body empty ''
body space ' \r\n'
body garbage 'not json'
body truncated '{"jsonrpc":"2.0","id":0,"method":"get_'
body rpc "$rpc_call"
body rpc_x "$rpc_call x"
body rpc_brace "$rpc_call}"
body rpc_nul "$rpc_call\\0"
body obj '{}'
body obj_x '{} x'
body obj_brace '{}}'
body obj_nul '{}\0'
body obj_nul_more '{}\0\1\2garbage'
body lead_garbage 'x {}'
body txs '{"txs_hashes":[]}'
body txs_x '{"txs_hashes":[]} x'
body txs_truncated '{"txs_hashes":['
epee_heights_body 1 >"$dir/heights"
{ cat "$dir/heights" && printf 'x'; } >"$dir/heights_x"
{ cat "$dir/heights" && printf '\0'; } >"$dir/heights_nul"
head -c 20 "$dir/heights" >"$dir/heights_truncated"
epee_blocks_body "$genesis" >"$dir/blocks"
{ cat "$dir/blocks" && printf '\0\0\0\0'; } >"$dir/blocks_nul"
head -c $((1100 * 1024)) /dev/zero | tr '\0' ' ' >"$dir/oversized"

# ask URL PATH BODY OUT: status and content type on one line, the body into OUT.
ask() {
	curl -sS --max-time 30 -o "$4" -w '%{http_code} %{content_type}' \
		-H 'Content-Type: application/json' --data-binary @"$dir/$3" "$1$2" 2>/dev/null ||
		echo "000 -"
}

# The body as compared: JSON canonical (keys sorted, compact), else its bytes in hex.
shown() {
	if [[ -s $1 ]] && jq -S -c . "$1" >/dev/null 2>&1; then
		jq -S -c . "$1"
	elif [[ -s $1 ]]; then
		# shellcheck disable=SC2016 # $1 is perl's
		echo "bytes $(wc -c <"$1") sha256 $(perl -0777 -pe 's/(\x0bdaemon_time\x05).{8}/$1\0\0\0\0\0\0\0\0/s' "$1" |
			sha256sum | cut -c1-16)"
	else
		echo "(empty)"
	fi
}

# same PATH BODY: node and gateway answer alike.
same() {
	local path=$1 b=$2 node gw
	node=$(ask "$NODE_URL" "$path" "$b" "$dir/node.out")
	gw=$(ask "$GW_URL/v1/$TOKEN" "$path" "$b" "$dir/gw.out")
	node+=" $(shown "$dir/node.out")"
	gw+=" $(shown "$dir/gw.out")"
	printf '# %s %-34s %-18s monerod: %.110s\n' "$NODE" "$path" "$b" "$node"
	assert_eq "node $NODE, $path, body $b: the gateway answers as monerod" "$node" "$gw"
}

body open_brace '{'
body rpc_cut '{"jsonrpc":"2.0","id":0,"method":"get_block_count",'

# table NODE: the whole table against that node, through a gateway over it alone.
table() {
	NODE=$1
	NODE_URL=$(nodes_url_of "$1")
	nodes_table "$1:primary"
	check_here "a gateway over $1 alone starts" gateway_start "bodies-$1" --base nodes || return 1
	for b in empty space garbage truncated rpc rpc_x rpc_brace rpc_nul obj obj_x obj_nul lead_garbage; do
		same /json_rpc "$b"
	done
	for b in empty space garbage truncated obj obj_x obj_brace obj_nul obj_nul_more lead_garbage; do
		same /get_height "$b"
	done
	for b in empty garbage txs txs_x obj_nul; do
		same /get_transactions "$b"
	done
	for b in empty garbage obj obj_x obj_nul; do
		same /get_transaction_pool_hashes.bin "$b"
	done
	for b in empty garbage obj heights heights_x heights_nul heights_truncated; do
		same /get_blocks_by_height.bin "$b"
	done
	for b in blocks blocks_nul; do
		same /get_blocks.bin "$b"
	done

	# The first difference: a JSON body cut short is refused, whatever monerod makes of it.
	for pb in /get_transactions:txs_truncated /get_height:open_brace; do
		path=${pb%%:*} b=${pb#*:}
		node=$(ask "$NODE_URL" "$path" "$b" "$dir/node.out")
		gw=$(ask "$GW_URL/v1/$TOKEN" "$path" "$b" "$dir/gw.out")
		echo "# $path, body $b: monerod $node $(shown "$dir/node.out")"
		assert_eq "node $NODE, $path, body $b (cut short): the gateway refuses it, 400 and no body" \
			"400 text/plain (empty)" "$gw $(shown "$dir/gw.out")"
	done
	node=$(ask "$NODE_URL" /json_rpc rpc_cut "$dir/node.out")
	gw=$(ask "$GW_URL/v1/$TOKEN" /json_rpc rpc_cut "$dir/gw.out")
	echo "# /json_rpc, body rpc_cut: monerod $node $(shown "$dir/node.out")"
	assert_eq "node $NODE, /json_rpc, body rpc_cut (cut short): -32700 from the gateway" \
		'200 application/json {"error":{"code":-32700,"message":"Parse error"},"id":0,"jsonrpc":"2.0"}' \
		"$gw $(shown "$dir/gw.out")"

	# The second difference, the gateway's own limit: 413 before the body is read, in the
	# shape of the endpoint's errors (a JSON-RPC error, {"status"}, a bare status without a
	# body or content type, as every .bin error of the gateway's own).
	local want
	for want in '/json_rpc|413 application/json {"error":{"code":-32600,"message":"request body too large"},"id":0,"jsonrpc":"2.0"}' \
		'/get_height|413 application/json {"status":"request body too large"}' \
		'/get_blocks.bin|413  (empty)'; do
		path=${want%%|*}
		rm -f "$dir/node.out" "$dir/gw.out"
		node=$(ask "$NODE_URL" "$path" oversized "$dir/node.out")
		gw=$(ask "$GW_URL/v1/$TOKEN" "$path" oversized "$dir/gw.out")
		echo "# $path, 1.1 MiB: monerod ${node:0:3} $(shown "$dir/node.out")"
		assert_eq "node $NODE, $path, a body over [server] max_body: 413 from the gateway, in the endpoint's shape" \
			"${want#*|}" "$gw $(shown "$dir/gw.out")"
	done
	gateway_stop "bodies-$1"
}

table a
table b
