package verdicts

import (
	"errors"
	"testing"

	"github.com/winconform/winconform/framework/ledger"
)

// CFG-03/04 are decided by reading the keys' files in the running
// container: each read back exactly (works), or the running container has
// no file for a key (limited): `probe cat` exits 1 with Go's *PathError,
// whose text on Windows is the system's message for ERROR_FILE_NOT_FOUND
// or ERROR_PATH_NOT_FOUND ("The system cannot find the file specified." /
// "... path specified.", Microsoft's System Error Codes 2 and 3). A pod
// that never started, or an exec that broke, decides nothing; a file that
// holds another value is a wrong answer, and fails the spec.
func TestConfigVolumeDecidedByReadingTheFiles(t *testing.T) {
	const mount = `C:\etc\secret-volume`
	ok := FileRead{Path: mount + `\username`, Want: "admin", Got: "admin", Exit: 0}
	o, err := ConfigVolume(errors.New("pod secret-volume-pod did not turn Ready (phase Pending): timed out waiting for the condition"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want(t, "the pod never started", o, ledger.Unobserved, "did not start")

	broken := FileRead{Path: mount + `\password`, Want: "1f2d1e2e67df", Err: errors.New("exec in ns/secret-volume-pod: error dialing backend: dial tcp 10.0.0.5:10250: i/o timeout"), Exit: -1}
	o, err = ConfigVolume(nil, mount, []FileRead{ok, broken})
	if err != nil {
		t.Fatal(err)
	}
	want(t, "the exec broke", o, ledger.Unobserved, "i/o timeout")

	missing := FileRead{Path: mount + `\password`, Want: "1f2d1e2e67df", Err: errors.New("command terminated with exit code 1"), Exit: 1,
		Stderr: `probe cat: open C:\etc\secret-volume\password: The system cannot find the file specified.` + "\n"}
	o, err = ConfigVolume(nil, mount, []FileRead{ok, missing})
	if err != nil {
		t.Fatal(err)
	}
	want(t, "the running container has no file for the key", o, ledger.Limited, "password")

	o, err = ConfigVolume(nil, mount, []FileRead{ok, {Path: mount + `\password`, Want: "1f2d1e2e67df", Got: "1f2d1e2e67df"}})
	if err != nil {
		t.Fatal(err)
	}
	want(t, "every key read back", o, ledger.Works, "2 keys")

	if _, err := ConfigVolume(nil, mount, []FileRead{{Path: mount + `\password`, Want: "1f2d1e2e67df", Got: "1f2d1e2e67df\r\n"}}); err == nil {
		t.Error("a file holding another value: no error, want the spec to fail on a wrong answer")
	}
}
