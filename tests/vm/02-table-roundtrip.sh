#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# "dmsetup table" prints a canonical line that recreates the same device.
. "$(dirname "$0")/lib/lib.sh"

brd_load 32 2 || skip_all "brd not available"
majmin=$(cat /sys/block/ram0/dev)

# given optional words | expected canonical words
cases=(
	"|"
	"preset:none|1 preset:none"
	"row_size:512|1 row_size:512"
	"row_size:65536 preset:none|2 preset:none row_size:65536"
	"preset:none row_size:4096|2 preset:none row_size:4096"
	"format randomize:9 domains:3 gap_interval:7|3 gap_interval:7 domains:3 randomize:9"
	"meta_device:/dev/ram1 gap_interval:0|2 gap_interval:0 meta_device:$(cat /sys/block/ram1/dev)"
	"rber:2.5e-7 ecc:bch preset:onyx|3 preset:onyx ecc:bch rber:2.5e-7"
)
for c in "${cases[@]}"; do
	words=${c%|*}
	want=${c#*|}
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	set -- $words
	wipe_meta /dev/ram0
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	len=$(pcm_len /dev/ram0 --offset 128 $words)
	if dmsetup create rt --table "0 $len pcm /dev/ram0 128${words:+ $# $words}"; then
		got=$(dmsetup table rt)
		expect_eq "table of '$words'" "$got" "0 $len pcm $majmin 128${want:+ $want}"
		# recreate from the printed line and compare again
		dmsetup create rt2 --table "$got" && t2=$(dmsetup table rt2) || t2="create failed"
		expect_eq "'$got' recreates itself" "$t2" "$got"
		dmsetup remove rt rt2 2>/dev/null || dmsetup remove rt
	else
		fail "create with '$words'"
	fi
done

# a reload with the printed line keeps the device identical
wipe_meta /dev/ram0
pcm_create rl /dev/ram0 row_size:8192
t1=$(dmsetup table rl)
dmsetup reload rl --table "$t1" && dmsetup resume rl
expect_eq "reload with the printed table" "$(dmsetup table rl)" "$t1"
expect_eq "config message reports every effective value" \
	"$(dmsetup message rl 0 config)" "preset:none row_size:8192 gap_interval:128 domains:1 randomize:0 channels:1 ranks:1 stripe:1 read_ns:0 write_ns:0 zero_write_ns:0 cmd_ns:0 read_mbps:0 write_mbps:0 host_mbps:0 tags:0 completion:late write_cache:0 ctrl_slots:0 xfer_slots:0 read_jitter_ns:0 read_retry_ns:0 read_retry_ppm:0 read_retries:0 write_jitter_ns:0 write_retry_ns:0 write_retry_ppm:0 write_retries:0 seed:0 overhead_ns:0 ecc:none ecc_codewords:6 ecc_t:4 meta_bytes:64 rber:0 wear:off endurance:100000000 dilation:1"
expect_eq "params message: the module's own description, as pcmctl params prints it" \
	"$(dmsetup message rl 0 params)" "$("$PCM_ROOT/tools/pcmctl" params)"
expect_eq "IMA measurement (dmsetup measure)" \
	"$(dmsetup measure rl | awk '{print $4}')" \
	"target_name=pcm,target_version=1.6.0,device_name=$majmin,start=0,preset=none,row_size=8192,gap_interval=128,domains=1,randomize=0,format=n,channels=1,ranks=1,stripe=1,read_ns=0,write_ns=0,zero_write_ns=0,cmd_ns=0,read_mbps=0,write_mbps=0,host_mbps=0,tags=0,completion=late,write_cache=0,ctrl_slots=0,xfer_slots=0,read_jitter_ns=0,read_retry_ns=0,read_retry_ppm=0,read_retries=0,write_jitter_ns=0,write_retry_ns=0,write_retry_ppm=0,write_retries=0,seed=0,overhead_ns=0,ecc=none,ecc_codewords=6,ecc_t=4,meta_bytes=64,rber=0,wear=off,endurance=100000000,dilation=1,ecc_workqueue=n;"
dmsetup remove rl

# each calibrated preset loads as the model that test-presets.py checks
for p in onyx pss psd reram iodrive; do
	wipe_meta /dev/ram0
	want=$("$PCM_ROOT/tools/pcmctl" model --ios 1 --json "preset:$p" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["config"])')
	if ! pcm_create pr /dev/ram0 "preset:$p"; then
		fail "preset:$p: create"
		continue
	fi
	expect_eq "preset:$p: config is the calibration pcmctl model runs" \
		"$(dmsetup message pr 0 config)" "$want"
	expect_eq "preset:$p: the timing model is on" "$(status_field pr timing)" on
	expect "preset:$p: 4 KiB reads and writes go through" dd if=/dev/mapper/pr \
		of=/dev/mapper/pr bs=4k count=64 iflag=direct oflag=direct conv=notrunc status=none
	dmsetup remove pr
done
finish
