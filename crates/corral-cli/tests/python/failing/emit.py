"""A test run as the real tool prints it, one failure among many, then exit 1.

argv[1]: `go` (`go test -v`), `jest` (`jest --verbose`) or `log` (a service's log of
argv[2] bytes, then a Python traceback). The failing test's block sits in the middle of
the output, where a head-and-tail window leaves it out.
"""

import sys


def go() -> None:
    for n in range(150):
        print(f"=== RUN   TestImportStatementMonth{n:03}")
        print(f"    import_test.go:{20 + n % 30}: parsed 1200 rows from testdata/march-{n:03}.csv")
        print(f"--- PASS: TestImportStatementMonth{n:03} (0.00s)")
    print("=== RUN   TestLedgerBalance")
    print("    ledger_test.go:14: ledger imbalance: expected 100, got 99")
    print("--- FAIL: TestLedgerBalance (0.00s)")
    for n in range(150):
        print(f"=== RUN   TestCloseLedgerPeriod{n:03}")
        print(f"    close_test.go:{30 + n % 20}: closed period {n:03} with 0 open entries")
        print(f"--- PASS: TestCloseLedgerPeriod{n:03} (0.00s)")
    print("FAIL")
    print("FAIL\texample.com/ledger\t0.412s")
    print("FAIL")


def jest() -> None:
    for n in range(150):
        print(f"PASS src/import/month-{n:03}.test.js")
        print("  import")
        print(f"    ✓ loads the statement for month {n:03} ({n % 7 + 1} ms)")
        print(f"    ✓ keeps every row of month {n:03} ({n % 5 + 1} ms)")
        print()
    print("FAIL src/ledger.test.js")
    print("  ledger")
    print("    ✓ loads march (3 ms)")
    print("    ✕ balances (5 ms)")
    print()
    print("  ● ledger › balances")
    print()
    print("    expect(received).toBe(expected) // Object.is equality")
    print()
    print("    Expected: 100")
    print("    Received: 99")
    print()
    print("      11 |   const ledger = load(\"march\");")
    print("      12 |")
    print("    > 13 |   expect(ledger.balance()).toBe(100);")
    print("         |                            ^")
    print("      14 | });")
    print()
    print("      at Object.toBe (src/ledger.test.js:13:28)")
    print()
    for n in range(150):
        print(f"PASS src/close/period-{n:03}.test.js")
        print("  close")
        print(f"    ✓ closes period {n:03} ({n % 7 + 1} ms)")
        print()
    print("Test Suites: 1 failed, 300 passed, 301 total")
    print("Tests:       1 failed, 751 passed, 752 total")
    print("Snapshots:   0 total")
    print("Time:        4.812 s")
    print("Ran all test suites.")


def log(size: int) -> None:
    line = "2026-12-05T05:40:00.000Z INFO ledger: posted entry to account receivable, batch ok\n"
    written = 0
    n = 0
    while written < size:
        text = f"{n:08} {line}"
        sys.stdout.write(text)
        written += len(text)
        n += 1
    sys.stdout.flush()

    def post(entries):
        return balance(entries)

    def balance(entries):
        total = sum(entries)
        if total != 100:
            raise ValueError(f"ledger imbalance: expected 100, got {total}")
        return total

    post([50, 49])


if __name__ == "__main__":
    {"go": go, "jest": jest}.get(sys.argv[1], lambda: log(int(sys.argv[2])))()
    sys.exit(1)
