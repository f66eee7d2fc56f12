package httpapi

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// encoding/json matches an object's keys to fields without regard to case
// and lets the last of a key given twice win: "TEXT" fills text, and
// {"text": "a", "text": "b"} says b. A client's misspelt field would then
// work by accident, or a value it sent be dropped unseen. exactKeys refuses
// both before the body is decoded, so that a field is named as the API
// documents it, once.

// exactKeys checks the keys of the JSON value in body against type t.
func exactKeys(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	return checkValue(dec, t, "", 0)
}

// maxDepth is how deep objects and arrays may nest, as encoding/json
// allows.
const maxDepth = 10000

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkValue reads one value from dec, checking the keys of its objects
// against t (the Go type it decodes into; nil when unknown) at path.
func checkValue(dec *json.Decoder, t reflect.Type, path string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("exceeded max depth")
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)) {
		t = nil // decoded by its own rules
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := checkValue(dec, elem, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ]
		return err
	case json.Delim('{'):
		seen := make(map[string]bool)
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key := tok.(string)
			at := key
			if path != "" {
				at = path + "." + key
			}
			if seen[key] {
				return fmt.Errorf("field %q is given twice", at)
			}
			seen[key] = true
			var field reflect.Type
			if t != nil {
				switch t.Kind() {
				case reflect.Map:
					field = t.Elem()
				case reflect.Struct:
					named, ok, differs := fieldNamed(t, key)
					if differs != "" {
						return fmt.Errorf("field %q is spelt %q", at, differs)
					}
					if ok {
						field = named
					}
				}
			}
			if err := checkValue(dec, field, at, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // }
		return err
	}
	return nil
}

// fieldNamed returns the type of struct t's field whose JSON name is key
// (embedded structs' fields included), or, when none is but one's name
// differs from key in case alone, that name.
func fieldNamed(t reflect.Type, key string) (field reflect.Type, ok bool, differs string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			inner, found, folded := fieldNamed(ft, key)
			if found {
				return inner, true, ""
			}
			differs = cmp.Or(differs, folded)
			continue
		}
		if name == "" {
			name = f.Name
		}
		switch {
		case name == key:
			return f.Type, true, ""
		case strings.EqualFold(name, key):
			differs = cmp.Or(differs, name)
		}
	}
	return nil, false, differs
}
