# shellcheck shell=bash
# monerod .bin request bodies (epee portable storage) for the tests and benchmarks.
#
#   epee_u64 N                  N as 8 little-endian bytes, in printf %b escapes
#   epee_heights_body HEIGHT    a get_blocks_by_height.bin body asking for HEIGHT (stdout)
#   epee_outs_body INDEX        a get_outs.bin body asking for the RingCT output INDEX
#   epee_blocks_body HASH       a get_blocks.bin body as a wallet sends it (prune=true) whose
#                               known chain is the one block HASH (64 hex digits)

EPEE_HEADER='\x01\x11\x01\x01\x01\x01\x02\x01\x01'

epee_u64() {
	local i out=''
	for ((i = 0; i < 8; i++)); do out+=$(printf '\\x%02x' $((($1 >> (8 * i)) & 255))); done
	echo "$out"
}

epee_heights_body() {
	printf '%b' "$EPEE_HEADER\x04\x07heights\x85\x04$(epee_u64 "$1")"
}

epee_outs_body() {
	printf '%b' "$EPEE_HEADER\x04\x07outputs\x8c\x04\x08\x06amount\x05$(epee_u64 0)\x05index\x05$(epee_u64 "$1")"
}

epee_blocks_body() {
	printf '%b' "$EPEE_HEADER\\x08\\x09block_ids\\x0a\\x81\\x00$(sed 's/../\\x&/g' <<<"$1")\\x05prune\\x0b\\x01"
}
