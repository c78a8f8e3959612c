package mcp

// repairsDescription is the part of edit_file's description about repairs
// (internal/hashline/repair.go): what a model sees fixed in its text, and
// what to do when an edit is refused as a guess.
const repairsDescription = `Unless strict: true, slips in text are repaired and listed under "Repaired": pasted LINE:HASH| prefixes, diff +/- markers, a first/last line repeating the line beside the range (or the anchor), lost indentation, literal \t indents. If a repair would be a guess, the edit is refused showing both readings: resend the one you mean, or set strict: true to write the text exactly as sent.`
