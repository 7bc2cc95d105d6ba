#!/bin/bash
# The launches of bench/smpi/README.md, section "The front end under SMPI, broken down": BIN
# was build-smpi/bench/zcoll-bench built at 7ff6419 (q16-base-*) or 8f94ba0 (the others);
# PLAT=/tmp/fe held make_platform.py's 1x16, 2x16 and 4x16 platforms (sc-n*); outputs went to
# /tmp/fe and were copied here.
# usage: [PLAT=dir] [SMPI_EXTRA="--cfg=..."] run.sh BIN NODES ALGOS ITERS OP BYTES OUT [bench args]
cd /work/main
P=${PLAT:-bench/smpi/results-rpn16/logs/platforms}
BIN=$1; N=$2; ALGOS=$3; IT=$4; OP=$5; BYTES=$6; OUT=$7; shift 7
OMP_NUM_THREADS=1 smpirun -np $((N*16)) -platform $P/cluster_n${N}x16_E1.xml -hostfile $P/hosts_n${N}x16_E1.txt \
    --cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:ompi --cfg=smpi/test:1e-6 --cfg=smpi/bw-factor:0:1 \
    --cfg=smpi/lat-factor:0:1 $SMPI_EXTRA --log=root.thres:error $BIN coll \
    --op $OP --input ../shared/datasets/nyx_phigrav_128x128x128.f64 --eb-mode rel --eb 1e-4 --bytes $BYTES \
    --algo $ALGOS --threads 1 --iters $IT --warmup 0 --check-stride 64 --interleave --json "$@" > /tmp/fe/$OUT 2>/tmp/fe/$OUT.err
