package hashline

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// A repairCase is one edit batch as a careless model sends it. Every case
// is run twice: as is, where the text is repaired (want, kinds) or the
// edit refused (refuse), and with Strict, where the text is applied
// exactly as sent (asSent) — what PlanEdits did before repairs existed.
type repairCase struct {
	name  string
	in    string
	edits []Edit
	// want is the new file; kinds are the repairs made, in order, and
	// lines their Repair.Line (optional).
	want  string
	kinds []RepairKind
	lines []int
	// refuse lists substrings of the INVALID_EDIT message of a refused
	// edit; want and kinds are then unused.
	refuse []string
	// asSent is the new file with Strict.
	asSent string
}

func runRepairCases(t *testing.T, cases []repairCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			d := ParseDocument([]byte(tt.in))
			h := Hasher{}
			edits := resolveEdits(d, h, tt.edits)
			res, err := ApplyEdits(d, edits, ApplyOptions{Hasher: h, Context: 1})
			if tt.refuse != nil {
				checkRefusal(t, d, err, tt.refuse)
			} else {
				if err != nil {
					t.Fatalf("ApplyEdits: %v", err)
				}
				if got := string(res.Doc.Bytes()); got != tt.want {
					t.Errorf("new file = %q, want %q", got, tt.want)
				}
				checkDiff(t, d.Text(), res.Doc.Text(), res.Diff)
				checkRepairs(t, res, tt.kinds, tt.lines)
			}
			t.Run("and with strict the text is applied as sent", func(t *testing.T) {
				res, err := applyStrict(d, edits, ApplyOptions{Hasher: h, Context: 1})
				if err != nil {
					t.Fatalf("ApplyEdits with Strict: %v", err)
				}
				if got := string(res.Doc.Bytes()); got != tt.asSent {
					t.Errorf("new file = %q, want %q", got, tt.asSent)
				}
				if len(res.Repairs) > 0 {
					t.Errorf("Strict made repairs: %v", res.Repairs)
				}
			})
		})
	}
}

// applyStrict is ApplyEdits without repairs.
func applyStrict(d *Document, edits []Edit, opts ApplyOptions) (*Result, error) {
	return ApplyEdits(d, edits, opts, Strict(true))
}

// checkRepairs checks the kinds and lines of res's repairs, and that each
// has its sentence among the warnings.
func checkRepairs(t *testing.T, res *Result, kinds []RepairKind, lines []int) {
	t.Helper()
	var got []RepairKind
	for _, r := range res.Repairs {
		got = append(got, r.Kind)
		if !slices.Contains(res.Warnings, r.Warning()) {
			t.Errorf("repair %+v has no warning; warnings: %q", r, res.Warnings)
		}
		if r.Detail == "" || !slices.Contains(RepairKinds, r.Kind) {
			t.Errorf("repair %+v has no detail or an undeclared kind", r)
		}
	}
	if !slices.Equal(got, kinds) {
		t.Errorf("repairs = %v, want kinds %v", res.Repairs, kinds)
	}
	for k, l := range lines {
		if k < len(res.Repairs) && res.Repairs[k].Line != l {
			t.Errorf("repair %d is on line %d, want %d", k, res.Repairs[k].Line, l)
		}
	}
}

// checkRefusal checks that err refuses the text of an edit with
// INVALID_EDIT, shows both readings with the lines around the range, and
// mentions what the case expects.
func checkRefusal(t *testing.T, d *Document, err error, mention []string) {
	t.Helper()
	var be *BatchError
	if !errors.As(err, &be) {
		t.Fatalf("error = %v, want a refusal", err)
	}
	if be.Reason() != ReasonInvalidEdit || len(be.Problems) != 1 || be.Problems[0].Field != "text" || !be.Problems[0].ShowsTags {
		t.Fatalf("problems = %+v, want one INVALID_EDIT of the text that shows tags", be.Problems)
	}
	msg := be.Error()
	if strings.Count(msg, "\n    +") < 2 || !strings.Contains(msg, "strict") {
		t.Errorf("refusal does not show both readings' lines and strict:\n%s", msg)
	}
	for _, m := range mention {
		if !strings.Contains(msg, m) {
			t.Errorf("refusal does not mention %q:\n%s", m, msg)
		}
	}
}

// goSrc is a tab-indented Go file; its lines are numbered in the comments
// of the cases below.
//
//	1 package main
//	2
//	3 func f(x bool) int {
//	4 	if x {
//	5 		a()
//	6 	}
//	7 	return 1
//	8 }
const goSrc = "package main\n\nfunc f(x bool) int {\n\tif x {\n\t\ta()\n\t}\n\treturn 1\n}\n"

func TestRepairPrefixes(t *testing.T) {
	runRepairCases(t, []repairCase{
		{name: "pasted read output is stripped", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", Text: "5:aa|\t\tb()\n6:bb|\t\tc()"}},
			want:  strings.Replace(goSrc, "\t\ta()", "\t\tb()\n\t\tc()", 1), kinds: []RepairKind{RepairPrefixStripped}, lines: []int{5},
			asSent: strings.Replace(goSrc, "\t\ta()", "5:aa|\t\tb()\n6:bb|\t\tc()", 1)},
		{name: "a text with one untagged line is content", in: goSrc,
			edits:  []Edit{{Op: OpReplace, Start: "@5", Text: "\t\tb() // 5:aa|\n\t\tc()"}},
			want:   strings.Replace(goSrc, "\t\ta()", "\t\tb() // 5:aa|\n\t\tc()", 1),
			asSent: strings.Replace(goSrc, "\t\ta()", "\t\tb() // 5:aa|\n\t\tc()", 1)},
		{name: "replaceText's newText is stripped too", in: goSrc,
			edits: []Edit{{Op: OpReplaceText, OldText: "a()", NewText: "5:aa|b()"}},
			want:  strings.Replace(goSrc, "a()", "b()", 1), kinds: []RepairKind{RepairPrefixStripped}, lines: []int{0},
			asSent: strings.Replace(goSrc, "a()", "5:aa|b()", 1)},
	})
}

