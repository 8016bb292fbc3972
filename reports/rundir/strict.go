package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// decodeStrict decodes data into v as encoding/json would, but refuses
// what encoding/json takes silently: a key v has no field for (at any
// depth), and a key written twice in one object, also in another case.
// encoding/json matches keys to fields case-insensitively and keeps the
// last, so a record holding "State" and "state" would read as whichever
// came last while another reader took the first: the same bytes, two
// runs.
func decodeStrict(data []byte, v any) error {
	if err := checkKeys(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("more after the document")
	}
	return nil
}

// checkKeys refuses an object with a key written twice, also in another
// case, naming where.
func checkKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		switch d {
		case '{':
			seen := map[string]string{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key := kt.(string)
				folded := strings.ToLower(key)
				if first, dup := seen[folded]; dup {
					if first == key {
						return fmt.Errorf("%s: the key %q is written twice", orRoot(path), key)
					}
					return fmt.Errorf("%s: the keys %q and %q are one field to a JSON reader that ignores case (encoding/json keeps the last): one record, two readings", orRoot(path), first, key)
				}
				seen[folded] = key
				if err := walk(path + "." + key); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	return walk("")
}

func orRoot(path string) string {
	if path == "" {
		return "the document"
	}
	return strings.TrimPrefix(path, ".")
}
