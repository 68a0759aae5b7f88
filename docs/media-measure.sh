#!/bin/bash
# usage: measure.sh SRC N PRESET CRF
src=$1; N=${2:-60}; preset=${3:-ultrafast}; crf=${4:-20}
t() { /usr/bin/time -f "%U %S %e" "$@" 2>&1 >/dev/null | tail -1; }
dec=$( { /usr/bin/time -f "%U %S %e" ffmpeg -nostdin -v error -i "$src" -map 0:v:0 -f null - ; } 2>&1 | tail -1)
out=/tmp/m/out_$$; rm -rf $out; mkdir -p $out
enc=$( { /usr/bin/time -f "%U %S %e" ffmpeg -nostdin -v error -i "$src" -map 0:v:0 -an -sn -dn -fps_mode passthrough \
  -vf "scale=trunc(iw*sar/2)*2:trunc(ih/2)*2,setsar=1,format=yuv420p" \
  -c:v libx264 -preset $preset -crf $crf -g $N -keyint_min $N -sc_threshold 0 -bf 0 -force_key_frames "expr:eq(mod(n,$N),0)" \
  -f segment -segment_frames $(seq -s, $N $N 200000 | head -c 20000 | sed 's/,[0-9]*$//') -reset_timestamps 1 -segment_format mp4 $out/c%06d.mp4 ; } 2>&1 | tail -1)
srcb=$(stat -c %s "$src"); outb=$(du -cb $out/*.mp4 | tail -1 | cut -f1); nch=$(ls $out | wc -l)
echo "src=$(basename $src) N=$N preset=$preset crf=$crf decode(u s e)=[$dec] transcode(u s e)=[$enc] srcB=$srcb chunksB=$outb ratio=$(echo "scale=2;$outb/$srcb"|bc) chunks=$nch"