func TestRepairDiffMarkers(t *testing.T) {
	const list = "# List\n\n+ one\n+ two\n\nEnd\n"
	const diff = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n ctx\n-old\n+new\n"
	runRepairCases(t, []repairCase{
		{name: "plus on every line is stripped", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", Text: "+\t\tb()\n+\t\tc()\n"}},
			want:  strings.Replace(goSrc, "\t\ta()", "\t\tb()\n\t\tc()", 1), kinds: []RepairKind{RepairDiffMarkersStripped}, lines: []int{5},
			asSent: strings.Replace(goSrc, "\t\ta()", "+\t\tb()\n+\t\tc()", 1)},
		{name: "a minus line repeating the replaced line is dropped", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", Text: "-\t\ta()\n+\t\tb()"}},
			want:  strings.Replace(goSrc, "\t\ta()", "\t\tb()", 1), kinds: []RepairKind{RepairDiffMarkersStripped},
			asSent: strings.Replace(goSrc, "\t\ta()", "-\t\ta()\n+\t\tb()", 1)},
		{name: "blank lines of a marked text stay blank", in: goSrc,
			edits: []Edit{{Op: OpInsertAfter, Start: "@7", Text: "+\t// a\n\n+\t// b"}},
			want:  strings.Replace(goSrc, "\treturn 1\n", "\treturn 1\n\t// a\n\n\t// b\n", 1), kinds: []RepairKind{RepairDiffMarkersStripped}, lines: []int{7},
			asSent: strings.Replace(goSrc, "\treturn 1\n", "\treturn 1\n+\t// a\n\n+\t// b\n", 1)},
		{name: "a lone plus is an empty line", in: "a\nb\n",
			edits: []Edit{{Op: OpAppend, Text: "+c\n+\n+d"}},
			want:  "a\nb\nc\n\nd\n", kinds: []RepairKind{RepairDiffMarkersStripped}, lines: []int{0},
			asSent: "a\nb\n+c\n+\n+d\n"},
		{name: "one plus line followed by the file's indentation is stripped", in: goSrc,
			edits: []Edit{{Op: OpInsertBefore, Start: "@7", Text: "+\tlog()"}},
			want:  strings.Replace(goSrc, "\treturn 1", "\tlog()\n\treturn 1", 1), kinds: []RepairKind{RepairDiffMarkersStripped}, lines: []int{7},
			asSent: strings.Replace(goSrc, "\treturn 1", "+\tlog()\n\treturn 1", 1)},
		{name: "one plus line without indentation is a guess", in: "# Contacts\n\nBob\n",
			edits:  []Edit{{Op: OpAppend, Text: "+1 555 0100"}},
			refuse: []string{`the text is one line starting with "+"`, "as sent:", "with the marker stripped:", "    ++1 555 0100", "    +1 555 0100", "     3:"},
			asSent: "# Contacts\n\nBob\n+1 555 0100\n"},
		{name: "a text where some line has no marker is content", in: goSrc,
			edits:  []Edit{{Op: OpReplace, Start: "@5", Text: "+\t\tb()\n\t\tc()"}},
			want:   strings.Replace(goSrc, "\t\ta()", "+\t\tb()\n\t\tc()", 1),
			asSent: strings.Replace(goSrc, "\t\ta()", "+\t\tb()\n\t\tc()", 1)},
		{name: "plus bullets next to a list are content", in: list,
			edits:  []Edit{{Op: OpReplace, Start: "@3", End: "@4", Text: "+ one\n+ two\n+ three"}},
			want:   "# List\n\n+ one\n+ two\n+ three\n\nEnd\n",
			asSent: "# List\n\n+ one\n+ two\n+ three\n\nEnd\n"},
		{name: "a plus bullet inserted after a list item is content", in: list,
			edits:  []Edit{{Op: OpInsertAfter, Start: "@4", Text: "+ three"}},
			want:   "# List\n\n+ one\n+ two\n+ three\n\nEnd\n",
			asSent: "# List\n\n+ one\n+ two\n+ three\n\nEnd\n"},
		{name: "a hunk with context lines in a diff file is content", in: diff,
			edits:  []Edit{{Op: OpReplace, Start: "@4", End: "@6", Text: " ctx\n-old\n+newer"}},
			want:   "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n ctx\n-old\n+newer\n",
			asSent: "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n ctx\n-old\n+newer\n"},
		{name: "plus lines next to plus lines of a diff file are content", in: diff,
			edits:  []Edit{{Op: OpInsertAfter, Start: "@6", Text: "+more"}},
			want:   diff + "+more\n",
			asSent: diff + "+more\n"},
		{name: "plus lines in a file with plus lines elsewhere are a guess", in: "+ x\n\n\n\ny\nz\n",
			edits:  []Edit{{Op: OpReplace, Start: "@6", Text: "+ w"}},
			refuse: []string{`this file has lines that start with "+"`, "as sent:", "with the markers stripped:", "    ++ w", "    + w", "5:"},
			asSent: "+ x\n\n\n\ny\n+ w\n"},
		{name: "leading minus lines repeating the replaced lines are dropped before bare new lines", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", Text: "-\t\ta()\n\t\tb()"}},
			want:  strings.Replace(goSrc, "\t\ta()", "\t\tb()", 1), kinds: []RepairKind{RepairDiffMarkersStripped}, lines: []int{5},
			asSent: strings.Replace(goSrc, "\t\ta()", "-\t\ta()\n\t\tb()", 1)},
		{name: "a leading minus line without the replaced line's indentation is dropped too", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", Text: "-a()\n\t\tb()"}},
			want:  strings.Replace(goSrc, "\t\ta()", "\t\tb()", 1), kinds: []RepairKind{RepairDiffMarkersStripped},
			asSent: strings.Replace(goSrc, "\t\ta()", "-a()\n\t\tb()", 1)},
		{name: "a dash list made of the replaced line is content", in: "# L\n\nitem\nEnd\n",
			edits:  []Edit{{Op: OpReplace, Start: "@3", Text: "- item\n- other"}},
			want:   "# L\n\n- item\n- other\nEnd\n",
			asSent: "# L\n\n- item\n- other\nEnd\n"},
		{name: "minus lines followed by minus lines only are a list, not a diff", in: "# L\n\nitem\nEnd\n",
			edits:  []Edit{{Op: OpReplace, Start: "@3", Text: "-item\n-other"}},
			want:   "# L\n\n-item\n-other\nEnd\n",
			asSent: "# L\n\n-item\n-other\nEnd\n"},
		{name: "one plus line at column 0 whose rest is the replaced line changed is stripped", in: goConst,
			edits: []Edit{{Op: OpReplace, Start: "@3", Text: "+const n = 33"}},
			want:  strings.Replace(goConst, "const n = 32", "const n = 33", 1), kinds: []RepairKind{RepairDiffMarkersStripped}, lines: []int{3},
			asSent: strings.Replace(goConst, "const n = 32", "+const n = 33", 1)},
		{name: "one plus line replacing the first of several lines is stripped", in: goConst,
			edits: []Edit{{Op: OpReplace, Start: "@3", End: "@4", Text: "+const n = 33"}},
			want:  strings.Replace(goConst, "const n = 32\n\n", "const n = 33\n", 1), kinds: []RepairKind{RepairDiffMarkersStripped},
			asSent: strings.Replace(goConst, "const n = 32\n\n", "+const n = 33\n", 1)},
		{name: "one plus line whose rest starts with the replaced line's closing bracket is stripped", in: "type T = {\n  a: 1;\n}[K];\n",
			edits: []Edit{{Op: OpReplace, Start: "@3", Text: "+}[L];"}},
			want:  "type T = {\n  a: 1;\n}[L];\n", kinds: []RepairKind{RepairDiffMarkersStripped},
			asSent: "type T = {\n  a: 1;\n+}[L];\n"},
		{name: "a plus line before an opening bracket is a guess", in: "# Phones\n\n(44) 20 7946 0000\n",
			edits:  []Edit{{Op: OpReplace, Start: "@3", Text: "+(44) 20 7946 0001"}},
			refuse: []string{`the text is one line starting with "+"`},
			asSent: "# Phones\n\n+(44) 20 7946 0001\n"},
		{name: "a plus that is the only change is a guess", in: goConst,
			edits:  []Edit{{Op: OpReplace, Start: "@3", Text: "+const n = 32"}},
			refuse: []string{`the text is one line starting with "+"`, "    ++const n = 32", "    +const n = 32"},
			asSent: strings.Replace(goConst, "const n = 32", "+const n = 32", 1)},
		{name: "a plus line with another first word than the replaced line is a guess", in: goConst,
			edits:  []Edit{{Op: OpReplace, Start: "@3", Text: "+var n = 33"}},
			refuse: []string{`the text is one line starting with "+"`},
			asSent: strings.Replace(goConst, "const n = 32", "+var n = 33", 1)},
		{name: "a plus line before a number is a guess", in: "# Phones\n\n1 555 0199\n",
			edits:  []Edit{{Op: OpReplace, Start: "@3", Text: "+1 555 0100"}},
			refuse: []string{`the text is one line starting with "+"`, "    ++1 555 0100", "    +1 555 0100"},
			asSent: "# Phones\n\n+1 555 0100\n"},
		{name: "a plus line of the replaced line's shape among lines that start as it does is stripped", in: smtpReply,
			edits: []Edit{{Op: OpReplace, Start: "@2", Text: "+251 SMTPUTF8"}},
			want:  strings.Replace(smtpReply, "250 SMTPUTF8", "251 SMTPUTF8", 1), kinds: []RepairKind{RepairDiffMarkersStripped}, lines: []int{2},
			asSent: strings.Replace(smtpReply, "250 SMTPUTF8", "+251 SMTPUTF8", 1)},
		{name: "the same plus line with a plus line farther than twenty lines away is stripped", in: smtpReply + strings.Repeat("\n", 19) + "+NeMNAdZn3grwXTdcD3VBVHs\n",
			edits: []Edit{{Op: OpReplace, Start: "@2", Text: "+251 SMTPUTF8"}},
			want:  strings.Replace(smtpReply, "250 SMTPUTF8", "251 SMTPUTF8", 1) + strings.Repeat("\n", 19) + "+NeMNAdZn3grwXTdcD3VBVHs\n", kinds: []RepairKind{RepairDiffMarkersStripped},
			asSent: strings.Replace(smtpReply, "250 SMTPUTF8", "+251 SMTPUTF8", 1) + strings.Repeat("\n", 19) + "+NeMNAdZn3grwXTdcD3VBVHs\n"},
		{name: "the same plus line with a plus line twenty lines away is a guess", in: smtpReply + strings.Repeat("\n", 18) + "+NeMNAdZn3grwXTdcD3VBVHs\n",
			edits:  []Edit{{Op: OpReplace, Start: "@2", Text: "+251 SMTPUTF8"}},
			refuse: []string{`this file has lines that start with "+" near it`},
			asSent: strings.Replace(smtpReply, "250 SMTPUTF8", "+251 SMTPUTF8", 1) + strings.Repeat("\n", 18) + "+NeMNAdZn3grwXTdcD3VBVHs\n"},
		{name: "a plus line of a phone list with numbers written with plus farther than twenty lines away is a guess", in: "+44 20 7946 0958\n" + strings.Repeat("\n", 20) + "1 555 0100\n1 555 0101\n",
			edits:  []Edit{{Op: OpReplace, Start: "@23", Text: "+1 555 0199"}},
			refuse: []string{`this file has lines that start with "+" and go on as the text's do`, "    ++1 555 0199", "    +1 555 0199"},
			asSent: "+44 20 7946 0958\n" + strings.Repeat("\n", 20) + "1 555 0100\n+1 555 0199\n"},
		{name: "plus bullets in a file with plus bullets farther than twenty lines away are a guess", in: list + strings.Repeat("\n", 20) + "TODO\n",
			edits:  []Edit{{Op: OpReplace, Start: "@27", Text: "+ alpha\n+ beta"}},
			refuse: []string{`this file has lines that start with "+" and go on as the text's do`, "    ++ alpha", "    + alpha"},
			asSent: list + strings.Repeat("\n", 20) + "+ alpha\n+ beta\n"},
		{name: "a plus line before a context line of a diff's hunk far from its plus lines is a guess", in: longHunk,
			edits:  []Edit{{Op: OpInsertBefore, Start: "@27", Text: "+    y = 2"}},
			refuse: []string{`the edit is in a diff's hunk`, "    ++    y = 2", "    +    y = 2"},
			asSent: strings.Replace(longHunk, "     return 0", "+    y = 2\n     return 0", 1)},
		{name: "plus lines replacing a context line of a diff's hunk far from its plus lines are a guess", in: longHunk,
			edits:  []Edit{{Op: OpReplace, Start: "@27", Text: "+    y = 2\n+    return y"}},
			refuse: []string{`the edit is in a diff's hunk`},
			asSent: strings.Replace(longHunk, "     return 0", "+    y = 2\n+    return y", 1)},
		{name: "a plus line of another shape than the replaced line is a guess", in: smtpReply,
			edits:  []Edit{{Op: OpReplace, Start: "@2", Text: "+251-SMTPUTF8"}},
			refuse: []string{`the text is one line starting with "+"`, "    ++251-SMTPUTF8", "    +251-SMTPUTF8"},
			asSent: strings.Replace(smtpReply, "250 SMTPUTF8", "+251-SMTPUTF8", 1)},
		{name: "a plus line of the replaced line's shape among lines that start otherwise is a guess", in: "From: a\n250 SMTPUTF8\nTo: b\n",
			edits:  []Edit{{Op: OpReplace, Start: "@2", Text: "+251 SMTPUTF8"}},
			refuse: []string{`the text is one line starting with "+"`},
			asSent: "From: a\n+251 SMTPUTF8\nTo: b\n"},
		{name: "a plus line of the replaced line's shape among lines at another indentation is a guess", in: "\t250-SIZE 35651584\n250 SMTPUTF8\n\t250 Sender OK\n",
			edits:  []Edit{{Op: OpReplace, Start: "@2", Text: "+251 SMTPUTF8"}},
			refuse: []string{`the text is one line starting with "+"`},
			asSent: "\t250-SIZE 35651584\n+251 SMTPUTF8\n\t250 Sender OK\n"},
		// The rule reads the lines, not the writer's mind: a number made
		// international as it changes, among numbers without "+", has the
		// shape of a marked line (README, DIFF_MARKERS_STRIPPED).
		{name: "a plus line of a phone number's shape among numbers without plus is stripped", in: "44 20 7946 0000\n44 20 7946 0002\n",
			edits: []Edit{{Op: OpReplace, Start: "@1", Text: "+44 20 7946 0001"}},
			want:  "44 20 7946 0001\n44 20 7946 0002\n", kinds: []RepairKind{RepairDiffMarkersStripped},
			asSent: "+44 20 7946 0001\n44 20 7946 0002\n"},
		{name: "a plus line of one number among numbers is a guess", in: "171\n172\n174\n",
			edits:  []Edit{{Op: OpReplace, Start: "@2", Text: "+173"}},
			refuse: []string{`the text is one line starting with "+"`},
			asSent: "171\n+173\n174\n"},
		{name: "a plus line of the replaced line's shape replacing two lines is a guess", in: smtpReply,
			edits:  []Edit{{Op: OpReplace, Start: "@2", End: "@3", Text: "+251 SMTPUTF8"}},
			refuse: []string{`the text is one line starting with "+"`},
			asSent: "250-SIZE 35651584\n+251 SMTPUTF8\n"},
		{name: "a plus line shaped as the replaced line in a file with a base64 line starting with plus is a guess", in: pemKey,
			edits:  []Edit{{Op: OpReplace, Start: "@2", Text: "+DEK-Info: AES-129-CBC,D4492E"}},
			refuse: []string{`this file has lines that start with "+" near it`, "    ++DEK-Info: AES-129-CBC,D4492E", "    +DEK-Info: AES-129-CBC,D4492E"},
			asSent: strings.Replace(pemKey, "DEK-Info: AES-128-CBC", "+DEK-Info: AES-129-CBC", 1)},
		{name: "the same plus line where no line of the file starts with plus is stripped", in: strings.Replace(pemKey, "+NeMN", "NeMN", 1),
			edits: []Edit{{Op: OpReplace, Start: "@2", Text: "+DEK-Info: AES-129-CBC,D4492E"}},
			want:  strings.Replace(strings.Replace(pemKey, "+NeMN", "NeMN", 1), "AES-128", "AES-129", 1), kinds: []RepairKind{RepairDiffMarkersStripped},
			asSent: strings.Replace(strings.Replace(pemKey, "+NeMN", "NeMN", 1), "DEK-Info: AES-128-CBC", "+DEK-Info: AES-129-CBC", 1)},
		{name: "a plus line with a space after it is a guess", in: "# List\n\nitem one\n",
			edits:  []Edit{{Op: OpReplace, Start: "@3", Text: "+ item two"}},
			refuse: []string{`the text is one line starting with "+"`},
			asSent: "# List\n\n+ item two\n"},
		{name: "a plus line of the replaced line's shape in a file with plus lines is a guess", in: "+ x\n\n\n\nconst n = 1\n",
			edits:  []Edit{{Op: OpReplace, Start: "@5", Text: "+const n = 2"}},
			refuse: []string{`this file has lines that start with "+"`},
			asSent: "+ x\n\n\n\n+const n = 2\n"},
		{name: "one plus line inserted at column 0 is a guess", in: goConst,
			edits:  []Edit{{Op: OpInsertAfter, Start: "@3", Text: "+const m = 1"}},
			refuse: []string{`the text is one line starting with "+"`},
			asSent: strings.Replace(goConst, "const n = 32\n", "const n = 32\n+const m = 1\n", 1)},
		{name: "minus lines that are not the replaced lines are no diff of them", in: goSrc,
			edits:  []Edit{{Op: OpReplace, Start: "@5", Text: "-\t\tz()\n+\t\tb()"}},
			refuse: []string{`its "-" line is not a line of the range`, "    +-\t\tz()", "    ++\t\tb()", "     4:", "     6:"},
			asSent: strings.Replace(goSrc, "\t\ta()", "-\t\tz()\n+\t\tb()", 1)},
	})
}

