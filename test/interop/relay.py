# relay.py: the API process of an ExaBGP peer of test/interop (exabgp.go starts it through the
# peer's config). It passes every line written to the named pipe argv[1] on to ExaBGP (commands:
# announce, withdraw) and appends every line ExaBGP writes to it (JSON messages, command acks) to
# the file argv[2], which the test reads.
import os
import sys
import threading

fifo, out = sys.argv[1], sys.argv[2]


def forward():
    # Opened for reading and writing: it never sees end-of-file when a writer closes.
    with os.fdopen(os.open(fifo, os.O_RDWR), 'r') as commands:
        for line in commands:
            sys.stdout.write(line)
            sys.stdout.flush()


threading.Thread(target=forward, daemon=True).start()
with open(out, 'a', buffering=1) as received:
    for line in sys.stdin:
        received.write(line)
