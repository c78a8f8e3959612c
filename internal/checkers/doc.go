// Package checkers runs the operator's check and format commands on the
// content of one file: hashlined --check GLOB=COMMAND and --format
// GLOB=COMMAND. What a command's result does to an edit (its findings
// listed, its output written) is the engine's (internal/engine,
// checkers.go); how a command is run, and what it may see, is decided
// here.
//
// # Commands
//
// A command is the operator's, from the server's flags or configuration,
// never from a request. It is split into words without a shell (Split)
// and its program found on the server's PATH when the server starts. The
// file's content (as UTF-8, without a byte order mark) is its stdin; a
// word holding {} has it replaced by the path of a copy of the content,
// named as the file is (tools choose a language by the extension), in the
// run's private directory. A formatter's stdout is the formatted content.
// A check command's stdout and stderr are read together: lines
// FILE:LINE: MESSAGE and FILE:LINE:COLUMN: MESSAGE naming the file (by
// its path, its name, the copy's path, or as stdin: "-", "<stdin>",
// "<standard input>") are its findings; on a non-zero exit with no such
// line, the output is one finding without a line.
//
// # What a run may see and do
//
// Each run gets a new directory of its own under the system's temporary
// directory (never inside the workspace: the engine refuses one there),
// mode 0700, removed with everything in it when the run ends. It is the
// command's working directory, HOME and TMPDIR; its environment holds
// those and the server's PATH, nothing else of the server's. On Unix the
// command leads a process group of its own, and the whole group is killed
// when the run ends, runs past its time limit, or prints past its output
// limit; a server running as root runs it as the user nobody (and gives
// the directory to that user), so that it has none of the server's
// privileges. The workspace's path is not given to it, and the content
// it reads is a copy: the engine writes the edited file itself, from the
// formatter's stdout, and nothing a command writes anywhere reaches the
// workspace through the engine.
//
// What is not enforced: there is no sandbox. A command can read whatever
// its user can (as nobody, what everyone can; otherwise, what the server's
// user can, the workspace included) and write where that user may. Run
// hashlined as a user of its own, in a container or under a sandbox such
// as bubblewrap (as the command's program) when the commands must not see
// more. Elsewhere than on Unix, a command runs as the server's user and
// only the command itself, not what it started, is killed.
package checkers