// goConst is a Go file with a constant at column 0:
//
//	1 package main
//	2
//	3 const n = 32
//	4
//	5 func f() {}
const goConst = "package main\n\nconst n = 32\n\nfunc f() {}\n"

// smtpReply is an SMTP server's reply, as one of Go's tests (net/smtp)
// has it in a string.
const smtpReply = "250-SIZE 35651584\n250 SMTPUTF8\n250 Sender OK\n"

// longHunk is a patch of a Python file whose one hunk removes 22 lines:
// its last context line, line 27, is more than twenty lines from its only
// line that starts with "+", the "+++" header.
var longHunk = "--- a/f.py\n+++ b/f.py\n@@ -1,24 +1,2 @@\n def f():\n" + strings.Repeat("-    x = 1\n", 22) + "     return 0\n"

// pemKey is an encrypted PEM key whose base64 has a line that starts with
// "+", as one of them does in one of Go's tests (net/smtp).
const pemKey = "-----BEGIN RSA PRIVATE KEY-----\nDEK-Info: AES-128-CBC,D4492E\n\nMIIEowIBAAKCAQEA\n+NeMNAdZn3grwXTdcD3VBVHs\n-----END RSA PRIVATE KEY-----\n"

func TestRepairTabEscapes(t *testing.T) {
	runRepairCases(t, []repairCase{
		{name: "escaped tabs in a tab-indented file become tabs", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@4", End: "@6", Text: `\tif !x {` + "\n" + `\t\tb()` + "\n" + `\t}`}},
			want:  strings.Replace(goSrc, "\tif x {\n\t\ta()", "\tif !x {\n\t\tb()", 1), kinds: []RepairKind{RepairTabEscapesExpanded}, lines: []int{4},
			asSent: strings.Replace(goSrc, "\tif x {\n\t\ta()\n\t}", `\tif !x {`+"\n"+`\t\tb()`+"\n"+`\t}`, 1)},
		{name: "only the escapes at the start of a line are expanded", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", Text: `\t\tprint("\t")`}},
			want:  strings.Replace(goSrc, "\t\ta()", "\t\tprint(\"\\t\")", 1), kinds: []RepairKind{RepairTabEscapesExpanded},
			asSent: strings.Replace(goSrc, "\t\ta()", `\t\tprint("\t")`, 1)},
		{name: "a text with real indentation keeps its escapes", in: goSrc,
			edits:  []Edit{{Op: OpReplace, Start: "@5", Text: "\t\tb()\n" + `\tc()`}},
			want:   strings.Replace(goSrc, "\t\ta()", "\t\tb()\n"+`\tc()`, 1),
			asSent: strings.Replace(goSrc, "\t\ta()", "\t\tb()\n"+`\tc()`, 1)},
		{name: "escapes next to lines with escapes are content", in: "var s = `\n\\tone\n\\ttwo\n`\n\nfunc f() {\n\tg()\n}\n",
			edits:  []Edit{{Op: OpInsertAfter, Start: "@3", Text: `\tthree`}},
			want:   "var s = `\n\\tone\n\\ttwo\n\\tthree\n`\n\nfunc f() {\n\tg()\n}\n",
			asSent: "var s = `\n\\tone\n\\ttwo\n\\tthree\n`\n\nfunc f() {\n\tg()\n}\n"},
		{name: "escapes in a file indented with spaces are content", in: "x = [\n    1,\n]\ny = 2\n",
			edits:  []Edit{{Op: OpInsertAfter, Start: "@4", Text: `\tz`}},
			want:   "x = [\n    1,\n]\ny = 2\n\\tz\n",
			asSent: "x = [\n    1,\n]\ny = 2\n\\tz\n"},
	})
}

