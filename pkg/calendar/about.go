package calendar

import "encoding/json"

// The top-level "about" member describes a calendar for people and for
// conformance tests: where its rules come from, the years they were
// checked for and the known differences from the references. Parse checks
// its shape strictly but it has no meaning for the calendar: it is not
// kept, not in the canonical form and so not in the fingerprint.
//
//	"about": {
//	  "title": "England and Wales: bank holidays",
//	  "sources": ["Banking and Financial Dealings Act 1971", "https://www.gov.uk/bank-holidays"],
//	  "checked": [2000, 2040],
//	  "differences": [
//	    {"dates": ["2022-09-19"], "against": "date-holidays", "reason": "a one-off day by proclamation"}
//	  ]
//	}

// checkAbout checks the "about" member's shape.
func checkAbout(raw json.RawMessage, path string) error {
	members, err := objectMembers(raw, path)
	if err != nil {
		return err
	}
	for _, m := range members {
		mpath := joinPath(path, m.key)
		switch m.key {
		case "title":
			_, err = decodeString(m.val, mpath)
		case "sources":
			err = checkStrings(m.val, mpath)
		case "checked":
			var f ruleFields
			err = f.setYears(m.val, mpath)
		case "differences":
			err = checkDifferences(m.val, mpath)
		default:
			err = fieldError(mpath, "", `unknown field; want "title", "sources", "checked" or "differences"`)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkStrings checks a non-empty list of non-empty strings.
func checkStrings(raw json.RawMessage, path string) error {
	elems, err := arrayElems(raw, path)
	if err != nil {
		return err
	}
	if len(elems) == 0 {
		return fieldError(path, "", "want at least one")
	}
	for i, e := range elems {
		s, err := decodeString(e, indexPath(path, i))
		if err != nil {
			return err
		}
		if s == "" {
			return fieldError(indexPath(path, i), "", "must not be empty")
		}
	}
	return nil
}

// checkDifferences checks the list of known differences: each names its
// "dates", the reference it differs from ("against") and the "reason".
func checkDifferences(raw json.RawMessage, path string) error {
	elems, err := arrayElems(raw, path)
	if err != nil {
		return err
	}
	for i, e := range elems {
		epath := indexPath(path, i)
		members, err := objectMembers(e, epath)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, m := range members {
			mpath := joinPath(epath, m.key)
			switch m.key {
			case "dates":
				var f ruleFields
				err = f.setDates(m.val, mpath)
			case "against", "reason":
				var s string
				if s, err = decodeString(m.val, mpath); err == nil && s == "" {
					err = fieldError(mpath, "", "must not be empty")
				}
			default:
				err = fieldError(mpath, "", `unknown field; want "dates", "against" and "reason"`)
			}
			if err != nil {
				return err
			}
			seen[m.key] = true
		}
		for _, k := range []string{"dates", "against", "reason"} {
			if !seen[k] {
				return fieldError(joinPath(epath, k), "", "required in a difference")
			}
		}
	}
	return nil
}
