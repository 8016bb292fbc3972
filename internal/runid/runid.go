// Package runid makes and checks run IDs: the one name of a run, which
// labels its namespaces and the nodes it changes, names its Lease and its
// machines, and tags its VMs. Every run ID, given by a user or made here,
// passes Check, so it fits wherever a run's name goes: a label value, a
// DNS label with a machine's prefix and number, a cloud tag.
//
// A run ID is made in one place, Begin, called where a run begins and
// nowhere else (docs/development.md lists those places, and a test holds
// the list to the code): a part of a run (its failed step's JUnit, its
// sweep, its suite binary) takes the run's ID and never makes one.
package runid

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"time"
)

// Max is the longest run ID: a machine's name, <prefix>-<run ID>-<n>,
// must still fit in a DNS label (63).
const Max = 20

var (
	pattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	// made is New's shape, and the 27-character one of earlier versions
	// (wc-<yyyymmdd>t<hhmmss>-<8 hex digits>), whose namespaces a sweep
	// still recognises.
	made = regexp.MustCompile(`^wc-([0-9]{12}-[0-9a-f]{4}|[0-9]{8}t[0-9]{6}-[0-9a-f]{8})$`)
)

// Check returns an error saying what is wrong with id and the fix, or nil
// for a run ID.
func Check(id string) error {
	if len(id) > Max || !pattern.MatchString(id) {
		return fmt.Errorf("run ID %q is not one: use 1 to %d lower-case letters, digits and inner hyphens, such as nightly-42", id, Max)
	}
	return nil
}

// Begin is the ID of a run that begins now: given (--run-id), when it
// passes Check, else the error naming the fix; a fresh one when given is
// empty.
func Begin(given string) (string, error) {
	if given == "" {
		return mint(), nil
	}
	if err := Check(given); err != nil {
		return "", err
	}
	return given, nil
}

// mint is a fresh run ID, wc-<UTC time, yymmddhhmmss>-<4 random hex
// digits>: 20 characters, in the order runs started.
func mint() string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return At(time.Now(), uint16(b[0])<<8|uint16(b[1]))
}

// At is the run ID Begin makes at t with the random part n.
func At(t time.Time, n uint16) string {
	return fmt.Sprintf("wc-%s-%04x", t.UTC().Format("060102150405"), n)
}

// Made says whether id has the shape of the run IDs the harness makes
// (Begin's, or earlier versions'), as opposed to one a user gave.
func Made(id string) bool { return made.MatchString(id) }