func TestRepairBoundaryEchoes(t *testing.T) {
	runRepairCases(t, []repairCase{
		{name: "a first line repeating the line before the range is dropped", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", Text: "\tif x {\n\t\tb()"}},
			want:  strings.Replace(goSrc, "\t\ta()", "\t\tb()", 1), kinds: []RepairKind{RepairBoundaryEchoDropped}, lines: []int{4},
			asSent: strings.Replace(goSrc, "\t\ta()", "\tif x {\n\t\tb()", 1)},
		{name: "a last line repeating the line after the range is dropped", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", End: "@6", Text: "\t\tb()\n\t}\n\treturn 1"}},
			want:  strings.Replace(goSrc, "\t\ta()", "\t\tb()", 1), kinds: []RepairKind{RepairBoundaryEchoDropped}, lines: []int{7},
			asSent: strings.Replace(goSrc, "\t\ta()\n\t}", "\t\tb()\n\t}\n\treturn 1", 1)},
		{name: "an echoed closing brace that unbalances the text is dropped", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", Text: "\t\tb()\n\t}"}},
			want:  strings.Replace(goSrc, "\t\ta()", "\t\tb()", 1), kinds: []RepairKind{RepairBoundaryEchoDropped}, lines: []int{6},
			asSent: strings.Replace(goSrc, "\t\ta()", "\t\tb()\n\t}", 1)},
		{name: "a closing brace that balances the text is meant", in: goSrc,
			edits:  []Edit{{Op: OpReplace, Start: "@5", Text: "\t\tif y {\n\t\t\tb()\n\t}"}},
			want:   strings.Replace(goSrc, "\t\ta()", "\t\tif y {\n\t\t\tb()\n\t}", 1),
			asSent: strings.Replace(goSrc, "\t\ta()", "\t\tif y {\n\t\t\tb()\n\t}", 1)},
		{name: "both ends of a copied block are dropped", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", Text: "\tif x {\n\t\tb()\n\t}"}},
			want:  strings.Replace(goSrc, "\t\ta()", "\t\tb()", 1), kinds: []RepairKind{RepairBoundaryEchoDropped, RepairBoundaryEchoDropped}, lines: []int{4, 6},
			asSent: strings.Replace(goSrc, "\t\ta()", "\tif x {\n\t\tb()\n\t}", 1)},
		{name: "an echo that lost its indentation is dropped", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", Text: "if x {\n\t\tb()"}},
			want:  strings.Replace(goSrc, "\t\ta()", "\t\tb()", 1), kinds: []RepairKind{RepairBoundaryEchoDropped},
			asSent: strings.Replace(goSrc, "\t\ta()", "if x {\n\t\tb()", 1)},
		{name: "a line indented differently is another line", in: "<div>\n  <div>\n    <p>a</p>\n  </div>\n</div>\n",
			edits:  []Edit{{Op: OpReplace, Start: "@3", End: "@4", Text: "    <p>b</p>\n  </div>\n  <div>\n  </div>"}},
			want:   "<div>\n  <div>\n    <p>b</p>\n  </div>\n  <div>\n  </div>\n</div>\n",
			asSent: "<div>\n  <div>\n    <p>b</p>\n  </div>\n  <div>\n  </div>\n</div>\n"},
		{name: "a blank line repeating a blank line is kept", in: "a\n\nb\nc\n",
			edits:  []Edit{{Op: OpReplace, Start: "@3", Text: "\nB"}},
			want:   "a\n\n\nB\nc\n",
			asSent: "a\n\n\nB\nc\n"},
		{name: "a first line equal to the replaced line is that line, kept", in: "x++\nx++\ny\n",
			edits:  []Edit{{Op: OpReplace, Start: "@2", End: "@3", Text: "x++\nz"}},
			want:   "x++\nx++\nz\n",
			asSent: "x++\nx++\nz\n"},
		{name: "a text that is only the repeated line is meant", in: goSrc,
			edits:  []Edit{{Op: OpReplace, Start: "@5", Text: "\tif x {"}},
			want:   strings.Replace(goSrc, "\t\ta()", "\tif x {", 1),
			asSent: strings.Replace(goSrc, "\t\ta()", "\tif x {", 1)},
		{name: "a closing brace neither reading balances is a guess", in: goSrc,
			edits:  []Edit{{Op: OpReplace, Start: "@7", Text: "\treturn 2\n}\n}"}},
			refuse: []string{`its last line "}" repeats line 8, just after the range, and its brackets do not tell`, "keeping the repeated line:", "dropping it:", "     6:", "    +}", "     8:"},
			asSent: strings.Replace(goSrc, "\treturn 1\n}", "\treturn 2\n}\n}\n}", 1)},
		{name: "a repeated statement in a text no longer than its range is a guess", in: "a()\nb()\nc()\nd()\n",
			edits:  []Edit{{Op: OpReplace, Start: "@2", End: "@3", Text: "a()\nx()"}},
			refuse: []string{`its first line "a()" repeats line 1, just before the range, and the text is no longer than the range`, "     1:", "    +a()", "    +x()", "     4:"},
			asSent: "a()\na()\nx()\nd()\n"},
		{name: "a first line repeating both the line before and the replaced line is a guess", in: "a()\na()\nc()\n",
			edits:  []Edit{{Op: OpReplace, Start: "@2", Text: "a()\nb()"}},
			refuse: []string{`its first line "a()" repeats both line 1, just before the range, and line 2`, "keeping the repeated line:", "dropping it:"},
			asSent: "a()\na()\nb()\nc()\n"},
		{name: "a last line repeating both the line after and the replaced line is a guess", in: "a()\nc()\nc()\n",
			edits:  []Edit{{Op: OpReplace, Start: "@2", Text: "b()\nc()"}},
			refuse: []string{`its last line "c()" repeats both line 3, just after the range, and line 2`},
			asSent: "a()\nb()\nc()\nc()\n"},
		{name: "a comment's close echoed before the range is dropped", in: tsDoc,
			edits: []Edit{{Op: OpReplace, Start: "@5", Text: "     */\n    readonly version: 2;"}},
			want:  strings.Replace(tsDoc, "version: 1", "version: 2", 1), kinds: []RepairKind{RepairBoundaryEchoDropped}, lines: []int{4},
			asSent: strings.Replace(tsDoc, "    readonly version: 1;", "     */\n    readonly version: 2;", 1)},
		{name: "a comment's close echoed after the range is dropped", in: tsDoc,
			edits: []Edit{{Op: OpReplace, Start: "@2", End: "@3", Text: "    /**\n     * The version, from 1.\n     */"}},
			want:  strings.Replace(tsDoc, "The version.", "The version, from 1.", 1), kinds: []RepairKind{RepairBoundaryEchoDropped}, lines: []int{4},
			asSent: strings.Replace(tsDoc, "     * The version.", "     * The version, from 1.\n     */", 1)},
		{name: "a comment's opening echoed after the range is dropped", in: tsDoc,
			edits: []Edit{{Op: OpReplace, Start: "@5", Text: "    readonly version: 2;\n    /**"}},
			want:  strings.Replace(tsDoc, "version: 1", "version: 2", 1), kinds: []RepairKind{RepairBoundaryEchoDropped}, lines: []int{6},
			asSent: strings.Replace(tsDoc, "    readonly version: 1;", "    readonly version: 2;\n    /**", 1)},
		{name: "a comment's close that closes a comment the text opens is meant", in: tsDoc,
			edits:  []Edit{{Op: OpReplace, Start: "@5", Text: "     */\n    /* old:"}},
			want:   strings.Replace(tsDoc, "    readonly version: 1;", "     */\n    /* old:", 1),
			asSent: strings.Replace(tsDoc, "    readonly version: 1;", "     */\n    /* old:", 1)},
		{name: "a tag's close echoed before the range is dropped", in: jsx,
			edits: []Edit{{Op: OpReplace, Start: "@6", Text: "    />\n    <p>y</p>"}},
			want:  strings.Replace(jsx, "<p>x</p>", "<p>y</p>", 1), kinds: []RepairKind{RepairBoundaryEchoDropped}, lines: []int{5},
			asSent: strings.Replace(jsx, "    <p>x</p>", "    />\n    <p>y</p>", 1)},
		{name: "a tag's close that closes a tag the text opens is meant", in: jsx,
			edits:  []Edit{{Op: OpReplace, Start: "@6", Text: "    />\n    <Bar"}},
			want:   strings.Replace(jsx, "    <p>x</p>", "    />\n    <Bar", 1),
			asSent: strings.Replace(jsx, "    <p>x</p>", "    />\n    <Bar", 1)},
		{name: "a text of the two lines around its one line is a guess", in: "  | \"852\"\n  | \"855\"\n  | \"856\"\n",
			edits:  []Edit{{Op: OpReplace, Start: "@2", Text: "  | \"852\"\n  | \"856\""}},
			refuse: []string{"every line of the text repeats a line beside the range (lines 1 and 3)", "dropping the first line, repeating line 1:", "dropping the last line, repeating line 3:"},
			asSent: "  | \"852\"\n  | \"852\"\n  | \"856\"\n  | \"856\"\n"},
		{name: "a repeated line of punctuation is a guess", in: "a: 1\n---\nb: 2\n---\nc: 3\n",
			edits:  []Edit{{Op: OpReplace, Start: "@3", Text: "b: 3\n---"}},
			refuse: []string{`its last line "---" repeats line 4`},
			asSent: "a: 1\n---\nb: 3\n---\n---\nc: 3\n"},
	})
}

