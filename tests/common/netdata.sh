# Shared by the CLI test scripts that run networks (sourced, run from the
# repository root): the pass/fail counters, deterministic input bytes, and
# the SQNR of an INT8 output against the float executor's (an independent
# reference).
#   pass / fail WHY     count a check (fail prints WHY)
#   bytes N SEED        N bytes from SHA-256 chained on SEED, to stdout
#   sqnr_ok Q F [DB]    prints the SQNR of raw float32 file Q against F;
#                       exit 0 when it is at least DB (default 20)
passed=0; failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }

bytes() {
    /usr/bin/python3 -c 'import hashlib, sys
n, h, b = int(sys.argv[1]), sys.argv[2].encode(), bytearray()
while len(b) < n:
    h = hashlib.sha256(h).digest(); b += h
sys.stdout.buffer.write(bytes(b[:n]))' "$1" "$2"
}

sqnr_ok() {
    /usr/bin/python3 -c 'import sys, numpy as np
q, f = np.fromfile(sys.argv[1], np.float32), np.fromfile(sys.argv[2], np.float32)
if q.size == 0 or q.size != f.size:
    print("sizes %d and %d" % (q.size, f.size)); sys.exit(1)
db = 10 * np.log10(np.sum(f.astype(np.float64) ** 2) / max(np.sum((q - f).astype(np.float64) ** 2), 1e-30))
print("%.1f dB" % db); sys.exit(0 if db >= float(sys.argv[3]) else 1)' "$1" "$2" "${3:-20}"
}
