"""The Python side of bench-python: reads commands from stdin, one per line
("N" = make N Read calls), and answers each with the N call times in
nanoseconds on one line. The client is hashline_client from the checkout
(PYTHONPATH), connected to the address given as argv[1]."""
import sys
import time

from hashline_client import Client


def main() -> None:
    addr, path, limit, omit = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
    c = Client(addr, agent="bench")
    want = int(sys.argv[5])
    for line in sys.stdin:
        n = int(line)
        out = []
        for _ in range(n):
            # The previous reply is freed here, untimed, as the Go
            # client's garbage is collected off the caller's path.
            r = None
            t = time.perf_counter_ns()
            r = c.read(path, limit=limit, omit_lines=omit)
            out.append(time.perf_counter_ns() - t)
            got = len(r.text.split("\n")) if omit else len(r.lines)
            if got != want:
                sys.exit("read %d lines, want %d" % (got, want))
        print(" ".join(map(str, out)), flush=True)


main()