// tsDoc is a TypeScript interface with doc comments:
//
//	1 interface A {
//	2     /**
//	3      * The version.
//	4      */
//	5     readonly version: 1;
//	6     /**
//	7      * The name.
//	8      */
//	9     readonly name: string;
//	10 }
const tsDoc = "interface A {\n    /**\n     * The version.\n     */\n    readonly version: 1;\n    /**\n     * The name.\n     */\n    readonly name: string;\n}\n"

// jsx is a JSX element with a multi-line self-closing tag:
//
//	1 return (
//	2   <div>
//	3     <Foo
//	4       a={1}
//	5     />
//	6     <p>x</p>
//	7   </div>
//	8 );
const jsx = "return (\n  <div>\n    <Foo\n      a={1}\n    />\n    <p>x</p>\n  </div>\n);\n"

func TestRepairAnchorEchoes(t *testing.T) {
	runRepairCases(t, []repairCase{
		{name: "insertAfter whose first line is the anchor drops it", in: goSrc,
			edits: []Edit{{Op: OpInsertAfter, Start: "@5", Text: "\t\ta()\n\t\tb()"}},
			want:  strings.Replace(goSrc, "\t\ta()", "\t\ta()\n\t\tb()", 1), kinds: []RepairKind{RepairAnchorEchoDropped}, lines: []int{5},
			asSent: strings.Replace(goSrc, "\t\ta()", "\t\ta()\n\t\ta()\n\t\tb()", 1)},
		{name: "insertBefore whose last line is the anchor drops it", in: goSrc,
			edits: []Edit{{Op: OpInsertBefore, Start: "@7", Text: "\tlog()\n\treturn 1"}},
			want:  strings.Replace(goSrc, "\treturn 1", "\tlog()\n\treturn 1", 1), kinds: []RepairKind{RepairAnchorEchoDropped}, lines: []int{7},
			asSent: strings.Replace(goSrc, "\treturn 1", "\tlog()\n\treturn 1\n\treturn 1", 1)},
		{name: "insertAfter a closing brace that repeats it unbalanced drops it", in: goSrc,
			edits: []Edit{{Op: OpInsertAfter, Start: "@8", Text: "}\n\nfunc g() {}"}},
			want:  goSrc + "\nfunc g() {}\n", kinds: []RepairKind{RepairAnchorEchoDropped},
			asSent: goSrc + "}\n\nfunc g() {}\n"},
		{name: "insertAfter a brace with a balanced text keeps it", in: "x := []int{\n}\n",
			edits:  []Edit{{Op: OpInsertAfter, Start: "@1", Text: "x := []int{\n\t1,\n}"}},
			want:   "x := []int{\nx := []int{\n\t1,\n}\n}\n",
			asSent: "x := []int{\nx := []int{\n\t1,\n}\n}\n"},
		{name: "a one-line insert equal to its anchor duplicates the line", in: goSrc,
			edits:  []Edit{{Op: OpInsertAfter, Start: "@5", Text: "\t\ta()"}},
			want:   strings.Replace(goSrc, "\t\ta()", "\t\ta()\n\t\ta()", 1),
			asSent: strings.Replace(goSrc, "\t\ta()", "\t\ta()\n\t\ta()", 1)},
		{name: "insertAfter does not look at the line after the anchor", in: goSrc,
			edits:  []Edit{{Op: OpInsertAfter, Start: "@5", Text: "\t\tb()\n\t}"}},
			refuse: nil,
			want:   strings.Replace(goSrc, "\t\ta()", "\t\ta()\n\t\tb()\n\t}", 1),
			asSent: strings.Replace(goSrc, "\t\ta()", "\t\ta()\n\t\tb()\n\t}", 1)},
		{name: "a blank anchor is never echoed", in: "a\n\nb\n",
			edits:  []Edit{{Op: OpInsertAfter, Start: "@2", Text: "\nc"}},
			want:   "a\n\n\nc\nb\n",
			asSent: "a\n\n\nc\nb\n"},
	})
}

