package grep

import (
	"container/heap"
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// The walk is parallel and has no walker of its own: listing a directory is
// a task like searching a file, done by whichever worker is free, so that
// no single walker goroutine can leave the workers dry while the scheduler
// (Go's, or the kernel's on a busy machine) keeps it waiting.
//
// Tasks wait in a queue ordered by path, so they are done in about the order
// they are emitted in: a directory's entries sort right after it and before
// its later siblings, which is depth-first order. The goroutine that calls
// emit walks the tree in exact order as tasks finish; when the next task has
// not been started it does it itself rather than wait, so it never waits for
// a task the workers cannot take. Workers take a slot of a fixed window for
// each task and the emitting goroutine gives it back when it has passed the
// task, which bounds how far the workers run ahead of a slow emit.

// defaultWindow bounds the tasks taken by workers that the emitting
// goroutine has not passed yet (Options.window, which tests set lower).
const defaultWindow = 1024

// Task states.
const (
	queued int32 = iota
	claimed
)

// item is a task: a directory to list or a file to search.
type item struct {
	// key is the path, with "/" after a directory's; keys sort in walk
	// order (see compareEntries).
	key   string
	path  string
	name  string
	isDir bool
	// link is set for a symbolic link (to a file).
	link bool
	// parent is the open directory the entry is in, on the fast path,
	// retained until the task has run or is dropped.
	parent *dir
	// self is the directory itself, already open (the root only).
	self *dir
	root bool

	// Directories: the path's components, the ignore patterns in force
	// inside it, and after listing, its entries in walk order.
	parts    []string
	pats     []gitignore.Pattern
	children []*item
	err      error

	// Files: what the search found.
	res result

	state atomic.Int32
	// finished is set when the task has run; token when a worker took a
	// window slot for it.
	finished atomic.Bool
	token    bool
}

// queue holds the tasks not started yet, by key, and the window.
type queue struct {
	mu     sync.Mutex
	work   sync.Cond // a task or a slot became available, or closed
	passed sync.Cond // waiting (the emitter's task) finished, or cancelled
	tasks  itemHeap
	slots  int
	closed bool
	// waiting is the task the emitting goroutine waits for.
	waiting atomic.Pointer[item]
}

func newQueue(window int) *queue {
	q := &queue{slots: window}
	q.work.L, q.passed.L = &q.mu, &q.mu
	return q
}

// push queues tasks; after close it drops them.
func (q *queue) push(items []*item) {
	if len(items) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		for _, it := range items {
			it.drop()
		}
		return
	}
	for _, it := range items {
		heap.Push(&q.tasks, it)
	}
	q.work.Broadcast()
}

// take returns the first queued task and claims it and a slot for it,
// waiting for both; nil once the queue is closed. It calls idle before it
// waits for a slot.
func (q *queue) take(idle func()) *item {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed {
		for q.slots > 0 && len(q.tasks) > 0 {
			it := heap.Pop(&q.tasks).(*item)
			if it.state.CompareAndSwap(queued, claimed) {
				q.slots--
				it.token = true
				return it
			}
			// Claimed by the emitting goroutine meanwhile.
		}
		if idle != nil && q.slots == 0 {
			// The window is full: the emitting goroutine is behind, maybe
			// for as long as its caller does not take results.
			idle()
			idle = nil
		}
		q.work.Wait()
	}
	return nil
}

// pass gives back the slot of a task the emitting goroutine has passed.
func (q *queue) pass(it *item) {
	if !it.token {
		return
	}
	q.mu.Lock()
	q.slots++
	q.work.Signal()
	q.mu.Unlock()
}

// finish marks a task done and wakes the emitting goroutine if it waits
// for it. Setting finished before loading waiting, while wait stores waiting
// before loading finished, means one of the two sees the other.
func (q *queue) finish(it *item) {
	it.finished.Store(true)
	if q.waiting.Load() == it {
		q.mu.Lock()
		q.passed.Broadcast()
		q.mu.Unlock()
	}
}

// wait waits until a task claimed by a worker has finished, or ctx is done.
func (q *queue) wait(ctx context.Context, it *item) error {
	q.waiting.Store(it)
	defer q.waiting.Store(nil)
	q.mu.Lock()
	defer q.mu.Unlock()
	for !it.finished.Load() && ctx.Err() == nil {
		q.passed.Wait()
	}
	return ctx.Err()
}

