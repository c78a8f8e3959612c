package daemon

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// catchHUP catches SIGHUP from now on, whatever the flags: its default
// action ends the process, and a service manager's reload (systemd's
// ExecReload) sends it to every hashlined, with or without a token file.
// Signals that come before handleHUP runs wait in the channel. Only Run,
// a program whose job is the engine, catches it: an engine embedded in
// another program (hashline mcp --embedded) leaves that program's signals
// alone, so a hang-up still ends it.
func catchHUP() (hup chan os.Signal, stop func()) {
	hup = make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	return hup, func() { signal.Stop(hup) }
}

// handleHUP answers each SIGHUP on hup (none when hup is nil) until the returned stop: it calls
// reload (the token file's), or, with nothing to reload, says so; either
// way the server serves on.
func handleHUP(hup <-chan os.Signal, logger *slog.Logger, reload func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-hup:
				if reload == nil {
					logger.Info("SIGHUP: nothing to reload (no --tokens file is set); serving on")
					continue
				}
				reload()
			}
		}
	}()
	return func() { close(done) }
}