func TestRepairIndentation(t *testing.T) {
	const py = "def f():\n    if x:\n        y = 1\n    return y\n\ndef g():\n    pass\n"
	runRepairCases(t, []repairCase{
		{name: "a line that lost its indentation gets it back", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@7", Text: "return 2"}},
			want:  strings.Replace(goSrc, "\treturn 1", "\treturn 2", 1), kinds: []RepairKind{RepairIndentRestored}, lines: []int{7},
			asSent: strings.Replace(goSrc, "\treturn 1", "return 2", 1)},
		{name: "flush-left lines replacing as many lines get theirs line for line", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", End: "@7", Text: "b()\n}\nreturn 2"}},
			want:  strings.Replace(goSrc, "\t\ta()\n\t}\n\treturn 1", "\t\tb()\n\t}\n\treturn 2", 1), kinds: []RepairKind{RepairIndentRestored}, lines: []int{5},
			asSent: strings.Replace(goSrc, "\t\ta()\n\t}\n\treturn 1", "b()\n}\nreturn 2", 1)},
		{name: "every line at column 0 gets the first replaced line's indentation when the count differs", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", End: "@7", Text: "b()\nc()\n}\nreturn 2"}},
			want:  strings.Replace(goSrc, "\t\ta()\n\t}\n\treturn 1", "\t\tb()\n\t\tc()\n\t\t}\n\t\treturn 2", 1), kinds: []RepairKind{RepairIndentRestored}, lines: []int{5},
			asSent: strings.Replace(goSrc, "\t\ta()\n\t}\n\treturn 1", "b()\nc()\n}\nreturn 2", 1)},
		{name: "a dedented block keeps its relative indentation", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@4", End: "@6", Text: "if !x {\n\tb()\n}"}},
			want:  strings.Replace(goSrc, "\tif x {\n\t\ta()", "\tif !x {\n\t\tb()", 1), kinds: []RepairKind{RepairIndentRestored}, lines: []int{4},
			asSent: strings.Replace(goSrc, "\tif x {\n\t\ta()\n\t}", "if !x {\n\tb()\n}", 1)},
		{name: "a dedented Python block inside a function gets its indentation back", in: py,
			edits: []Edit{{Op: OpReplace, Start: "@2", End: "@3", Text: "if x:\n    y = 2"}},
			want:  strings.Replace(py, "y = 1", "y = 2", 1), kinds: []RepairKind{RepairIndentRestored},
			asSent: strings.Replace(py, "    if x:\n        y = 1", "if x:\n    y = 2", 1)},
		{name: "a Python block dedented to the top level where its block ends is a guess", in: py,
			edits:  []Edit{{Op: OpReplace, Start: "@4", Text: "if y:\n    print(y)"}},
			refuse: []string{"the range ends its block", "as sent:", "with the indentation restored:", "    +if y:", "    +    if y:", "     3:", "     5:"},
			asSent: strings.Replace(py, "    return y", "if y:\n    print(y)", 1)},
		{name: "nested lines indented with other characters than the file's are a guess", in: goSrc,
			edits:  []Edit{{Op: OpReplace, Start: "@4", End: "@6", Text: "if !x {\n    b()\n}"}},
			refuse: []string{"other indentation characters"},
			asSent: strings.Replace(goSrc, "\tif x {\n\t\ta()\n\t}", "if !x {\n    b()\n}", 1)},
		{name: "a Python dedent to a shallower level is applied as sent", in: py,
			edits:  []Edit{{Op: OpReplace, Start: "@3", Text: "    y = 1"}},
			want:   strings.Replace(py, "        y = 1", "    y = 1", 1),
			asSent: strings.Replace(py, "        y = 1", "    y = 1", 1)},
		{name: "replaced lines partly at column 0 leave the text as sent", in: py,
			edits:  []Edit{{Op: OpReplace, Start: "@4", End: "@6", Text: "return 0\n\nclass G:"}},
			want:   strings.Replace(py, "    return y\n\ndef g():", "return 0\n\nclass G:", 1),
			asSent: strings.Replace(py, "    return y\n\ndef g():", "return 0\n\nclass G:", 1)},
		{name: "a text that only changes the indentation is meant", in: goSrc,
			edits:  []Edit{{Op: OpReplace, Start: "@6", Text: "}"}},
			want:   strings.Replace(goSrc, "\t}\n\treturn", "}\n\treturn", 1),
			asSent: strings.Replace(goSrc, "\t}\n\treturn", "}\n\treturn", 1)},
		{name: "blank lines of the text stay blank", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@7", Text: "log()\n\nreturn 2"}},
			want:  strings.Replace(goSrc, "\treturn 1", "\tlog()\n\n\treturn 2", 1), kinds: []RepairKind{RepairIndentRestored},
			asSent: strings.Replace(goSrc, "\treturn 1", "log()\n\nreturn 2", 1)},
		{name: "a block that lost its indentation but kept its nesting gets it back, first line indented", in: goSrc,
			edits: []Edit{{Op: OpReplace, Start: "@5", End: "@7", Text: "\tb()\n}\nreturn 2"}},
			want:  strings.Replace(goSrc, "\t\ta()\n\t}\n\treturn 1", "\t\tb()\n\t}\n\treturn 2", 1), kinds: []RepairKind{RepairIndentRestored}, lines: []int{5},
			asSent: strings.Replace(goSrc, "\t\ta()\n\t}\n\treturn 1", "\tb()\n}\nreturn 2", 1)},
		{name: "a shifted block where the range ends its block is a guess", in: pyEnd,
			edits:  []Edit{{Op: OpReplace, Start: "@3", End: "@4", Text: "    y = 3\nz = 2"}},
			refuse: []string{`indented "    " less than the line it replaces (lines 3-4)`, "the range ends its block", "as sent:", "with the indentation restored:", "    +        y = 3"},
			asSent: strings.Replace(pyEnd, "        y = 1\n    z = 2", "    y = 3\nz = 2", 1)},
		{name: "lines shifted by different amounts are applied as sent", in: goSrc,
			edits:  []Edit{{Op: OpReplace, Start: "@5", End: "@7", Text: "\tb()\n}\n\treturn 2"}},
			want:   strings.Replace(goSrc, "\t\ta()\n\t}\n\treturn 1", "\tb()\n}\n\treturn 2", 1),
			asSent: strings.Replace(goSrc, "\t\ta()\n\t}\n\treturn 1", "\tb()\n}\n\treturn 2", 1)},
		{name: "one line dedented with a change is applied as sent", in: pyEnd,
			edits:  []Edit{{Op: OpReplace, Start: "@3", Text: "    y = 2"}},
			want:   strings.Replace(pyEnd, "        y = 1", "    y = 2", 1),
			asSent: strings.Replace(pyEnd, "        y = 1", "    y = 2", 1)},
		{name: "a blank line replaced by a line at column 0 gets the indentation around it", in: goBlank,
			edits: []Edit{{Op: OpReplace, Start: "@3", Text: "log()"}},
			want:  strings.Replace(goBlank, "\ta()\n\n", "\ta()\n\tlog()\n", 1), kinds: []RepairKind{RepairIndentRestored}, lines: []int{3},
			asSent: strings.Replace(goBlank, "\ta()\n\n", "\ta()\nlog()\n", 1)},
		{name: "blank lines replaced by a nested text keep its nesting", in: goBlank,
			edits: []Edit{{Op: OpReplace, Start: "@3", Text: "if x {\n\tlog()\n}"}},
			want:  strings.Replace(goBlank, "\ta()\n\n", "\ta()\n\tif x {\n\t\tlog()\n\t}\n", 1), kinds: []RepairKind{RepairIndentRestored},
			asSent: strings.Replace(goBlank, "\ta()\n\n", "\ta()\nif x {\n\tlog()\n}\n", 1)},
		{name: "a blank line after an opening brace takes the deeper line's indentation", in: "func f() {\n\n\ta()\n}\n",
			edits: []Edit{{Op: OpReplace, Start: "@2", Text: "log()"}},
			want:  "func f() {\n\tlog()\n\ta()\n}\n", kinds: []RepairKind{RepairIndentRestored},
			asSent: "func f() {\nlog()\n\ta()\n}\n"},
		{name: "a blank line before a closing brace takes the line before's indentation", in: "func f() {\n\ta()\n\n}\n",
			edits: []Edit{{Op: OpReplace, Start: "@3", Text: "log()"}},
			want:  "func f() {\n\ta()\n\tlog()\n}\n", kinds: []RepairKind{RepairIndentRestored},
			asSent: "func f() {\n\ta()\nlog()\n}\n"},
		{name: "a blank line between lines indented differently is a guess", in: pyBlank,
			edits:  []Edit{{Op: OpReplace, Start: "@4", Text: "print(y)"}},
			refuse: []string{`the lines around them are indented differently (line 3 with "        ", line 5 with "    ")`, "as sent:", "indented as line 3:", "indented as line 5:", "    +        print(y)", "    +    print(y)"},
			asSent: strings.Replace(pyBlank, "\n\n    return", "\nprint(y)\n    return", 1)},
		{name: "a blank line next to a line at column 0 leaves the text as sent", in: py,
			edits:  []Edit{{Op: OpReplace, Start: "@5", Text: "x = 1"}},
			want:   strings.Replace(py, "\n\ndef g", "\nx = 1\ndef g", 1),
			asSent: strings.Replace(py, "\n\ndef g", "\nx = 1\ndef g", 1)},
		{name: "a blank line between tab-indented lines replaced by space-indented lines is a guess", in: goBlank,
			edits:  []Edit{{Op: OpReplace, Start: "@3", Text: "if x {\n    log()\n}"}},
			refuse: []string{"other indentation characters"},
			asSent: strings.Replace(goBlank, "\ta()\n\n", "\ta()\nif x {\n    log()\n}\n", 1)},
		{name: "an insert at column 0 after an indented line is meant", in: py,
			edits:  []Edit{{Op: OpInsertAfter, Start: "@4", Text: "\nx = f()"}},
			want:   strings.Replace(py, "    return y\n", "    return y\n\nx = f()\n", 1),
			asSent: strings.Replace(py, "    return y\n", "    return y\n\nx = f()\n", 1)},
	})
}

