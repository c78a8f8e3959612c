package main

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"
)

// contender is one way of doing an operation.
type contender struct {
	name string
	op   func() error
	// prep, if set, runs before every call of op, untimed (a read's file
	// changed, so that no server answers from what it kept of it).
	prep func() error
}

// call runs c's prep, then times op.
func (c contender) call() (time.Duration, error) {
	if c.prep != nil {
		if err := c.prep(); err != nil {
			return 0, fmt.Errorf("%s: preparing: %w", c.name, err)
		}
	}
	t0 := time.Now()
	if err := c.op(); err != nil {
		return 0, fmt.Errorf("%s: %w", c.name, err)
	}
	return time.Since(t0), nil
}

// samples holds each contender's timings, in contender order.
type samples [][]time.Duration

// interleave times the contenders alternately: every round runs each once,
// in a new random order, so that a burst of load from elsewhere on the
// machine hits all of them alike, and so that no contender always follows
// the same one (whatever a call leaves behind, a server's garbage
// collection or a background close, lands in whichever call comes next;
// rotating the start of a fixed cycle would keep the same neighbours). It
// runs at least minRounds and then stops at maxRounds or when budget is
// spent.
func interleave(cs []contender, budget time.Duration, minRounds, maxRounds int) (samples, error) {
	return interleaveSettled(cs, budget, minRounds, maxRounds, 0)
}

// interleaveSettled is interleave with a pause of settle after every call,
// not timed and not counted against the budget, so that the work a call
// leaves running in the background (a floor's background close, the Go
// runtime's collector) is done before
// the next call starts, as it is between an agent's calls, which come
// seconds apart. Without it that work lands in whichever call comes next,
// and makes the contenders look alike.
func interleaveSettled(cs []contender, budget time.Duration, minRounds, maxRounds int, settle time.Duration) (samples, error) {
	for _, c := range cs { // warm up: caches, connections, JIT
		for range 3 {
			if _, err := c.call(); err != nil {
				return nil, err
			}
		}
	}
	out := make(samples, len(cs))
	// A fixed seed: the same orders in every run of the bench.
	order := rand.New(rand.NewPCG(1, 2))
	var spent time.Duration
	for r := 0; r < maxRounds && (r < minRounds || spent < budget); r++ {
		for _, i := range order.Perm(len(cs)) {
			d, err := cs[i].call()
			if err != nil {
				return nil, err
			}
			out[i] = append(out[i], d)
			spent += d
			if settle > 0 {
				time.Sleep(settle)
			}
		}
	}
	return out, nil
}

// ms formats a duration in milliseconds with sensible precision.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}

// ratio formats a/b as "1.23x".
func ratio(a, b time.Duration) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}

// processCPU is the CPU time this process has used, all its threads,
// user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rotate times the contenders in rounds of one call each, the order
// rotating (round r starts with contender r mod n), so that every
// contender follows every other as often; each call is followed by a
// pause of settle, untimed, for what it left running in the background
// to finish (a contender's prep runs before its call, untimed and
// uncounted). It returns each call's wall time and the CPU time the
// process used from the call's start to the end of its pause: the
// call's own and what it left to do in the background. A round's
// calls are paired: compare them round by round (stats.Ratios). It
// runs at least minRounds, then stops at maxRounds or once the timed
// calls have taken budget.
func rotate(cs []contender, budget time.Duration, minRounds, maxRounds int, settle time.Duration) (wall, cpu samples, err error) {
	for _, c := range cs { // warm up
		for range 3 {
			if _, err := c.call(); err != nil {
				return nil, nil, err
			}
			time.Sleep(settle)
		}
	}
	wall, cpu = make(samples, len(cs)), make(samples, len(cs))
	var spent time.Duration
	for r := 0; r < maxRounds && (r < minRounds || spent < budget); r++ {
		for k := range cs {
			c := cs[(r+k)%len(cs)]
			i := (r + k) % len(cs)
			if c.prep != nil {
				if err := c.prep(); err != nil {
					return nil, nil, fmt.Errorf("%s: preparing: %w", c.name, err)
				}
			}
			c0, t0 := processCPU(), time.Now()
			if err := c.op(); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", c.name, err)
			}
			d := time.Since(t0)
			time.Sleep(settle)
			wall[i] = append(wall[i], d)
			cpu[i] = append(cpu[i], processCPU()-c0)
			spent += d
		}
	}
	return wall, cpu, nil
}