// wake wakes the emitting goroutine (ctx is done).
func (q *queue) wake() {
	q.mu.Lock()
	q.passed.Broadcast()
	q.mu.Unlock()
}

// close stops the workers and drops the tasks not started.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for _, it := range q.tasks {
		if it.state.CompareAndSwap(queued, claimed) {
			it.drop()
		}
	}
	q.tasks = nil
	q.work.Broadcast()
}

// drop lets go of what a task that will not run holds.
func (it *item) drop() {
	it.parent.release()
	it.self.release()
}

type itemHeap []*item

func (h itemHeap) Len() int           { return len(h) }
func (h itemHeap) Less(i, j int) bool { return h[i].key < h[j].key }
func (h itemHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)        { *h = append(*h, x.(*item)) }
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}

// tree searches the directory start.
func (s *search) tree(ctx context.Context, w *walker, start string) error {
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	d, err := s.src.openDir(start)
	if err != nil {
		return err
	}
	var parts []string
	if start != "." {
		parts = strings.Split(start, "/")
	}
	root := &item{path: start, isDir: true, self: d, parts: parts, root: true}
	root.pats, s.redo.bufs.ignore = w.rootPatterns(start, s.redo.bufs.ignore)
	s.w = w
	s.q = newQueue(s.opts.window)
	stop := context.AfterFunc(ictx, s.q.wake)
	defer stop()
	var wg sync.WaitGroup
	for range s.opts.Workers {
		wg.Go(func() {
			wk := s.newWorker()
			defer wk.close()
			for {
				it := s.q.take(wk.close)
				if it == nil {
					return
				}
				wk.do(ictx, it)
				s.q.finish(it)
			}
		})
	}
	err = s.visit(ctx, root)
	if err == nil {
		err = ctx.Err()
	}
	cancel()
	s.q.close()
	wg.Wait()
	return err
}

// visit emits the results of the task it and, for a directory, of
// everything in it, in order. Only the start directory's listing error is
// returned; deeper ones skip the directory, as unreadable files are skipped.
func (s *search) visit(ctx context.Context, it *item) error {
	if it.state.CompareAndSwap(queued, claimed) {
		s.redo.do(ctx, it)
		it.finished.Store(true)
	} else if err := s.q.wait(ctx, it); err != nil {
		return err
	}
	s.q.pass(it)
	if err := ctx.Err(); err != nil {
		// The account's close gives back only what is still ahead; this
		// task's File, the emitting goroutine's own or passed, goes here.
		s.acct.pass(it)
		it.res.file.Release()
		return err
	}
	if it.isDir {
		if it.err != nil && it.root {
			return it.err
		}
		for _, c := range it.children {
			if err := s.visit(ctx, c); err != nil || s.done {
				return err
			}
		}
		it.children = nil
		return nil
	}
	if it.res.file.hold != nil {
		s.acct.pass(it)
	}
	if r := &it.res; r.deferred && !s.probing.Load() {
		// Read it again, through the file system; it was counted as
		// scanned already.
		again := &item{name: it.name, path: it.path, link: it.link}
		s.redo.runFile(ctx, again)
		r.matched, r.file, r.ms = again.res.matched, again.res.file, again.res.ms
	}
	err := s.take(ctx, &it.res)
	// The task stays in its directory's list until the directory is done;
	// the File, given back or handed on, must not stay with it.
	it.res.file, it.res.ms = File{}, nil
	return err
}

// do runs a task.
func (wk *worker) do(ctx context.Context, it *item) {
	if it.isDir {
		wk.list(ctx, it)
	} else {
		wk.runFile(ctx, it)
	}
}

// list lists a directory and queues its entries.
func (wk *worker) list(ctx context.Context, it *item) {
	d := it.self
	if d == nil {
		var err error
		d, err = wk.s.src.subdir(it.parent, it.name, it.path)
		it.parent.release()
		if err != nil {
			it.err = err
			return
		}
	}
	defer d.release()
	if ctx.Err() != nil {
		return
	}
	it.children, it.err = wk.s.w.list(it, d, &wk.bufs)
	wk.s.q.push(it.children)
}
