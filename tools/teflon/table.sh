#!/bin/sh
# The sweep's table from lines "FAMILY CLASS" on stdin (tools/teflon/sweep.sh):
# op family, cases, within 1, within 2 (cumulative), beyond, refused, DMA fault.
awk 'NF == 2 {
    f = $1; n[f]++
    if ($2 == "within1") w1[f]++
    else if ($2 == "within2") w2[f]++
    else if ($2 == "beyond") b[f]++
    else if ($2 == "dma-error") d[f]++
    else r[f]++
    if (!(f in seen)) { seen[f] = 1; order[++k] = f }
} END {
    print "| op family | cases | within 1 | within 2 | beyond | refused | DMA fault |"
    print "| --- | --- | --- | --- | --- | --- | --- |"
    for (i = 1; i <= k; i++) { f = order[i]
        printf "| %s | %d | %d | %d | %d | %d | %d |\n", f, n[f], w1[f] + 0, w1[f] + w2[f], b[f] + 0, r[f] + 0, d[f] + 0 }
}'