// goBlank is a Go function with a blank line between two statements:
//
//	1 func f() {
//	2 	a()
//	3
//	4 	b()
//	5 }
const goBlank = "func f() {\n\ta()\n\n\tb()\n}\n"

// pyEnd is Python whose line 4 ends the function's block:
//
//	1 def f():
//	2     if x:
//	3         y = 1
//	4     z = 2
//	5
//	6 def g():
//	7     pass
const pyEnd = "def f():\n    if x:\n        y = 1\n    z = 2\n\ndef g():\n    pass\n"

// pyBlank is Python with a blank line between an inner block and the
// outer one:
//
//	1 def f():
//	2     if x:
//	3         y = 1
//	4
//	5     return y
const pyBlank = "def f():\n    if x:\n        y = 1\n\n    return y\n"

func TestRepairsCombine(t *testing.T) {
	runRepairCases(t, []repairCase{
		{name: "markers, an echo and lost indentation are all repaired", in: goSrc,
			edits:  []Edit{{Op: OpReplace, Start: "@7", Text: "+log()\n+return 2\n+}"}},
			want:   strings.Replace(goSrc, "\treturn 1", "\tlog()\n\treturn 2", 1),
			kinds:  []RepairKind{RepairDiffMarkersStripped, RepairBoundaryEchoDropped, RepairIndentRestored},
			lines:  []int{7, 8, 7},
			asSent: strings.Replace(goSrc, "\treturn 1\n}", "+log()\n+return 2\n+}\n}", 1)},
		{name: "pasted tags and escaped tabs are both repaired", in: goSrc,
			edits:  []Edit{{Op: OpReplace, Start: "@7", Text: `7:aa|\treturn 2`}},
			want:   strings.Replace(goSrc, "\treturn 1", "\treturn 2", 1),
			kinds:  []RepairKind{RepairPrefixStripped, RepairTabEscapesExpanded},
			asSent: strings.Replace(goSrc, "\treturn 1", `7:aa|\treturn 2`, 1)},
		{name: "each edit of a batch is repaired on its own", in: goSrc,
			edits: []Edit{
				{Op: OpReplace, Start: "@5", Text: "b()"},
				{Op: OpInsertAfter, Start: "@7", Text: "\treturn 1\n\t// unreachable"},
			},
			want:   strings.Replace(goSrc, "\t\ta()\n\t}\n\treturn 1", "\t\tb()\n\t}\n\treturn 1\n\t// unreachable", 1),
			kinds:  []RepairKind{RepairIndentRestored, RepairAnchorEchoDropped},
			asSent: strings.Replace(goSrc, "\t\ta()\n\t}\n\treturn 1", "b()\n\t}\n\treturn 1\n\treturn 1\n\t// unreachable", 1)},
	})
}

