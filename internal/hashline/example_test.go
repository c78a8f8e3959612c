package hashline_test

import (
	"errors"
	"fmt"

	"github.com/hashline/hashline/internal/hashline"
)

func ExampleHasher_Sum() {
	var h hashline.Hasher // the zero value prints two hex digits
	fmt.Println(h.Sum("\treturn nil"))
	fmt.Println(h.Sum("return nil")) // whitespace does not count
	h4, _ := hashline.NewHasher(4)
	fmt.Println(h4.Sum("return nil"))
	// Output:
	// a7
	// a7
	// 75a7
}

func ExampleParseRef() {
	for _, s := range []string{"12:3f", " 12:3F ", "12:3f|\treturn nil", ">>> 7:0a|x", "12x"} {
		ref, err := hashline.ParseRef(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(ref)
	}
	// Output:
	// 12:3f
	// 12:3f
	// 12:3f
	// 7:0a
	// error: "12x" is not a line reference: missing ':'; expected LINE:HASH like "12:3f" copied from read output
}

func ExampleApplyEdits() {
	doc := hashline.ParseDocument([]byte("func f() {\n\treturn 1\n}\n"))
	var h hashline.Hasher
	fmt.Println(string(hashline.AppendTagged(nil, h, doc, 1, doc.Len(), 0)))

	// A model points at line 2 by the tag it read.
	res, err := hashline.ApplyEdits(doc, []hashline.Edit{
		{Op: hashline.OpReplace, Start: "2:" + h.Sum("\treturn 1"), Text: "\treturn 2\n"},
	}, hashline.ApplyOptions{Hasher: h, Context: 1, OldLabel: "a/f.go", NewLabel: "b/f.go"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.Diff)

	// Replaying the same edit now fails: line 2 is no longer what it was.
	_, err = hashline.ApplyEdits(res.Doc, []hashline.Edit{
		{Op: hashline.OpReplace, Start: "2:" + h.Sum("\treturn 1"), Text: "\treturn 3\n"},
	}, hashline.ApplyOptions{Hasher: h})
	var be *hashline.BatchError
	if errors.As(err, &be) {
		fmt.Println(be.Reason())
		fmt.Println(be)
	}
	// Output:
	// 1:0a|func f() {
	// 2:c4|	return 1
	// 3:18|}
	// --- a/f.go
	// +++ b/f.go
	// @@ -1,3 +1,3 @@
	//  func f() {
	// -	return 1
	// +	return 2
	//  }
	// STALE_REF
	// 1 line(s) changed since last read; use the updated refs below (>>> marks changed lines)
	//     1:0a|func f() {
	// >>> 2:7f|	return 2
	//     3:18|}
}
