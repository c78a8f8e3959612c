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
// and its program found on the server's PATH when the server starts; a
// PATH entry that is not absolute (empty, ".", a relative directory) is
// refused then (SearchPath), and commands are given the same PATH. The
// file's content (as UTF-8, without a byte order mark) is its stdin; a
// word holding {} has it replaced by the absolute path of a copy of the
// content, named as the file is (tools choose a language by the
// extension), in the run's private directory. A formatter's stdout is the
// formatted content. A check command's stdout and stderr are read
// together: lines FILE:LINE: MESSAGE and FILE:LINE:COLUMN: MESSAGE naming
// the file (by its path, its name, the copy's path, or as stdin: "-",
// "<stdin>", "<standard input>") are its findings; on a non-zero exit
// with no such line, the output is one finding without a line.
//
// # What a run may see and do
//
// Each run gets a new directory of its own under the system's temporary
// directory (never inside the workspace: the engine refuses one there;
// nor one where another user could move what the server makes: CheckDir).
// The server makes it, writable by itself alone, and in it the command's
// working directory (its HOME and TMPDIR), with the copy of the content;
// only then does a server running as root hand that working directory and
// the copy to the user the command runs as, and after that it writes
// nothing there: what that user plants (a link in place of the copy, say)
// is never followed by the server, and no one but the server can move or
// replace the directory. It is removed with everything in it when the run
// ends, whatever the command did to it. The command's environment holds
// HOME, TMPDIR and PATH, nothing else of the server's. On Unix the command
// leads a session, so a process group, of its own, with no controlling
// terminal; the whole group is killed when the command ends, runs past
// its time limit, or prints past its output limit, before its output is
// read to the end; a process that left the group (a session of its own)
// and still holds the output open a moment later makes the run untrusted.
// A server running as root runs commands as the user nobody, so that they
// have none of its privileges. The workspace's path is not given to a
// command, and the content it reads is a copy: the engine writes the
// edited file itself, from the formatter's stdout, and nothing a command
// writes anywhere reaches the workspace through the engine.
//
// What is not enforced: there is no sandbox. A command can read whatever
// its user can (as nobody, what everyone can; otherwise, what the server's
// user can, the workspace included) and write where that user may, and
// what it prints comes back to the agent: a tool that reads the files a
// content names (a compiler's #include) discloses them. A process that
// leaves the command's session is not killed. Run hashlined as a user of
// its own, in a container or under a sandbox such as bubblewrap (as the
// command's program) when the commands must not see more. Elsewhere than
// on Unix, a command runs as the server's user and only the command
// itself, not what it started, is killed.
package checkers