func TestRepairNoChangeSaysWhatWasRepaired(t *testing.T) {
	d := ParseDocument([]byte(goSrc))
	h := Hasher{}
	_, err := ApplyEdits(d, resolveEdits(d, h, []Edit{{Op: OpReplace, Start: "@7", Text: "+\treturn 1"}}), ApplyOptions{Hasher: h})
	var be *BatchError
	if !errors.As(err, &be) || be.Reason() != ReasonNoChange {
		t.Fatalf("error = %v, want NO_CHANGE", err)
	}
	if !strings.Contains(be.Error(), "DIFF_MARKERS_STRIPPED") || !strings.Contains(be.Error(), "strict") {
		t.Errorf("NO_CHANGE does not name the repair and strict:\n%s", be)
	}
}

func TestRepairsNeverRunOnBadRefs(t *testing.T) {
	d := ParseDocument([]byte(goSrc))
	h := Hasher{}
	_, err := ApplyEdits(d, resolveEdits(d, h, []Edit{{Op: OpReplace, Start: "!7", Text: "\treturn 2\n}\n}"}}), ApplyOptions{Hasher: h})
	var be *BatchError
	if !errors.As(err, &be) || be.Reason() != ReasonStaleRef || len(be.Problems) != 1 {
		t.Fatalf("error = %v, want only STALE_REF: the text is not judged against lines the model did not see", err)
	}
}

func TestRepairKindsAreDeclaredOnce(t *testing.T) {
	seen := map[RepairKind]bool{}
	for _, k := range RepairKinds {
		if seen[k] || k == "" || strings.ToUpper(string(k)) != string(k) {
			t.Errorf("kind %q is repeated, empty or not upper case", k)
		}
		seen[k] = true
	}
	if len(seen) != 6 {
		t.Errorf("%d kinds, want 6", len(seen))
	}
}
