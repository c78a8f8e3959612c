package main

import (
	"strings"
	"testing"
	"time"
)

// A comparison timed in rounds is read round by round: its ratio is the
// median of the rounds' ratios (not the ratio of the medians), its CPU
// difference the median of the rounds' differences, and its row has a
// cell for each of the history table's columns, rendered as one line.
func TestPairedRowsFitTheHistoryTable(t *testing.T) {
	ms := time.Millisecond
	us := time.Microsecond
	wall := samples{
		{10 * ms, 2 * ms, 3 * ms, 4 * ms, 5 * ms},
		// Ratios 0.5, 2, 1, 1.25, 1.2: their median is 1.2, while the
		// medians' ratio is 4/4 = 1.
		{5 * ms, 4 * ms, 3 * ms, 5 * ms, 6 * ms},
	}
	cpu := samples{
		{100 * us, 200 * us, 300 * us, 400 * us, 500 * us},
		// Both p50s 300 µs; the differences' median +10 µs.
		{110 * us, 230 * us, 300 * us, 405 * us, 900 * us},
	}
	p := pairOf(wall, cpu)
	if p.ratio != 1.2 || p.without != 4*ms || p.with != 5*ms || p.cpuDiff != 10*us || p.rounds != 5 {
		t.Fatalf("pairOf = %+v; want ratio 1.2, p50s 4 ms and 5 ms, CPU difference +10 µs, 5 rounds", p)
	}
	if p.lo > p.ratio || p.hi < p.ratio {
		t.Errorf("the interval [%v, %v] does not hold the median %v", p.lo, p.hi, p.ratio)
	}
	row := p.row("Edit, 100 lines")
	if len(row) != len(historyCols) {
		t.Fatalf("a row of %d cells for %d columns: %q", len(row), len(historyCols), row)
	}
	if want := "1.200x (0.500 to 2.000)"; row[3] != want {
		t.Errorf("the ratio's cell %q, want %q", row[3], want)
	}
	if want := "0.30 ms, 0.30 ms (+10 µs)"; row[4] != want {
		t.Errorf("the CPU's cell %q, want %q", row[4], want)
	}
	r := newReport()
	r.add(&table{title: "History", about: "a", cols: historyCols, rows: [][]string{row}})
	md := r.markdown()
	line := "| " + strings.Join(row, " | ") + " |\n"
	if !strings.Contains(md, line) || strings.Count(line, "|") != len(historyCols)+1 {
		t.Errorf("the row is not one line of the table:\n%s", md)
	}
}
